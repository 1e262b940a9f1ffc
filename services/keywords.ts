/** native-keywords: keywords and key phrases with scores, named and pattern entities, topics (services/text/analyse.ts: wink-nlp + compromise). */
import { defineService } from './define.js';
import { textInput } from './inputs.js';
import { analyseKeywords } from './text/analyse.js';
import { textHealth } from './text/nlp.js';

/** native-keywords. */
export const keywords = defineService({
  id: 'native-keywords',
  name: 'Keyword Extraction',
  category: 'analytics',
  priceBase: 400_000n,
  description: 'keywords, named entities, topics',
  tags: ['keywords', 'entities', 'topics', 'nlp', 'text'],
  requestFormat: 'text (up to 5000 characters)',
  requestRequired: false,
  needsInput: true,
  inputSchema: textInput('Text to analyse.', 5000),
  run: async (_ctx, input) => analyseKeywords(input as string),
  health: textHealth,
});
