/**
 * native-summarize: extractive TL;DR plus 3-5 key points of a text (`summarizeText`,
 * services/text/analyse.ts). A URL is refused before payment with "text only on this node" until
 * the outbound client fetches caller URLs; then the URL branch fetches the page's readable text
 * and hands it to the same `summarizeText`.
 */
import { defineService } from './define.js';
import { summarizeText } from './text/analyse.js';
import { textHealth } from './text/nlp.js';

/** native-summarize. */
export const summarize = defineService({
  id: 'native-summarize',
  name: 'Summarize',
  category: 'compute',
  priceBase: 600_000n,
  description: 'TL;DR plus 3-5 key points',
  tags: ['summarize', 'summary', 'tldr', 'key-points', 'text'],
  requestFormat: 'text of at least 80 characters (a URL: not on this node yet)',
  requestRequired: false,
  needsInput: true,
  inputSchema: { type: 'string', minLength: 80, maxLength: 20_000, 'x-not-url': true, description: 'Text of at least 80 characters (URLs are refused: text only on this node).' },
  run: async (_ctx, input) => summarizeText(input as string),
  health: textHealth,
});
