/**
 * native-rss-read: a feed's items (title, link, date, summary). The feed is fetched through the
 * SSRF-safe outbound client and parsed with feedsmith, which reads RSS 0.9x/2.0, Atom 1.0, RDF
 * (RSS 1.0) and JSON Feed 1.x. Dates come out as ISO 8601 (null when absent or unreadable),
 * summaries as plain text (HTML stripped, at most 500 characters), links absolute; at most 50
 * items, in feed order.
 */
import { defineService } from './define.js';
import { urlInput } from './inputs.js';
import { ServiceError } from './types.js';
import { CALLER_URL_SERVICE, fetchCallerUrl, htmlFragmentToText, loadHtmlParsers } from './web/readable.js';

/** Largest feed read, bytes. */
const MAX_FEED_BYTES = 5 * 1024 * 1024;
/** Items returned at most. */
export const MAX_FEED_ITEMS = 50;
/** Longest item summary, characters. */
const MAX_SUMMARY_CHARS = 500;

/** One item of a feed as the service returns it. */
export interface FeedItem {
  readonly title: string | null;
  readonly link: string | null;
  /** ISO 8601, or null. */
  readonly date: string | null;
  readonly summary: string | null;
}

type Loose = Record<string, unknown>;
const obj = (v: unknown): Loose => (typeof v === 'object' && v !== null ? (v as Loose) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined || v === null ? [] : [v]);
/** A string, or the `value` of an Atom text construct. */
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof obj(v).value === 'string' ? (obj(v).value as string) : undefined);

function isoDate(v: unknown): string | null {
  const s = str(v);
  if (!s) return null;
  const t = Date.parse(s.trim());
  return Number.isFinite(t) ? new Date(t).toISOString() : null;
}

function absolute(href: string | undefined, base: string): string | null {
  if (!href?.trim()) return null;
  try {
    return new URL(href.trim(), base).href;
  } catch {
    return null;
  }
}

function summaryText(v: string | undefined): string | null {
  if (!v?.trim()) return null;
  const text = /<[a-z!/]/i.test(v) ? htmlFragmentToText(v) : v.replace(/\s+/g, ' ').trim();
  if (!text) return null;
  return text.length > MAX_SUMMARY_CHARS ? `${text.slice(0, MAX_SUMMARY_CHARS - 1).trimEnd()}…` : text;
}

function firstDefined(...vs: (string | undefined)[]): string | undefined {
  return vs.find((v) => v !== undefined && v.trim() !== '');
}

/** Atom's link for a reader: `rel="alternate"` or no rel, else the first. */
function atomLink(links: unknown): string | undefined {
  const all = arr(links).map(obj);
  const alt = all.find((l) => l.rel === undefined || l.rel === 'alternate') ?? all[0];
  return typeof alt?.href === 'string' ? alt.href : undefined;
}

/** The feed's items and header in the service's shape; throws ServiceError `feed_invalid` when the body is not a feed. */
export async function readFeed(body: string, url: string): Promise<{ format: string; title: string | null; link: string | null; description: string | null; items: FeedItem[]; totalItems: number }> {
  // feedsmith and the HTML parsers load with the first feed read, not when the node starts.
  const [{ parseFeed }] = await Promise.all([import('feedsmith'), loadHtmlParsers()]);
  let parsed: { format: string; feed: unknown };
  try {
    parsed = parseFeed(body) as { format: string; feed: unknown };
  } catch (e) {
    throw new ServiceError('feed_invalid', `${url} is not an RSS, Atom, RDF or JSON feed: ${(e as Error).message}`);
  }
  const feed = obj(parsed.feed);
  let raw: Loose[];
  let head: { title?: string; link?: string; description?: string };
  let item: (i: Loose) => FeedItem;
  switch (parsed.format) {
    case 'atom':
      raw = arr(feed.entries).map(obj);
      head = { title: str(feed.title), link: atomLink(feed.links), description: str(feed.subtitle) };
      item = (e) => ({
        title: summaryText(str(e.title)),
        link: absolute(atomLink(e.links), url),
        date: isoDate(e.published) ?? isoDate(e.updated),
        summary: summaryText(firstDefined(str(e.summary), str(e.content))),
      });
      break;
    case 'json':
      raw = arr(feed.items).map(obj);
      head = { title: str(feed.title), link: str(feed.home_page_url), description: str(feed.description) };
      item = (i) => ({
        title: summaryText(str(i.title)),
        link: absolute(firstDefined(str(i.url), str(i.external_url)), url),
        date: isoDate(i.date_published) ?? isoDate(i.date_modified),
        summary: summaryText(firstDefined(str(i.summary), str(i.content_text), str(i.content_html))),
      });
      break;
    default: {
      // rss and rdf share their item fields; dates also come from Dublin Core (dc:date).
      raw = arr(feed.items).map(obj);
      head = { title: str(feed.title), link: str(feed.link), description: str(feed.description) };
      item = (i) => {
        const dc = obj(i.dc);
        return {
          title: summaryText(str(i.title)),
          link: absolute(firstDefined(str(i.link), obj(i.guid).isPermaLink !== false ? str(obj(i.guid).value) : undefined), url),
          date: isoDate(i.pubDate) ?? isoDate(arr(dc.dates)[0] ?? dc.date),
          summary: summaryText(firstDefined(str(i.description), str(obj(i.content).encoded))),
        };
      };
    }
  }
  return {
    format: parsed.format,
    title: summaryText(head.title),
    link: absolute(head.link, url),
    description: summaryText(head.description),
    items: raw.slice(0, MAX_FEED_ITEMS).map(item),
    totalItems: raw.length,
  };
}

/** native-rss-read. */
export const rssRead = defineService({
  id: 'native-rss-read',
  name: 'RSS Reader',
  category: 'compute',
  priceBase: 400_000n,
  description: 'RSS or Atom feed into items (title, link, date, summary)',
  tags: ['rss', 'atom', 'feed', 'news', 'items'],
  requestFormat: 'feed URL (http or https)',
  inputSchema: urlInput('RSS, Atom, RDF or JSON Feed URL.'),
  ...CALLER_URL_SERVICE,
  run: async (ctx, input) => {
    const res = await fetchCallerUrl(ctx, input as string, { maxBytes: MAX_FEED_BYTES, headers: { accept: 'application/rss+xml, application/atom+xml, application/feed+json, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.5' } });
    return { url: res.url, status: res.status, contentType: res.contentType, ...(await readFeed(res.text(), res.url)) };
  },
});
