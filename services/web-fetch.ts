/** native-web-fetch: public URL to readable text with status, content-type, byte size. Not runnable yet: it needs the web-fetch provider (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { urlInput } from './inputs.js';

/** native-web-fetch. */
export const webFetch = defineService({
  id: 'native-web-fetch',
  name: 'Web Fetch',
  category: 'compute',
  priceBase: 500_000n,
  description: 'public URL to readable text with status, content-type, byte size',
  tags: ['web', 'fetch', 'url', 'http', 'text', 'scrape'],
  requestFormat: 'public http(s) URL',
  requestRequired: false,
  inputSchema: urlInput('Public http(s) URL to fetch.'),
});
