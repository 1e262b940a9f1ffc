/** native-translate: translation into 20+ languages. Not runnable yet: it needs a translation provider (the node answers 503 service_unavailable). */
import { defineService } from './define.js';

/** native-translate. */
export const translate = defineService({
  id: 'native-translate',
  name: 'Translate',
  category: 'compute',
  priceBase: 800_000n,
  description: 'translation into 20+ languages',
  tags: ['translate', 'translation', 'language', 'text', 'i18n'],
  requestFormat: 'target language code, pipe, text, e.g. "de|Hello world"',
  requestRequired: false,
  inputSchema: { type: 'string', maxLength: 5020, pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})?\\s*\\|\\s*\\S[\\s\\S]{0,4999}$', description: 'Target language code, pipe, text: de|Hello world.' },
  timeoutMs: 30_000,
});
