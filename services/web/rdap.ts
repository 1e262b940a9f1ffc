/**
 * RDAP for native-domain-info: the IANA bootstrap registry for DNS (RFC 9224, `dns.json`, a
 * snapshot kept in this folder with its publication date and refreshed with
 * `native-node rdap-bootstrap`) says which registry's RDAP server answers for a TLD; the domain
 * is then looked up there (`GET <server>domain/<name>`, RFC 9082) and the JSON response (RFC
 * 9083) reduced to registrar, dates, nameservers and status. Answers are cached for an hour.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { domainToASCII, pathToFileURL } from 'node:url';
import { PROJECT_ROOT } from '../projectRoot.js';
import type { OutboundClient } from '../outbound/types.js';
import { ServiceError } from '../types.js';

/** The bootstrap snapshot shipped with the node. */
export const DEFAULT_BOOTSTRAP_FILE = pathToFileURL(join(PROJECT_ROOT, 'services', 'web', 'rdapBootstrap.json'));
/** Where IANA publishes the bootstrap registry. */
export const IANA_DNS_BOOTSTRAP_URL = 'https://data.iana.org/rdap/dns.json';
/** How long an RDAP answer is reused, ms. */
export const RDAP_CACHE_MS = 3600_000;

/** A loaded bootstrap registry. */
export interface RdapBootstrap {
  /** The registry's `publication` timestamp. */
  readonly publication: string;
  /** TLD count. */
  readonly size: number;
  /** Base URL of the RDAP server for a domain (longest matching label suffix), undefined when none is registered. */
  serverFor(domain: string): string | undefined;
  /** The server the health probe asks (`.com`'s, else the first listed). */
  readonly probeServer: string;
}

/** Checks and indexes a bootstrap document (RFC 9224 §4); throws on a malformed one. */
export function parseBootstrap(json: unknown): RdapBootstrap {
  const doc = json as { publication?: unknown; services?: unknown };
  if (typeof doc !== 'object' || doc === null || typeof doc.publication !== 'string' || !Array.isArray(doc.services)) throw new Error('not an RDAP bootstrap registry (publication and services required)');
  const byTld = new Map<string, string>();
  for (const entry of doc.services as unknown[]) {
    if (!Array.isArray(entry) || !Array.isArray(entry[0]) || !Array.isArray(entry[1])) throw new Error('malformed services entry');
    const urls = (entry[1] as unknown[]).filter((u): u is string => typeof u === 'string' && /^https?:\/\//i.test(u));
    // RFC 9224 §5: prefer https when a server is listed with both schemes.
    const url = urls.find((u) => u.toLowerCase().startsWith('https:')) ?? urls[0];
    if (!url) continue;
    for (const tld of entry[0] as unknown[]) if (typeof tld === 'string') byTld.set(tld.toLowerCase().replace(/\.$/, ''), url.endsWith('/') ? url : `${url}/`);
  }
  if (byTld.size === 0) throw new Error('bootstrap registry lists no servers');
  return {
    publication: doc.publication,
    size: byTld.size,
    probeServer: byTld.get('com') ?? byTld.values().next().value!,
    serverFor(domain) {
      const labels = domain.toLowerCase().replace(/\.$/, '').split('.');
      for (let i = 1; i < labels.length; i++) {
        const hit = byTld.get(labels.slice(i).join('.'));
        if (hit) return hit;
      }
      return undefined;
    },
  };
}

const loaded = new Map<string, RdapBootstrap>();

/** The bootstrap registry of a file (default: the shipped snapshot), read once per path. */
export function loadBootstrap(file?: string): RdapBootstrap {
  const key = file ?? DEFAULT_BOOTSTRAP_FILE.pathname;
  let b = loaded.get(key);
  if (!b) {
    b = parseBootstrap(JSON.parse(readFileSync(file ?? DEFAULT_BOOTSTRAP_FILE, 'utf8')));
    loaded.set(key, b);
  }
  return b;
}

/** A domain in its ASCII (A-label) form, lower case without a trailing dot; undefined when it is not a valid name. */
export function normaliseDomain(input: string): string | undefined {
  const ascii = domainToASCII(input.trim().replace(/\.$/, ''));
  return ascii && ascii.includes('.') ? ascii.toLowerCase() : undefined;
}

/** What the service returns of an RDAP domain object. */
export interface DomainInfo {
  readonly domain: string;
  /** Whether the registry has the domain (false: RDAP answered 404, not registered there). */
  readonly registered: boolean;
  readonly unicodeName: string | null;
  readonly handle: string | null;
  readonly registrar: { readonly name: string | null; readonly ianaId: string | null; readonly url: string | null } | null;
  /** ISO 8601 dates of the registration events. */
  readonly created: string | null;
  readonly updated: string | null;
  readonly expires: string | null;
  readonly nameservers: readonly string[];
  /** RDAP status values (RFC 9083 §10.2.2), e.g. `client transfer prohibited`. */
  readonly status: readonly string[];
  readonly dnssec: boolean | null;
  /** The RDAP server asked. */
  readonly rdapServer: string;
}

type Loose = Record<string, unknown>;
const obj = (v: unknown): Loose => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Loose) : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const iso = (v: unknown): string | null => {
  if (typeof v !== 'string') return null;
  const t = Date.parse(v);
  return Number.isFinite(t) ? new Date(t).toISOString() : null;
};

