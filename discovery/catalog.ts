/**
 * The catalog model: what the discovery documents are built from (`CatalogSnapshot`: registry,
 * ledger totals, prober health, price, addresses), one entry per service (`CatalogService`, in
 * the spec's field names and types; exact base-unit strings beside the spec's numbers), the
 * prices in USD, and the catalog's query filters (`GET /api/x402/bazaar`, the marketplace page,
 * MCP's `search_services`). The documents themselves are in `documents.ts` and `agentDocs.ts`,
 * the example calls in `examples.ts`.
 *
 * Network naming: the spec writes `native-mainnet` / chain id 1 (and the short form `mainnet`
 * in the descriptor and `?net=`); every document carries the node's own network instead, so a
 * devnet node says `native-devnet` / 1337 / `devnet` (docs/decisions.md).
 */
import { requestIsRequired, type HealthReason, type ServiceCategory, type ServiceDefinition, type ServiceUsage } from '../services/types.js';
import type { HealthReader, ServiceHealth } from '../services/prober.js';
import { MICRO, nativeNumber, usdcAtomicOf, usdNumber } from '../x402/core/pricing.js';

/** Live catalog version (spec, Versioning). */
export const CATALOG_VERSION = '2.126.0';
/** Protocol descriptor version (spec, Versioning). */
export const PROTOCOL_DESCRIPTOR_VERSION = 1;
/** Facilitator of the USDC rail when the operator names none (the x402 reference default). */
export const DEFAULT_FACILITATOR_URL = 'https://x402.org/facilitator';

/** The spec's categories, in the spec's order. */
export const SERVICE_CATEGORIES: readonly ServiceCategory[] = Object.freeze([
  'audit', 'compute', 'pricing', 'market-data', 'portfolio', 'utility', 'oracle', 'compliance', 'analytics',
  'trading', 'reports', 'staking-calculator', 'whale-watch', 'explorer', 'bridge', 'search', 'risk',
] as ServiceCategory[]);

/** MCP protocol revision the MCP endpoint's SDK speaks (the agent card names it). */
export const MCP_PROTOCOL_VERSION = '2025-11-25';

/** Addresses of the free surfaces, relative to the base URL. */
export const PATHS = Object.freeze({
  bazaar: '/api/x402/bazaar',
  descriptor: '/api/x402',
  wellKnown: '/.well-known/x402',
  discovery: '/x402/discovery',
  servicesJson: '/services.json',
  agentCard: '/.well-known/agent.json',
  agentCardV1: '/.well-known/agent-card.json',
  llmsTxt: '/llms.txt',
  openApi: '/openapi.json',
  mcp: '/api/mcp',
  marketplace: '/marketplace',
  agents: '/agents',
  join: '/join',
  perService: '/api/x402/{serviceId}',
  inbox: '/api/x402/inbox',
  requests: '/api/x402/requests',
  community: '/api/x402/community',
});

/** Settled totals per service, in the spec's names and units. */
export interface ProvenFields {
  provenCalls: number;
  provenCallsUsdc: number;
  /** USD (number). */
  provenVolumeUsdc: number;
  /** NATIVE (number). */
  provenVolumeAman: number;
  /** Exact NATIVE base units (string). */
  provenVolumeBase: string;
  /** Exact USDC atomic units (string). */
  provenVolumeUsdcAtomic: string;
}

/** The spec's metadata object of a catalog Service. */
export interface CatalogServiceMetadata extends ProvenFields {
  scheme: 'native-x402';
  network: string;
  asset: 'NATIVE';
  txType: 'agent_invoke';
  requestFormat: string;
  requestRequired: boolean;
  nodeOperated: boolean;
  providerAgent: string;
  b2b: null;
}

