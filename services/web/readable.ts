/**
 * Readable text of a web page: the body fetched through the outbound client, HTML parsed with
 * linkedom and its main content extracted with Mozilla's Readability (the Firefox reader view's
 * algorithm); pages Readability finds no article in fall back to the text of the whole body.
 * Plain-text and other textual types are returned as they are; binary types have no text.
 * `fetchReadableText` is shared by native-web-fetch and native-summarize (URL input).
 */
import type { Readability } from '@mozilla/readability';
import { EXTERNAL_TIMEOUT_MS } from '../define.js';
import { outboundHealth, precheckPublicUrl } from '../outbound/index.js';
import { OutboundError, type OutboundClient, type OutboundRequest, type OutboundResponse } from '../outbound/types.js';
import { ServiceError, type ServiceContext } from '../types.js';

/** Largest page body read, bytes. */
export const MAX_PAGE_BYTES = 3 * 1024 * 1024;
/** Longest text returned, characters (longer text is cut and flagged `truncated`). */
export const MAX_TEXT_CHARS = 50_000;

/** A fetched page as readable text. */
export interface ReadableDocument {
  /** Final URL after redirects. */
  readonly url: string;
  readonly status: number;
  /** Media type without parameters ('' when the server sent none). */
  readonly contentType: string;
  /** Size of the (decoded) body, bytes. */
  readonly bytes: number;
  readonly title: string | null;
  /** The readable text; null for a body that is not text (images, PDF, archives). */
  readonly text: string | null;
  /** Characters of `text` before any cut. */
  readonly textLength: number;
  readonly truncated: boolean;
  /** `readability` (main content), `body` (whole body: no article found), `plain` (a textual type as is), `none`. */
  readonly extraction: 'readability' | 'body' | 'plain' | 'none';
  readonly byline: string | null;
  readonly siteName: string | null;
  readonly lang: string | null;
  readonly excerpt: string | null;
}

const HTML_TYPES = ['text/html', 'application/xhtml+xml'];
const SKIPPED = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'SVG', 'IFRAME', 'OBJECT', 'CANVAS', 'HEAD']);
const BLOCKS = new Set(['P', 'DIV', 'SECTION', 'ARTICLE', 'MAIN', 'HEADER', 'FOOTER', 'ASIDE', 'NAV', 'BLOCKQUOTE', 'PRE', 'UL', 'OL', 'DL', 'DT', 'DD', 'TABLE', 'TR', 'FIGURE', 'FIGCAPTION', 'FORM', 'FIELDSET', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'HR', 'ADDRESS', 'DETAILS', 'SUMMARY']);

/** Whether a media type is text worth returning as is. */
function isTextual(type: string): boolean {
  return type.startsWith('text/') || type === 'application/json' || type === 'application/xml' || type.endsWith('+json') || type.endsWith('+xml') || type === 'application/javascript' || type === 'application/x-ndjson';
}

interface DomNode {
  readonly nodeType: number;
  readonly nodeName: string;
  readonly textContent: string | null;
  readonly childNodes: ArrayLike<DomNode>;
}

