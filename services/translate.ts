/** native-translate: text into one of 40+ target languages by the operator's translation provider (an OpenAI-compatible chat model or LibreTranslate). */
import { defineService } from './define.js';
import { anyCase } from './inputs.js';
import { callProvider, configured, inputAndProvidersReady, providersHealth } from './providers/index.js';
import { TARGET_LANGUAGES } from './providers/translator.js';
import type { ServiceContext } from './types.js';

const TIMEOUT_MS = 30_000;
const CODES = Object.keys(TARGET_LANGUAGES);
const codeAlternation = anyCase(CODES).slice(2, -2);

/** Our spelling of a code the caller wrote in any case (`PT-br` → `pt-BR`). */
function canonical(code: string): string {
  return CODES.find((c) => c.toLowerCase() === code.toLowerCase()) ?? code;
}

async function run(ctx: ServiceContext, input: unknown) {
  const text = String(input);
  const bar = text.indexOf('|');
  const target = canonical(text.slice(0, bar).trim());
  const source = text.slice(bar + 1).trim();
  const out = await callProvider(ctx, 'translate', (p) => configured(p, 'translate', 'translation provider').translate(source, target, { signal: ctx.signal, timeoutMs: TIMEOUT_MS - 1000 }));
  return { target, targetLanguage: TARGET_LANGUAGES[target], translation: out.text, detectedSource: out.detectedSource, confidence: out.confidence, provider: out.provider, model: out.model, characters: source.length };
}

/** native-translate. */
export const translate = defineService({
  id: 'native-translate',
  name: 'Translate',
  category: 'compute',
  priceBase: 800_000n,
  description: 'translation into 20+ languages',
  tags: ['translate', 'translation', 'language', 'text', 'i18n'],
  requestFormat: `target language code, pipe, text, e.g. "de|Hello world"; codes: ${CODES.join(', ')}`,
  requestRequired: false,
  needsInput: true,
  inputSchema: { type: 'string', maxLength: 5020, pattern: `^\\s*(${codeAlternation})\\s*\\|\\s*\\S[\\s\\S]{0,4999}$`, description: 'Target language code, pipe, text: de|Hello world.' },
  timeoutMs: TIMEOUT_MS,
  run,
  health: providersHealth('translate'),
  precheck: inputAndProvidersReady('target language code, pipe, text (de|Hello world)', 'translate'),
});
