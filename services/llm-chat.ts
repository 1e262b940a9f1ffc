/** native-llm-chat: general text completion. Not runnable yet: it needs an LLM provider (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { textInput } from './inputs.js';

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
  inputSchema: textInput('Prompt text.', 8000),
  timeoutMs: 30_000,
});
