/** native-summarize: TL;DR plus 3-5 key points. Not runnable yet: it needs an LLM provider (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { urlInput } from './inputs.js';

/** native-summarize. */
export const summarize = defineService({
  id: 'native-summarize',
  name: 'Summarize',
  category: 'compute',
  priceBase: 600_000n,
  description: 'TL;DR plus 3-5 key points',
  tags: ['summarize', 'summary', 'tldr', 'key-points', 'text'],
  requestFormat: 'text of at least 80 characters, or a URL',
  requestRequired: false,
  inputSchema: { anyOf: [urlInput('URL of the page to summarise.'), { type: 'string', minLength: 80, maxLength: 20_000, description: 'Text of at least 80 characters.' }] },
  timeoutMs: 30_000,
});
