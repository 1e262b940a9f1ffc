/** native-sentiment: sentiment label, polarity score, confidence and emotion labels, per sentence and overall (services/text/analyse.ts: wink-nlp + the project's emotion lexicon). */
import { defineService } from './define.js';
import { textInput } from './inputs.js';
import { analyseSentiment } from './text/analyse.js';
import { textHealth } from './text/nlp.js';

/** native-sentiment. */
export const sentiment = defineService({
  id: 'native-sentiment',
  name: 'Sentiment Analysis',
  category: 'analytics',
  priceBase: 400_000n,
  description: 'sentiment, polarity score, confidence, emotion labels',
  tags: ['sentiment', 'polarity', 'emotion', 'nlp', 'text'],
  requestFormat: 'text (up to 5000 characters)',
  requestRequired: false,
  needsInput: true,
  inputSchema: textInput('Text to analyse.', 5000),
  run: async (_ctx, input) => analyseSentiment(input as string),
  health: textHealth,
});