/** The spec's Service (catalog resource). */
export interface CatalogService {
  endpoint: string;
  type: 'http';
  x402Version: 1;
  method: 'POST';
  serviceId: string;
  name: string;
  description: string;
  /** USD with a leading `$`. */
  price: string;
  /** NATIVE (number). */
  priceAman: number;
  /** Exact NATIVE base units. */
  priceBase: string;
  priceUsd: number;
  /** Exact USDC atomic units of the USD price (the USDC rail's maxAmountRequired). */
  priceUsdcAtomic: string;
  category: ServiceCategory;
  tags: string[];
  paymentRails: string[];
  networks: string[];
  healthStatus: string;
  /** Why the service is `down` or `degraded` ({code, message}, e.g. `provider_not_configured`); null while `active` or `unknown`. */
  healthReason: HealthReason | null;
  /**
   * Why a call is not quoted now although the service is up ({code, message}): `payee_underfunded`
   * while the node owes a refund its payee cannot pay and could not refund this service's price
   * from what it holds (x402/core/paidCall.ts `payeeRefusal`); null when it is quoted.
   */
  quoteRefusal: HealthReason | null;
  lastVerifiedAt: number;
  latencyMs: number;
  metadata: CatalogServiceMetadata;
}

/** The USDC rail as the node runs it. */
export interface UsdcRail {
  /** EVM address receiving USDC on Base. */
  readonly payTo: string;
  readonly facilitatorUrl: string;
  /** Whether the node checks the EIP-3009 authorization itself before the facilitator does. */
  readonly authVerified: boolean;
}

/** Everything the documents are built from, taken once per request. */
export interface CatalogSnapshot {
  /** Scheme, host and port the caller used, without a trailing slash. */
  readonly baseUrl: string;
  /** Full network name, e.g. `native-mainnet`. */
  readonly network: string;
  readonly chainId: number;
  readonly services: readonly ServiceDefinition[];
  /** USD per NATIVE in micro-USD, where it came from, whether it is live. */
  readonly nativeUsd: { readonly microUsd: bigint; readonly source: string; readonly live: boolean; readonly change24h?: number | null };
  readonly usage: ServiceUsage;
  readonly health: HealthReader;
  /** Unix ms. */
  readonly now: number;
  /** Native payee (bech32m); undefined when this node has none (nothing is sold). */
  readonly payTo?: string;
  /** The seller id native payments commit to and the confirmations they need (with `payTo`). */
  readonly seller?: { readonly sellerId: string; readonly confirmations: number };
  readonly usdc?: UsdcRail;
  /** Software version of the node. */
  readonly nodeVersion: string;
  /** Last USD prices of the majors from the node's market-data provider, and when (Unix ms); absent when none is fresh. */
  readonly majors?: { readonly at: number; readonly source: string; readonly usd: Readonly<Record<string, number | null>> };
  /** The provider agents registered on chain, listed services or not. */
  readonly agents?: readonly RegisteredAgent[];
  /** Why a call of a service is not quoted now for the payee's funds (`CatalogService.quoteRefusal`); absent: none is refused. */
  readonly payeeRefusal?: (def: ServiceDefinition) => HealthReason | undefined;
  /** A transaction mined on this node's chain: native-tx-lookup's example request (absent while none is known). */
  readonly sampleTxId?: string;
}

/** A provider agent as registered on chain. */
export interface RegisteredAgent {
  readonly name: string;
  readonly address: string;
  readonly description: string;
  readonly capabilities: readonly string[];
  /** Polling its inbox now. */
  readonly online: boolean;
}

/** Short network name (`native-mainnet` → `mainnet`), the spec's descriptor and `?net=` value. */
export function shortNetwork(network: string): string {
  return network.startsWith('native-') ? network.slice('native-'.length) : network;
}

/** USD price of a definition in USDC atomic units (rounded up, as the USDC quote). */
export function priceAtomic(def: ServiceDefinition, microUsd: bigint): bigint {
  return usdcAtomicOf(def.priceBase, microUsd);
}

/** `$0.001` style text of USDC atomic units. */
export function dollarText(atomic: bigint): string {
  const frac = (atomic % MICRO).toString().padStart(6, '0').replace(/0+$/, '');
  return `$${atomic / MICRO}${frac ? `.${frac}` : ''}`;
}

/** Settled totals of a service from the ledger. */
export function provenFields(usage: ServiceUsage, serviceId: string): ProvenFields {
  const v = usage.volume(serviceId);
  return {
    provenCalls: v.calls,
    provenCallsUsdc: v.callsUsdc,
    provenVolumeUsdc: usdNumber(v.volumeUsdcAtomic),
    provenVolumeAman: nativeNumber(v.volumeBase),
    provenVolumeBase: v.volumeBase.toString(),
    provenVolumeUsdcAtomic: v.volumeUsdcAtomic.toString(),
  };
}