/** Text of a DOM subtree with paragraph breaks between blocks and line breaks at `<br>` and list items. */
export function domToText(root: DomNode): string {
  const out: string[] = [];
  const walk = (node: DomNode) => {
    if (node.nodeType === 3) {
      out.push((node.textContent ?? '').replace(/\s+/g, ' '));
      return;
    }
    if (node.nodeType !== 1 && node.nodeType !== 9 && node.nodeType !== 11) return;
    const name = node.nodeName.toUpperCase();
    if (SKIPPED.has(name)) return;
    if (name === 'BR') return void out.push('\n');
    if (name === 'LI') out.push('\n- ');
    else if (name === 'TD' || name === 'TH') out.push(' ');
    const block = BLOCKS.has(name);
    if (block) out.push('\n\n');
    for (let i = 0; i < node.childNodes.length; i++) walk(node.childNodes[i]);
    if (block) out.push('\n\n');
  };
  walk(root);
  return out
    .join('')
    .split('\n')
    .map((l) => l.replace(/[ \t\u00a0]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

// linkedom and Readability are imported with the first page read, not when the node starts.
let parsers: Promise<void> | undefined;
let linkedom: typeof import('linkedom') | undefined;
let ReadabilityClass: typeof Readability | undefined;

/** Loads the HTML parsers (once); the synchronous readers below need it resolved. */
export function loadHtmlParsers(): Promise<void> {
  parsers ??= Promise.all([import('linkedom'), import('@mozilla/readability')]).then(([l, r]) => {
    linkedom = l;
    ReadabilityClass = r.Readability;
  });
  parsers.catch(() => (parsers = undefined));
  return parsers;
}

/** linkedom's `parseHTML` (`loadHtmlParsers()` must have resolved). */
export function parseHTML(html: string): ReturnType<typeof import('linkedom').parseHTML> {
  if (!linkedom) throw new Error('the HTML parsers are not loaded yet (await loadHtmlParsers() first)');
  return linkedom.parseHTML(html);
}

/** Text of an HTML fragment (feed summaries and the like; `loadHtmlParsers()` must have resolved). */
export function htmlFragmentToText(html: string): string {
  const { document } = parseHTML(`<!doctype html><html><body>${html}</body></html>`);
  return domToText(document.body as unknown as DomNode);
}

/** The readable parts of an HTML page (see module comment; `loadHtmlParsers()` must have resolved). */
export function extractReadable(html: string): Pick<ReadableDocument, 'title' | 'text' | 'extraction' | 'byline' | 'siteName' | 'lang' | 'excerpt'> {
  const { document } = parseHTML(html);
  const title = (document.title ?? '').trim() || null;
  const lang = document.documentElement?.getAttribute('lang') || null;
  let article: ReturnType<Readability['parse']> = null;
  try {
    // Readability changes the document it reads: give it its own copy.
    article = new ReadabilityClass!(parseHTML(html).document as unknown as ConstructorParameters<typeof Readability>[0], { charThreshold: 200 }).parse();
  } catch {
    article = null;
  }
  if (article?.content) {
    const text = htmlFragmentToText(article.content);
    if (text.length > 0) {
      return { title: article.title?.trim() || title, text, extraction: 'readability', byline: article.byline?.trim() || null, siteName: article.siteName?.trim() || null, lang: article.lang || lang, excerpt: article.excerpt?.trim() || null };
    }
  }
  const body = document.body ? domToText(document.body as unknown as DomNode) : '';
  return { title, text: body, extraction: 'body', byline: null, siteName: null, lang, excerpt: null };
}

/** Fetches a caller's URL and returns its readable text (see module comment). Throws `OutboundError`. */
export async function fetchReadableText(outbound: OutboundClient, url: string, opts: { signal?: AbortSignal; maxBytes?: number; maxChars?: number } = {}): Promise<ReadableDocument> {
  const res = await outbound.fetchPublic({ url, signal: opts.signal, maxBytes: opts.maxBytes ?? MAX_PAGE_BYTES, headers: { accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5' } });
  const maxChars = opts.maxChars ?? MAX_TEXT_CHARS;
  await loadHtmlParsers();
  const base = { url: res.url, status: res.status, contentType: res.contentType, bytes: res.body.byteLength };
  let parts: Pick<ReadableDocument, 'title' | 'text' | 'extraction' | 'byline' | 'siteName' | 'lang' | 'excerpt'>;
  // No content type: sniff the start of the body, as browsers do for HTML.
  const sniffedHtml = res.contentType === '' && /^\s*(<!doctype html|<html|<head|<body)/i.test(res.text().slice(0, 512));
  if (HTML_TYPES.includes(res.contentType) || sniffedHtml) parts = extractReadable(res.text());
  else if (isTextual(res.contentType) || (res.contentType === '' && !res.body.includes(0))) parts = { title: null, text: res.text().trim(), extraction: 'plain', byline: null, siteName: null, lang: null, excerpt: null };
  else parts = { title: null, text: null, extraction: 'none', byline: null, siteName: null, lang: null, excerpt: null };
  const full = parts.text;
  const truncated = full !== null && full.length > maxChars;
  return { ...base, ...parts, text: truncated ? full.slice(0, maxChars) : full, textLength: full?.length ?? 0, truncated };
}

/** The outbound client of a service context, or the failure a service without one reports. */
export function outboundOf(ctx: ServiceContext): OutboundClient {
  if (!ctx.outbound) throw new ServiceError('outbound_unavailable', 'this node has no outbound client');
  return ctx.outbound;
}

/** Turns an outbound failure inside a paid run into the service's coded failure (the caller is refunded). */
export function asServiceError(e: unknown): never {
  if (e instanceof OutboundError) throw new ServiceError(e.code, e.message);
  throw e;
}

/** What every service fetching a caller's URL shares: the spec's optional input that it cannot do without (`needsInput`: an absent one is refused with 400 before any quote), the external timeout, the public-URL precheck, health = an outbound client. */
export const CALLER_URL_SERVICE = { requestRequired: false, needsInput: true, timeoutMs: EXTERNAL_TIMEOUT_MS, precheck: precheckPublicUrl, health: outboundHealth } as const;

/** Code of a paid run whose upstream answered outside 2xx (docs/decisions.md, "Upstream failures after payment"): the caller is refunded. */
export const UPSTREAM_HTTP_ERROR = 'upstream_http_error';

/**
 * The one rule for an upstream's answer after payment (docs/decisions.md): a status outside 2xx
 * is no answer the service can sell, so the run fails with `upstream_http_error` naming the
 * status, and the caller is refunded. Returns `res` when it is a 2xx.
 */
export function requireUpstreamOk<T extends { readonly url: string; readonly status: number }>(res: T): T {
  if (res.status >= 200 && res.status < 300) return res;
  throw new ServiceError(UPSTREAM_HTTP_ERROR, `${res.url} answered HTTP ${res.status}`);
}

/** Fetches a caller's URL inside a paid run, with the run's signal; an outbound failure or a status outside 2xx becomes the service's coded failure (refund). */
export async function fetchCallerUrl(ctx: ServiceContext, url: string, req: Omit<OutboundRequest, 'url' | 'signal'>): Promise<OutboundResponse> {
  return requireUpstreamOk(await outboundOf(ctx).fetchPublic({ ...req, url, signal: ctx.signal }).catch(asServiceError));
}
