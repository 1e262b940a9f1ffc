/**
 * native-url-meta: a page's title, meta description, Open Graph image, canonical link and site
 * name. The page is fetched through the SSRF-safe outbound client (HTML only, 2 MiB at most)
 * and parsed with linkedom: the document's own `<title>`, `<meta name="description">` and
 * `<link rel="canonical">`, and the Open Graph (`og:*`) and Twitter card (`twitter:*`) `<meta>`
 * tags, read from `property=` or `name=` as pages write either (open-graph-scraper did the latter
 * until the services were trimmed and brought 11 MB of cheerio and undici for these few selectors). Relative URLs
 * are made absolute against the final URL.
 */
import { defineService } from './define.js';
import { urlInput } from './inputs.js';
import { CALLER_URL_SERVICE, fetchCallerUrl, loadHtmlParsers, parseHTML } from './web/readable.js';

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
  await loadHtmlParsers();
  const { document } = parseHTML(html);
  const attr = (selector: string, name: string) => document.querySelector(selector)?.getAttribute(name) ?? null;
  /** The first non-empty `content` of a `<meta>` whose property or name is one of `keys`, in that order. */
  const meta = (...keys: string[]): string | null => {
    for (const k of keys) {
      const v = clean(attr(`meta[property="${k}" i]`, 'content')) ?? clean(attr(`meta[name="${k}" i]`, 'content'));
      if (v) return v;
    }
    return null;
  };
  const ogImage = meta('og:image', 'og:image:url', 'og:image:secure_url');
  const twitterImage = meta('twitter:image', 'twitter:image:src');
  return {
    title: clean(document.querySelector('title')?.textContent) ?? meta('og:title'),
    description: clean(attr('meta[name="description" i]', 'content')),
    canonical: absolute(attr('link[rel~="canonical" i]', 'href'), url),
    siteName: meta('og:site_name'),
    image: absolute(ogImage ?? twitterImage, url),
    imageAlt: ogImage ? meta('og:image:alt') : twitterImage ? meta('twitter:image:alt') : null,
    ogTitle: meta('og:title'),
    ogDescription: meta('og:description'),
    ogType: meta('og:type'),
    ogUrl: absolute(meta('og:url'), url),
    twitterCard: meta('twitter:card'),
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