/** The `fn` (formatted name) of a jCard (RFC 7095), as RDAP carries it in `vcardArray`. */
function vcardName(vcardArray: unknown): string | null {
  for (const prop of list(list(vcardArray)[1])) {
    const p = list(prop);
    if (p[0] === 'fn' && typeof p[3] === 'string' && p[3].trim()) return p[3].trim();
  }
  return null;
}

/** Reduces an RDAP domain object (RFC 9083 §5.3) to `DomainInfo`. */
export function domainInfoOf(rdap: unknown, domain: string, server: string): DomainInfo {
  const d = obj(rdap);
  if (d.objectClassName !== undefined && d.objectClassName !== 'domain') throw new ServiceError('provider_error', `RDAP answered a ${String(d.objectClassName)} object, not a domain`);
  const eventDate = (...actions: string[]) => {
    for (const e of list(d.events).map(obj)) if (typeof e.eventAction === 'string' && actions.includes(e.eventAction.toLowerCase())) return iso(e.eventDate);
    return null;
  };
  const registrarEntity = list(d.entities)
    .map(obj)
    .find((e) => list(e.roles).includes('registrar'));
  const registrar = registrarEntity
    ? {
        name: vcardName(registrarEntity.vcardArray) ?? (typeof registrarEntity.handle === 'string' ? registrarEntity.handle : null),
        ianaId: (list(registrarEntity.publicIds).map(obj).find((p) => typeof p.type === 'string' && /iana/i.test(p.type))?.identifier as string | undefined) ?? null,
        url: (list(registrarEntity.links).map(obj).find((l) => typeof l.href === 'string' && l.rel !== 'self')?.href as string | undefined) ?? null,
      }
    : null;
  const secure = obj(d.secureDNS);
  return {
    domain: typeof d.ldhName === 'string' ? d.ldhName.toLowerCase() : domain,
    registered: true,
    unicodeName: typeof d.unicodeName === 'string' ? d.unicodeName : null,
    handle: typeof d.handle === 'string' ? d.handle : null,
    registrar,
    created: eventDate('registration'),
    updated: eventDate('last changed'),
    expires: eventDate('expiration'),
    nameservers: list(d.nameservers)
      .map((n) => obj(n).ldhName)
      .filter((n): n is string => typeof n === 'string')
      .map((n) => n.toLowerCase().replace(/\.$/, '')),
    status: list(d.status).filter((s): s is string => typeof s === 'string'),
    dnssec: typeof secure.delegationSigned === 'boolean' ? secure.delegationSigned : null,
    rdapServer: server,
  };
}

/** Looks `domain` (normalised) up at its registry's RDAP server. Throws ServiceError on provider failure. */
export async function lookupDomain(outbound: OutboundClient, server: string, domain: string, signal?: AbortSignal): Promise<DomainInfo> {
  const url = new URL(`domain/${encodeURIComponent(domain)}`, server).href;
  const res = await outbound.fetchProvider({ url, signal, headers: { accept: 'application/rdap+json, application/json;q=0.9' }, maxBytes: 1024 * 1024, timeoutMs: 10_000, cacheTtlMs: RDAP_CACHE_MS });
  if (res.status === 404) {
    return { domain, registered: false, unicodeName: null, handle: null, registrar: null, created: null, updated: null, expires: null, nameservers: [], status: [], dnssec: null, rdapServer: server };
  }
  if (res.status === 429) throw new ServiceError('provider_rate_limited', `${new URL(server).host} rate-limited the RDAP query`);
  if (res.status < 200 || res.status >= 300) throw new ServiceError('provider_error', `${new URL(server).host} answered HTTP ${res.status}`);
  return domainInfoOf(res.json(), domain, server);
}

/** Fetches the current IANA registry through `outbound` and checks it; returns its text and publication date. */
export async function fetchBootstrap(outbound: OutboundClient, url = IANA_DNS_BOOTSTRAP_URL): Promise<{ text: string; publication: string; size: number }> {
  const res = await outbound.fetchProvider({ url, accept: ['application/json', 'application/rdap+json', 'text/plain'], maxBytes: 4 * 1024 * 1024, timeoutMs: 30_000 });
  if (res.status !== 200) throw new ServiceError('provider_error', `${url} answered HTTP ${res.status}`);
  const json = res.json();
  const b = parseBootstrap(json);
  return { text: `${JSON.stringify(json, null, 2)}\n`, publication: b.publication, size: b.size };
}
