/** native-keywords: keywords, named entities, topics. Not runnable yet: it needs a text-analysis provider (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { textInput } from './inputs.js';

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
  inputSchema: textInput('Text to analyse.', 5000),
});
