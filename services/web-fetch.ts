/**
 * native-web-fetch: a public URL to readable text (Mozilla Readability over linkedom), with the
 * HTTP status, content type and byte size. The URL goes through the SSRF-safe outbound client;
 * a URL whose host is not public is refused with a coded 400 before any payment.
 */
import { defineService } from './define.js';
import { urlInput } from './inputs.js';
import { asServiceError, CALLER_URL_SERVICE, fetchReadableText, outboundOf, requireUpstreamOk } from './web/readable.js';

/** native-web-fetch. */
export const webFetch = defineService({
  id: 'native-web-fetch',
  name: 'Web Fetch',
  category: 'compute',
  priceBase: 500_000n,
  description: 'public URL to readable text with status, content-type, byte size',
  tags: ['web', 'fetch', 'url', 'http', 'text', 'scrape'],
  requestFormat: 'public http(s) URL',
  inputSchema: urlInput('Public http(s) URL to fetch.'),
  ...CALLER_URL_SERVICE,
  // A page answering outside 2xx (404, 500) is refunded, not sold (docs/decisions.md, upstream failures after payment).
  run: async (ctx, input) => requireUpstreamOk(await fetchReadableText(outboundOf(ctx), input as string, { signal: ctx.signal }).catch(asServiceError)),
});
