/** native-url-meta: title, meta description, Open Graph image, canonical link, site name. Not runnable yet: it needs the web-fetch provider (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { urlInput } from './inputs.js';

/** native-url-meta. */
export const urlMeta = defineService({
  id: 'native-url-meta',
  name: 'URL Metadata',
  category: 'compute',
  priceBase: 500_000n,
  description: 'title, meta description, Open Graph image, canonical link, site name',
  tags: ['url', 'metadata', 'open-graph', 'title', 'canonical', 'seo'],
  requestFormat: 'public http(s) URL',
  requestRequired: false,
  inputSchema: urlInput('Public http(s) URL of the page.'),
});
