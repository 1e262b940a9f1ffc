/** native-llm-chat: a text completion of the prompt by the operator's OpenAI-compatible chat model (down until one is configured). */
import { defineService } from './define.js';
import { textInput } from './inputs.js';
import { callProvider, configured, inputAndProvidersReady, providersHealth } from './providers/index.js';
import type { ServiceContext } from './types.js';

/** Most tokens a completion may take. */
export const MAX_COMPLETION_TOKENS = 1024;
const TIMEOUT_MS = 30_000;

async function run(ctx: ServiceContext, input: unknown) {
  const prompt = String(input);
  const out = await callProvider(ctx, 'llm', (p) => configured(p, 'llm', 'LLM provider').complete([{ role: 'user', content: prompt }], { maxTokens: MAX_COMPLETION_TOKENS, signal: ctx.signal, timeoutMs: TIMEOUT_MS - 1000 }));
  return { text: out.text, model: out.model, finishReason: out.finishReason, usage: out.usage };
}

/** native-llm-chat. */
export const llmChat = defineService({
  id: 'native-llm-chat',
  name: 'LLM Chat',
  category: 'compute',
  priceBase: 1_200_000n,
  description: 'general text completion',
  tags: ['llm', 'chat', 'completion', 'ai', 'text', 'assistant'],
  requestFormat: 'prompt text (up to 8000 characters)',
  requestRequired: false,
  needsInput: true,
  inputSchema: textInput('Prompt text.', 8000),
  timeoutMs: TIMEOUT_MS,
  run,
  health: providersHealth('llm'),
  precheck: inputAndProvidersReady('the prompt text', 'llm'),
});
