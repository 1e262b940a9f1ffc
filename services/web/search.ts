/**
 * Web search providers of native-web-search: a SearXNG instance's JSON API
 * (`GET <searxngUrl>/search?q=…&format=json`; the instance must list `json` in
 * `search.formats`) or the Brave Search API (`GET <braveSearchUrl>?q=…` with the
 * `X-Subscription-Token` key). SearXNG wins when both are configured; with neither the
 * service is down. Each has its provider monitor (health and failure tracking).
 */
import { createProviderMonitor, type ProviderMonitor } from '../outbound/providerHealth.js';
import type { OutboundClient } from '../outbound/types.js';
import { ServiceError, type ServiceContext } from '../types.js';
import { htmlFragmentToText, loadHtmlParsers } from './readable.js';

/** One result as the service returns it. */
export interface SearchResult {
  readonly title: string;
  readonly url: string;
  readonly snippet: string | null;
  readonly host: string | null;
  /** ISO 8601 date the provider gives for the page, or null. */
  readonly date: string | null;
}

/** Results returned at most. */
export const MAX_SEARCH_RESULTS = 10;

/** A configured search provider. */
export interface SearchProvider {
  readonly name: 'searxng' | 'brave';
  readonly monitor: ProviderMonitor;
  search(outbound: OutboundClient, query: string, signal: AbortSignal): Promise<SearchResult[]>;
}

type Loose = Record<string, unknown>;
const obj = (v: unknown): Loose => (typeof v === 'object' && v !== null ? (v as Loose) : {});
const text = (v: unknown): string | null => {
  if (typeof v !== 'string' || !v.trim()) return null;
  return /<[a-z/]/i.test(v) ? htmlFragmentToText(v) || null : v.replace(/\s+/g, ' ').trim();
};
const iso = (v: unknown): string | null => {
  if (typeof v !== 'string') return null;
  const t = Date.parse(v);
  return Number.isFinite(t) ? new Date(t).toISOString() : null;
};
const hostOf = (url: string): string | null => {
  try {
    return new URL(url).hostname || null;
  } catch {
    return null;
  }
};

/** Joins a path under a base URL that may carry a path prefix. */
function under(base: string, path: string): URL {
  return new URL(path, base.endsWith('/') ? base : `${base}/`);
}

/** Throws the provider failure of a non-2xx answer (the caller is refunded). */
function ensureOk(name: string, status: number, body: () => string): void {
  if (status >= 200 && status < 300) return;
  let detail = '';
  try {
    const e = obj(obj(JSON.parse(body())).error);
    detail = typeof e.detail === 'string' ? `: ${e.detail}` : '';
  } catch {
    // not JSON: the status says enough
  }
  throw new ServiceError('provider_error', `${name} answered HTTP ${status}${detail}`);
}

const settingOf = (ctx: Pick<ServiceContext, 'providers'>, key: string): string | undefined => {
  const v = ctx.providers?.[key];
  return typeof v === 'string' && v.length > 0 ? v : undefined;
};

const searxngMonitor = createProviderMonitor({
  name: 'SearXNG',
  configured: (ctx) => settingOf(ctx, 'searxngUrl') !== undefined,
  // SearXNG's own health endpoint: no search is spent on a probe.
  probe: async (ctx) => {
    const res = await ctx.outbound!.fetchProvider({ url: under(settingOf(ctx, 'searxngUrl')!, 'healthz').href, signal: ctx.signal, maxBytes: 4096, timeoutMs: 5000 });
    ensureOk('SearXNG', res.status, () => res.text());
  },
});

const braveMonitor = createProviderMonitor({
  name: 'Brave Search',
  configured: (ctx) => settingOf(ctx, 'braveSearchKey') !== undefined,
  // A probe is a real query that counts against the key's quota: at most one every 6 hours.
  minIntervalMs: 6 * 3600_000,
  probe: async (ctx) => {
    await braveSearch(ctx.outbound!, settingOf(ctx, 'braveSearchUrl')!, settingOf(ctx, 'braveSearchKey')!, 'x402', ctx.signal, 1);
  },
});

async function braveSearch(outbound: OutboundClient, endpoint: string, key: string, query: string, signal: AbortSignal, count = MAX_SEARCH_RESULTS): Promise<SearchResult[]> {
  const url = new URL(endpoint);
  url.searchParams.set('q', query);
  url.searchParams.set('count', String(count));
  const res = await outbound.fetchProvider({ url: url.href, signal, headers: { accept: 'application/json', 'x-subscription-token': key }, maxBytes: 2 * 1024 * 1024, timeoutMs: 10_000 });
  ensureOk('Brave Search', res.status, () => res.text());
  await loadHtmlParsers();
  const results = obj(obj(res.json()).web).results;
  if (results !== undefined && !Array.isArray(results)) throw new ServiceError('provider_error', 'Brave Search answered an unexpected shape (web.results is not a list)');
  return (results ?? [])
    .map(obj)
    .filter((r) => typeof r.url === 'string' && typeof r.title === 'string')
    .slice(0, count)
    .map((r) => ({ title: text(r.title) ?? (r.url as string), url: r.url as string, snippet: text(r.description), host: (obj(r.meta_url).hostname as string | undefined) ?? hostOf(r.url as string), date: iso(r.page_age) }));
}

async function searxngSearch(outbound: OutboundClient, base: string, query: string, signal: AbortSignal): Promise<SearchResult[]> {
  const url = under(base, 'search');
  url.searchParams.set('q', query);
  url.searchParams.set('format', 'json');
  const res = await outbound.fetchProvider({ url: url.href, signal, headers: { accept: 'application/json' }, maxBytes: 4 * 1024 * 1024, timeoutMs: 10_000 });
  // An instance without the JSON format enabled answers 403.
  if (res.status === 403) throw new ServiceError('provider_error', 'SearXNG refused format=json (enable json in search.formats of its settings.yml)');
  ensureOk('SearXNG', res.status, () => res.text());
  await loadHtmlParsers();
  const results = obj(res.json()).results;
  if (!Array.isArray(results)) throw new ServiceError('provider_error', 'SearXNG answered an unexpected shape (no results list)');
  return results
    .map(obj)
    .filter((r) => typeof r.url === 'string')
    .slice(0, MAX_SEARCH_RESULTS)
    .map((r) => ({ title: text(r.title) ?? (r.url as string), url: r.url as string, snippet: text(r.content), host: hostOf(r.url as string), date: iso(r.publishedDate) }));
}

/** The provider this node uses, or undefined when none is configured. */
export function searchProviderOf(ctx: Pick<ServiceContext, 'providers'>): SearchProvider | undefined {
  const searxng = settingOf(ctx, 'searxngUrl');
  if (searxng) return { name: 'searxng', monitor: searxngMonitor, search: (o, q, s) => searxngSearch(o, searxng, q, s) };
  const key = settingOf(ctx, 'braveSearchKey');
  const endpoint = settingOf(ctx, 'braveSearchUrl');
  if (key && endpoint) return { name: 'brave', monitor: braveMonitor, search: (o, q, s) => braveSearch(o, endpoint, key, q, s) };
  return undefined;
}
