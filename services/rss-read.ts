/** native-rss-read: RSS or Atom feed into items (title, link, date, summary). Not runnable yet: it needs the web-fetch provider (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { urlInput } from './inputs.js';

/** native-rss-read. */
export const rssRead = defineService({
  id: 'native-rss-read',
  name: 'RSS Reader',
  category: 'compute',
  priceBase: 400_000n,
  description: 'RSS or Atom feed into items (title, link, date, summary)',
  tags: ['rss', 'atom', 'feed', 'news', 'items'],
  requestFormat: 'feed URL (http or https)',
  requestRequired: false,
  inputSchema: urlInput('RSS or Atom feed URL.'),
});
