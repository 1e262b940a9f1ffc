/** native-sentiment: sentiment label, polarity score, confidence and emotion labels, per sentence and overall (services/text/analyse.ts: wink-nlp + the project's emotion lexicon). */
import { defineService } from './define.js';
import { textInput } from './inputs.js';
import { analyseSentiment, warmTextEngines } from './text/analyse.js';
import { refuseUnservedLanguage, textHealth } from './text/nlp.js';
import { refuseInput } from './outbound/index.js';
import type { ServiceContext } from './types.js';

/** English only (the lexicons and model are English): another language is a 400 before payment. */
async function precheck(_ctx: ServiceContext, input: unknown): Promise<void> {
  await warmTextEngines();
  const why = await refuseUnservedLanguage(input as string, ['en'], 'native-sentiment');
  if (why) throw refuseInput('language_not_served', why);
}

/** native-sentiment. */
export const sentiment = defineService({
  id: 'native-sentiment',
  name: 'Sentiment Analysis',
  category: 'analytics',
  priceBase: 400_000n,
  description: 'sentiment, polarity score, confidence, emotion labels',
  tags: ['sentiment', 'polarity', 'emotion', 'nlp', 'text'],
  requestFormat: 'English text (up to 5000 characters; other languages are refused)',
  requestRequired: false,
  needsInput: true,
  inputSchema: textInput('English text to analyse (other languages are refused with 400).', 5000),
  precheck,
  run: async (_ctx, input) => analyseSentiment(input as string),
  health: textHealth,
});
