/** native-keywords: keywords and key phrases with scores, named and pattern entities, topics (services/text/analyse.ts: wink-nlp + compromise). */
import { defineService } from './define.js';
import { textInput } from './inputs.js';
import { analyseKeywords, warmTextEngines } from './text/analyse.js';
import { refuseUnservedLanguage, textHealth } from './text/nlp.js';
import { refuseInput } from './outbound/index.js';
import type { ServiceContext } from './types.js';

/** English only (the lexicons and model are English): another language is a 400 before payment. */
async function precheck(_ctx: ServiceContext, input: unknown): Promise<void> {
  await warmTextEngines();
  const why = await refuseUnservedLanguage(input as string, ['en'], 'native-keywords');
  if (why) throw refuseInput('language_not_served', why);
}

/** native-keywords. */
export const keywords = defineService({
  id: 'native-keywords',
  name: 'Keyword Extraction',
  category: 'analytics',
  priceBase: 400_000n,
  description: 'keywords, named entities, topics',
  tags: ['keywords', 'entities', 'topics', 'nlp', 'text'],
  requestFormat: 'English text (up to 5000 characters; other languages are refused)',
  requestRequired: false,
  needsInput: true,
  inputSchema: textInput('English text to analyse (other languages are refused with 400).', 5000),
  precheck,
  run: async (_ctx, input) => analyseKeywords(input as string),
  health: textHealth,
});
