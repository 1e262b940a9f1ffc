/**
 * native-url-meta: a page's title, meta description, Open Graph image, canonical link and site
 * name. The page is fetched through the SSRF-safe outbound client (HTML only, 2 MiB at most);
 * open-graph-scraper reads the Open Graph and Twitter tags from that HTML (it is given the HTML,
 * never the URL, so it fetches nothing itself) and linkedom the document's own `<title>`,
 * `<meta name="description">` and `<link rel="canonical">`. Relative URLs are made absolute
 * against the final URL.
 */
import { parseHTML } from 'linkedom';
import ogs from 'open-graph-scraper';
import { defineService } from './define.js';
import { urlInput } from './inputs.js';
import { CALLER_URL_SERVICE, fetchCallerUrl } from './web/readable.js';

/** Largest page read for its metadata, bytes. */
const MAX_META_BYTES = 2 * 1024 * 1024;

/** `href` made absolute against `base`; null when absent or not a URL. */
function absolute(href: string | null | undefined, base: string): string | null {
  if (!href || !href.trim()) return null;
  try {
    return new URL(href.trim(), base).href;
  } catch {
    return null;
  }
}

function clean(s: string | null | undefined): string | null {
  const t = s?.replace(/\s+/g, ' ').trim();
  return t ? t : null;
}

/** The metadata of an HTML page fetched from `url` (final URL after redirects). */
export async function pageMetadata(html: string, url: string): Promise<Record<string, unknown>> {
  const { document } = parseHTML(html);
  const attr = (selector: string, name: string) => document.querySelector(selector)?.getAttribute(name) ?? null;
  const og = await ogs({ html, onlyGetOpenGraphInfo: false }).then(
    (r) => r.result,
    () => undefined,
  );
  const ogImage = og?.ogImage?.[0];
  const twitterImage = og?.twitterImage?.[0];
  return {
    title: clean(document.querySelector('title')?.textContent) ?? clean(og?.ogTitle),
    description: clean(attr('meta[name="description" i]', 'content')),
    canonical: absolute(attr('link[rel~="canonical" i]', 'href'), url),
    siteName: clean(og?.ogSiteName) ?? null,
    image: absolute(ogImage?.url ?? twitterImage?.url, url),
    imageAlt: clean(ogImage?.alt ?? twitterImage?.alt) ?? null,
    ogTitle: clean(attr('meta[property="og:title" i]', 'content')),
    ogDescription: clean(attr('meta[property="og:description" i]', 'content')),
    ogType: clean(og?.ogType) ?? null,
    ogUrl: absolute(attr('meta[property="og:url" i]', 'content'), url),
    twitterCard: clean(og?.twitterCard) ?? null,
    lang: clean(document.documentElement?.getAttribute('lang')),
    favicon: absolute(attr('link[rel~="icon" i]', 'href'), url),
  };
}

/** native-url-meta. */
export const urlMeta = defineService({
  id: 'native-url-meta',
  name: 'URL Metadata',
  category: 'compute',
  priceBase: 500_000n,
  description: 'title, meta description, Open Graph image, canonical link, site name',
  tags: ['url', 'metadata', 'open-graph', 'title', 'canonical', 'seo'],
  requestFormat: 'public http(s) URL',
  inputSchema: urlInput('Public http(s) URL of the page.'),
  ...CALLER_URL_SERVICE,
  run: async (ctx, input) => {
    const res = await fetchCallerUrl(ctx, input as string, { maxBytes: MAX_META_BYTES, accept: ['text/html', 'application/xhtml+xml'], headers: { accept: 'text/html,application/xhtml+xml;q=0.9' } });
    return { url: res.url, status: res.status, contentType: res.contentType, ...(await pageMetadata(res.text(), res.url)) };
  },
});