/**
 * The `healthReason` every document publishes beside `healthStatus`: why a `down` or `degraded`
 * service is so ({code, message}; a generic one if the prober's reader gave none), null otherwise.
 */
export function healthReasonOf(h: Pick<ServiceHealth, 'status' | 'reason'>): HealthReason | null {
  if (h.status !== 'down' && h.status !== 'degraded') return null;
  return h.reason ? { code: h.reason.code, message: h.reason.message } : { code: 'health_check_down', message: `its health check answered ${h.status}` };
}

/** The spec's Service entry of a definition. */
export function buildCatalogService(def: ServiceDefinition, snap: CatalogSnapshot): CatalogService {
  const atomic = priceAtomic(def, snap.nativeUsd.microUsd);
  const h = snap.health.get(def.id);
  return {
    endpoint: `${snap.baseUrl}/api/x402/${def.id}`,
    type: 'http',
    x402Version: 1,
    method: 'POST',
    serviceId: def.id,
    name: def.name,
    description: def.description,
    price: dollarText(atomic),
    priceAman: nativeNumber(def.priceBase),
    priceBase: def.priceBase.toString(),
    priceUsd: usdNumber(atomic),
    priceUsdcAtomic: atomic.toString(),
    category: def.category,
    tags: [...def.tags],
    paymentRails: snap.usdc ? ['x402-native', 'x402-USDC-base'] : ['x402-native'],
    networks: snap.usdc ? [snap.network, 'base'] : [snap.network],
    healthStatus: h.status,
    healthReason: healthReasonOf(h),
    quoteRefusal: snap.payeeRefusal?.(def) ?? null,
    lastVerifiedAt: h.lastVerifiedAt,
    latencyMs: h.latencyMs,
    metadata: {
      scheme: 'native-x402',
      network: snap.network,
      asset: 'NATIVE',
      txType: 'agent_invoke',
      requestFormat: def.requestFormat,
      requestRequired: requestIsRequired(def),
      nodeOperated: def.nodeOperated,
      providerAgent: def.providerAgent,
      ...provenFields(snap.usage, def.id),
      b2b: null,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Query filters of the catalog

/** Default, largest `limit` and largest `offset` of `GET /api/x402/bazaar`; longest `q`. */
export const CATALOG_LIMITS = Object.freeze({ defaultLimit: 100, maxLimit: 100, maxOffset: 10_000, maxQueryChars: 200 });

/** Parsed filters of a catalog query. */
export interface CatalogFilters {
  readonly category?: ServiceCategory;
  /** USD, as given (for echoing). */
  readonly maxPrice?: string;
  /** The same in micro-USD (= USDC atomic units). */
  readonly maxPriceMicroUsd?: bigint;
  /** `base` or the node's network. */
  readonly network?: string;
  /** Lowercase search words (all must match). */
  readonly q?: string;
  readonly limit: number;
  readonly offset: number;
}

/** Outcome of parsing a query: the filters, or the parameter at fault and why. */
export type CatalogQueryResult = { readonly ok: true; readonly filters: CatalogFilters } | { readonly ok: false; readonly param: string; readonly message: string };

type QueryValue = string | string[] | undefined;

function single(query: Readonly<Record<string, unknown>>, name: string): { value?: string; error?: string } {
  const v = query[name] as QueryValue | unknown;
  if (v === undefined) return {};
  if (typeof v !== 'string') return { error: `${name} must be given once` };
  return { value: v };
}

function intParam(query: Readonly<Record<string, unknown>>, name: string, min: number, max: number, dflt: number): number | { error: string } {
  const { value, error } = single(query, name);
  if (error) return { error };
  if (value === undefined || value === '') return dflt;
  if (!/^\d{1,9}$/.test(value)) return { error: `${name} must be an integer from ${min} to ${max}` };
  const n = Number(value);
  if (n < min || n > max) return { error: `${name} must be an integer from ${min} to ${max}` };
  return n;
}

/**
 * Parses the catalog's query filters: `category` (one of the spec's categories), `maxPrice`
 * (USD, up to 6 decimals: services priced at most that), `network` (`base` or the node's
 * network), `q` (words matched, all of them, in id, name, description and tags), `limit`
 * (1–100, default 100) and `offset` (0–10,000, default 0). Empty values count as absent;
 * other parameters are ignored.
 */
export function parseCatalogQuery(query: Readonly<Record<string, unknown>>, network: string): CatalogQueryResult {
  const bad = (param: string, message: string): CatalogQueryResult => ({ ok: false, param, message });
  const out: { -readonly [K in keyof CatalogFilters]: CatalogFilters[K] } = { limit: CATALOG_LIMITS.defaultLimit, offset: 0 };

  const category = single(query, 'category');
  if (category.error) return bad('category', category.error);
  if (category.value) {
    if (!(SERVICE_CATEGORIES as readonly string[]).includes(category.value)) return bad('category', `category must be one of ${SERVICE_CATEGORIES.join(', ')}`);
    out.category = category.value as ServiceCategory;
  }

  const maxPrice = single(query, 'maxPrice');
  if (maxPrice.error) return bad('maxPrice', maxPrice.error);
  if (maxPrice.value) {
    const m = /^\$?(\d{1,9})(?:\.(\d{1,6}))?$/.exec(maxPrice.value.trim());
    if (!m) return bad('maxPrice', 'maxPrice must be a non-negative USD amount with at most 6 decimals, e.g. 0.01');
    out.maxPriceMicroUsd = BigInt(m[1]) * MICRO + BigInt((m[2] ?? '').padEnd(6, '0'));
    out.maxPrice = maxPrice.value.trim().replace(/^\$/, '');
  }

  const net = single(query, 'network');
  if (net.error) return bad('network', net.error);
  if (net.value) {
    if (net.value !== 'base' && net.value !== network) return bad('network', `network must be base or ${network}`);
    out.network = net.value;
  }

  const q = single(query, 'q');
  if (q.error) return bad('q', q.error);
  if (q.value !== undefined && q.value.trim() !== '') {
    if (q.value.length > CATALOG_LIMITS.maxQueryChars) return bad('q', `q must be at most ${CATALOG_LIMITS.maxQueryChars} characters`);
    out.q = q.value.trim().toLowerCase().replace(/\s+/g, ' ');
  }

  const limit = intParam(query, 'limit', 1, CATALOG_LIMITS.maxLimit, CATALOG_LIMITS.defaultLimit);
  if (typeof limit !== 'number') return bad('limit', limit.error);
  out.limit = limit;
  const offset = intParam(query, 'offset', 0, CATALOG_LIMITS.maxOffset, 0);
  if (typeof offset !== 'number') return bad('offset', offset.error);
  out.offset = offset;
  return { ok: true, filters: out };
}

const haystacks = new WeakMap<ServiceDefinition, string>();

/** Lowercase text a `q` search runs over: id, name, description, tags. */
function haystackOf(def: ServiceDefinition): string {
  let h = haystacks.get(def);
  if (h === undefined) {
    h = [def.id, def.name, def.description, ...def.tags].join(' ').toLowerCase();
    haystacks.set(def, h);
  }
  return h;
}

/** Whether a service passes the filters (paging aside). */
export function matchesFilters(s: CatalogService, def: ServiceDefinition, f: CatalogFilters): boolean {
  if (f.category && s.category !== f.category) return false;
  if (f.maxPriceMicroUsd !== undefined && BigInt(s.priceUsdcAtomic) > f.maxPriceMicroUsd) return false;
  if (f.network && !s.networks.includes(f.network)) return false;
  if (f.q) {
    const h = haystackOf(def);
    for (const w of f.q.split(' ')) if (!h.includes(w)) return false;
  }
  return true;
}

/** The services matching `f`, before and after paging. */
export function filterServices(services: readonly CatalogService[], defs: readonly ServiceDefinition[], f: CatalogFilters): { total: number; page: CatalogService[] } {
  const matched: CatalogService[] = [];
  for (let i = 0; i < services.length; i++) if (matchesFilters(services[i], defs[i], f)) matched.push(services[i]);
  return { total: matched.length, page: matched.slice(f.offset, f.offset + f.limit) };
}

/** Every service of the snapshot as a catalog entry (catalog order). */
export function buildResources(snap: CatalogSnapshot): CatalogService[] {
  return snap.services.map((d) => buildCatalogService(d, snap));
}
