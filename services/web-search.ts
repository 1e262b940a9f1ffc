/** native-web-search: top web results with title, URL, snippet, host, date. Not runnable yet: it needs a web-search provider (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { textInput } from './inputs.js';

/** native-web-search. */
export const webSearch = defineService({
  id: 'native-web-search',
  name: 'Web Search',
  category: 'search',
  priceBase: 800_000n,
  description: 'top web results with title, URL, snippet, host, date',
  tags: ['web', 'search', 'results', 'query', 'internet'],
  requestFormat: 'search query (up to 300 characters)',
  requestRequired: false,
  inputSchema: textInput('Search query.', 300),
});
