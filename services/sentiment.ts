/** native-sentiment: sentiment, polarity score, confidence, emotion labels. Not runnable yet: it needs a text-analysis provider (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { textInput } from './inputs.js';

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
  inputSchema: textInput('Text to analyse.', 5000),
});
