/**
 * The free discovery documents, as pure functions of a `CatalogSnapshot` (registry, ledger
 * totals, prober health, price, addresses): the catalog (`GET /api/x402/bazaar`, kind
 * `own-bazaar`) and its query filters, the protocol descriptor (`/api/x402`,
 * `/.well-known/x402`), the x402 discovery list (`/x402/discovery`), `/services.json`, and the
 * example calls shown to people and agents. Field names and types are those of
 * `shared/spec/api.md`; exact base-unit strings go beside the spec's numbers.
 *
 * Network naming: the spec writes `native-mainnet` / chain id 1 (and the short form `mainnet`
 * in the descriptor and `?net=`); every document carries the node's own network instead, so a
 * devnet node says `native-devnet` / 1337 / `devnet` (docs/decisions.md).
 */
import { formatAmount } from '../consensus/amount.js';
import type { ServiceCategory, ServiceDefinition, ServiceUsage } from '../services/types.js';
import type { HealthReader, HealthSummary } from '../services/prober.js';
import { MICRO, nativeNumber, usdcAtomicOf, usdNumber } from '../x402/pricing.js';
import { BASE_USDC, BROADCAST_PATH, nativeRequirements, usdcRequirements, type PaymentRequirements } from '../x402/quote.js';

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
  readonly nativeUsd: { readonly microUsd: bigint; readonly source: string; readonly live: boolean };
  readonly usage: ServiceUsage;
  readonly health: HealthReader;
  /** Unix ms. */
  readonly now: number;
  /** Native payee (bech32m); undefined when this node has none (nothing is sold). */
  readonly payTo?: string;
  readonly usdc?: UsdcRail;
  /** Software version of the node. */
  readonly nodeVersion: string;
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
    lastVerifiedAt: h.lastVerifiedAt,
    latencyMs: h.latencyMs,
    metadata: {
      scheme: 'native-x402',
      network: snap.network,
      asset: 'NATIVE',
      txType: 'agent_invoke',
      requestFormat: def.requestFormat,
      requestRequired: def.requestRequired,
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

// ---------------------------------------------------------------------------------------------
// The catalog document

/** The spec's Catalog document. */
export interface CatalogDocument {
  kind: 'own-bazaar';
  protocol: 'native-x402';
  x402Version: 1;
  marketplace: string;
  description: string;
  network: string;
  chainId: number;
  version: string;
  nativeUsd: number;
  updatedAt: number;
  autoRegistration: { live: boolean; note: string; totalServices: number; nodeFleetBlueprints: number; providerAgentServices: number };
  rails: {
    primary: { scheme: 'native-x402'; network: string; chainId: number; asset: 'NATIVE'; facilitator: string; note: string };
    secondary: { scheme: 'exact'; asset: 'USDC'; settlement: string; note: string; network: 'base'; enabled: boolean };
    howToPay: string;
  };
  resources: CatalogService[];
  health: HealthSummary;
  filters: Record<string, unknown>;
  freeSurfaces: Record<string, string | null>;
  externalMarkets: { note: string; addresses: Record<string, string> };
}

/** Every service of the snapshot as a catalog entry (catalog order). */
export function buildResources(snap: CatalogSnapshot): CatalogService[] {
  return snap.services.map((d) => buildCatalogService(d, snap));
}

/** Absolute addresses of the free surfaces (the spec's `freeSurfaces`). */
export function freeSurfaces(baseUrl: string, network: string): Record<string, string | null> {
  return {
    openCatalog: `${baseUrl}${PATHS.bazaar}`,
    bazaarDirectory: `${baseUrl}${PATHS.discovery}`,
    humanMarketplace: `${baseUrl}${PATHS.marketplace}`,
    llmsTxt: `${baseUrl}${PATHS.llmsTxt}`,
    agentCard: `${baseUrl}${PATHS.agentCard}`,
    // The spec's agent mailbox and community lobby are not served by this node yet.
    mailbox: null,
    communityLobby: null,
    onboarding: `${baseUrl}${PATHS.join}`,
    // Beyond the spec's list:
    agentCardV1: `${baseUrl}${PATHS.agentCardV1}`,
    protocolDescriptor: `${baseUrl}${PATHS.wellKnown}`,
    servicesJson: `${baseUrl}${PATHS.servicesJson}`,
    openApi: `${baseUrl}${PATHS.openApi}`,
    mcp: `${baseUrl}${PATHS.mcp}?net=${shortNetwork(network)}`,
    agents: `${baseUrl}${PATHS.agents}`,
  };
}

/** How to pay, in one paragraph (catalog `rails.howToPay`, llms.txt, the pages). */
export function howToPay(snap: Pick<CatalogSnapshot, 'baseUrl' | 'usdc'>): string {
  const native =
    `Native rail: POST ${snap.baseUrl}/api/x402/{serviceId} with {"request": "…"} → 402 quote; sign an agent_invoke for exactly the quoted ` +
    `maxAmountRequired (NATIVE base units) to the quoted payTo (with the quoted requestHash), broadcast it with POST ${snap.baseUrl}${BROADCAST_PATH}, ` +
    `wait for the block (about 3 s), then POST the same request again with {"payment": {"txId": "…"}} → 200 {paid, result, receipt}. ` +
    '`native-node call <serviceId> [request]` does all of it.';
  const usdc = snap.usdc
    ? ` USDC rail: pay the 402's exact/base option (maxAmountRequired USDC atomic units to payTo) with an EIP-3009 authorization in the X-PAYMENT header, settled by ${snap.usdc.facilitatorUrl}.`
    : ' The USDC rail (exact on base) is not enabled on this node.';
  return native + usdc;
}

/** The catalog document for `filters` over precomputed `resources` (`buildResources(snap)`). */
export function buildCatalog(snap: CatalogSnapshot, filters: CatalogFilters, resources: readonly CatalogService[] = buildResources(snap)): CatalogDocument {
  const { total, page } = filterServices(resources, snap.services, filters);
  const nodeOperated = snap.services.filter((d) => d.nodeOperated).length;
  const applied: Record<string, unknown> = {};
  if (filters.category) applied.category = filters.category;
  if (filters.maxPrice !== undefined) applied.maxPrice = filters.maxPrice;
  if (filters.network) applied.network = filters.network;
  if (filters.q) applied.q = filters.q;
  return {
    kind: 'own-bazaar',
    protocol: 'native-x402',
    x402Version: 1,
    marketplace: 'native-node x402 bazaar',
    description: 'Paid calls for software agents, sold per call with x402: no account, no API key; the payment is the authentication. Generated live from the service registry, the settlement ledger and chain state.',
    network: snap.network,
    chainId: snap.chainId,
    version: CATALOG_VERSION,
    nativeUsd: usdNumber(snap.nativeUsd.microUsd),
    updatedAt: snap.now,
    autoRegistration: {
      live: true,
      note: 'Every service of the node registry that is sellable here appears automatically, with its live health and settled volume.',
      totalServices: snap.services.length,
      nodeFleetBlueprints: nodeOperated,
      providerAgentServices: snap.services.length - nodeOperated,
    },
    rails: {
      primary: {
        scheme: 'native-x402',
        network: snap.network,
        chainId: snap.chainId,
        asset: 'NATIVE',
        facilitator: 'node-native',
        note: 'The node verifies the agent_invoke from its own chain state (mined, exact amount, right payee and service, not used before); a failed run is refunded on-chain.',
      },
      secondary: {
        scheme: 'exact',
        asset: 'USDC',
        network: 'base',
        enabled: snap.usdc !== undefined,
        settlement: snap.usdc ? snap.usdc.facilitatorUrl : 'disabled',
        note: snap.usdc ? 'x402 v1 exact on base: EIP-3009 authorization in X-PAYMENT, verified, executed, then settled by the facilitator (never settled when the service fails).' : 'Not enabled on this node (the operator sets --usdc-pay-to).',
      },
      howToPay: howToPay(snap),
    },
    resources: page,
    health: snap.health.summary(snap.now),
    filters: {
      note: `Query filters of ${PATHS.bazaar}: category (one of the categories), maxPrice (USD, services priced at most that), network (base or ${snap.network}), q (words matched in id, name, description and tags; all must match), limit (1–${CATALOG_LIMITS.maxLimit}, default ${CATALOG_LIMITS.defaultLimit}), offset (0–${CATALOG_LIMITS.maxOffset}, default 0). A bad value is a 400 naming the parameter.`,
      example: `${snap.baseUrl}${PATHS.bazaar}?category=explorer&maxPrice=0.01&network=${snap.network}&q=block&limit=10&offset=0`,
      categories: [...SERVICE_CATEGORIES],
      applied,
      limit: filters.limit,
      offset: filters.offset,
      defaults: { limit: CATALOG_LIMITS.defaultLimit, offset: 0 },
      maximum: { limit: CATALOG_LIMITS.maxLimit, offset: CATALOG_LIMITS.maxOffset, qChars: CATALOG_LIMITS.maxQueryChars },
      total,
      returned: page.length,
    },
    freeSurfaces: freeSurfaces(snap.baseUrl, snap.network),
    externalMarkets: {
      note: 'External x402 directories that index paid endpoints. This node does not register itself anywhere: an operator lists its public address there by hand.',
      addresses: {
        x402Bazaar: 'https://api.cdp.coinbase.com/platform/v2/x402/discovery/resources',
        x402scan: 'https://www.x402scan.com',
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The protocol descriptor

/** Per-service entry of the protocol descriptor. */
export interface DescriptorService extends Omit<ProvenFields, 'provenVolumeBase' | 'provenVolumeUsdcAtomic'> {
  serviceId: string;
  name: string;
  description: string;
  capability: ServiceCategory;
  priceAman: number;
  priceUsd: number;
  agentId: string;
  agentName: string;
  nodeOperated: boolean;
  endpoint: string;
  requestFormat: string;
}

/** The spec's Protocol descriptor (`GET /api/x402`, `GET /.well-known/x402`). */
export function buildProtocolDescriptor(snap: CatalogSnapshot): Record<string, unknown> {
  const b = snap.baseUrl;
  const services: DescriptorService[] = snap.services.map((d) => {
    const atomic = priceAtomic(d, snap.nativeUsd.microUsd);
    const { provenCalls, provenCallsUsdc, provenVolumeUsdc, provenVolumeAman } = provenFields(snap.usage, d.id);
    return {
      serviceId: d.id,
      name: d.name,
      description: d.description,
      capability: d.category,
      priceAman: nativeNumber(d.priceBase),
      priceUsd: usdNumber(atomic),
      provenCalls,
      provenCallsUsdc,
      provenVolumeUsdc,
      provenVolumeAman,
      agentId: d.providerAgent,
      agentName: d.providerAgent,
      nodeOperated: d.nodeOperated,
      endpoint: `${b}/api/x402/${d.id}`,
      requestFormat: d.requestFormat,
    };
  });
  const usdc = snap.usdc;
  const facilitators: Record<string, unknown>[] = [
    {
      mode: 'node-native',
      url: `${b}/api/x402`,
      default: true,
      verification: 'agent_invoke checked from the node’s own chain state: mined, type, service, payee, exact amount, request hash, never used before',
    },
  ];
  if (usdc) {
    facilitators.push({
      mode: 'cdp',
      url: usdc.facilitatorUrl,
      default: false,
      verification: 'facilitator /verify before the service runs, /settle after it succeeded',
      scheme: 'exact',
      network: 'base',
      asset: 'USDC',
      assetContract: BASE_USDC.asset,
      payTo: usdc.payTo,
      note: 'x402 v1 exact: EIP-3009 TransferWithAuthorization in the X-PAYMENT header',
    });
  }
  return {
    protocol: 'native-x402',
    version: PROTOCOL_DESCRIPTOR_VERSION,
    x402Version: 1,
    description: 'Pay-per-call services for software agents over x402: a call without payment answers 402 with a quote; pay it on-chain (native rail) or with USDC on Base; repeat the call with the proof and get the result and a receipt.',
    network: shortNetwork(snap.network),
    networkName: snap.network,
    chainId: snap.chainId,
    nativeUsd: usdNumber(snap.nativeUsd.microUsd),
    updatedAt: snap.now,
    payment: {
      scheme: 'native-x402',
      asset: 'NATIVE',
      txType: 'agent_invoke',
      decimals: 8,
      payTo: snap.payTo ?? null,
      broadcast: `${b}${BROADCAST_PATH}`,
      step1: `POST ${b}/api/x402/{serviceId} with {"request": "…"} (or POST ${b}/api/x402 with {"serviceId", "request"}): the 402 quote names the exact price (maxAmountRequired, base units), payTo and requestHash.`,
      step2: `Sign an agent_invoke for exactly that amount to payTo (serviceId and requestHash in its payload) and broadcast it: POST ${b}${BROADCAST_PATH} {"tx": "<hex>"}; the block follows in about 3 seconds.`,
      step3: `POST the same request again with {"payment": {"txId": "<id>"}} (add ?wait=N to wait up to N seconds for the block): 200 {paid, result, receipt}; a failed run is refunded on-chain.`,
    },
    baseUsdc: {
      mode: usdc ? 'facilitator' : 'disabled',
      facilitatorUrl: usdc ? usdc.facilitatorUrl : null,
      network: 'base',
      chainId: BASE_USDC.chainId,
      asset: 'USDC',
      assetContract: BASE_USDC.asset,
      payTo: usdc ? usdc.payTo : null,
      scheme: 'exact',
      authVerified: usdc ? usdc.authVerified : false,
      authDetail: usdc
        ? usdc.authVerified
          ? 'the EIP-3009 authorization (signature, amount, payee, validity window, unused nonce) is checked by the node, then by the facilitator'
          : 'the EIP-3009 authorization is checked by the facilitator'
        : 'USDC rail disabled',
      note: usdc ? 'Pay maxAmountRequired of the exact/base option in the 402 to its payTo; send X-PAYMENT; a failed run is never settled.' : 'The operator enables the USDC rail with --usdc-pay-to.',
    },
    facilitators,
    discovery: {
      wellKnown: `${b}${PATHS.wellKnown}`,
      bazaar: `${b}${PATHS.bazaar}`,
      services: `${b}${PATHS.servicesJson}`,
      agentCard: `${b}${PATHS.agentCard}`,
      llmsTxt: `${b}${PATHS.llmsTxt}`,
      // The spec's service-request board is not served by this node yet.
      requests: null,
      perService: `${b}${PATHS.perService}`,
      x402Discovery: `${b}${PATHS.discovery}`,
      openApi: `${b}${PATHS.openApi}`,
      mcp: `${b}${PATHS.mcp}?net=${shortNetwork(snap.network)}`,
      marketplace: `${b}${PATHS.marketplace}`,
    },
    services,
    nodeOperatedCount: snap.services.filter((d) => d.nodeOperated).length,
    priceFeed: {
      source: snap.nativeUsd.source,
      live: snap.nativeUsd.live,
      // No external market-data provider is configured on this node: majors are unknown (null), not invented.
      majors: { BTC: null, ETH: null, SOL: null, BNB: null, LTC: null },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// x402 discovery list and services.json

/** The payment options of a service as its 402 would list them (no request hash: that binds one request). */
export function acceptsOf(def: ServiceDefinition, snap: CatalogSnapshot): PaymentRequirements[] {
  const q = { resource: `${snap.baseUrl}/api/x402/${def.id}`, network: snap.network, chainId: snap.chainId, payTo: snap.payTo ?? '', microUsd: snap.nativeUsd.microUsd, usdc: snap.usdc };
  const accepts = [nativeRequirements(def, q)];
  if (snap.usdc) accepts.push(usdcRequirements(def, { ...q, usdc: snap.usdc }));
  return accepts;
}

/** Default and largest `limit` of `/x402/discovery`. */
export const DISCOVERY_LIMITS = Object.freeze({ defaultLimit: 100, maxLimit: 100, maxOffset: 10_000 });

/** `GET /x402/discovery`: the x402 discovery list format (`{x402Version, items, pagination}`). */
export function buildDiscoveryList(snap: CatalogSnapshot, page: { limit: number; offset: number }): Record<string, unknown> {
  const lastUpdated = new Date(snap.now).toISOString();
  const defs = snap.services.slice(page.offset, page.offset + page.limit);
  return {
    x402Version: 1,
    items: defs.map((def) => {
      const h = snap.health.get(def.id);
      const atomic = priceAtomic(def, snap.nativeUsd.microUsd);
      return {
        resource: `${snap.baseUrl}/api/x402/${def.id}`,
        type: 'http',
        x402Version: 1,
        accepts: acceptsOf(def, snap),
        lastUpdated,
        metadata: {
          serviceId: def.id,
          name: def.name,
          description: def.description,
          category: def.category,
          tags: [...def.tags],
          method: 'POST',
          price: dollarText(atomic),
          priceAman: nativeNumber(def.priceBase),
          priceUsd: usdNumber(atomic),
          requestFormat: def.requestFormat,
          requestRequired: def.requestRequired,
          input: { type: 'http', method: 'POST', bodyType: 'json', bodyFields: { request: { type: 'string', required: def.requestRequired, description: def.requestFormat || 'no input' } } },
          healthStatus: h.status,
          lastVerifiedAt: h.lastVerifiedAt,
          providerAgent: def.providerAgent,
          ...provenFields(snap.usage, def.id),
        },
      };
    }),
    pagination: { limit: page.limit, offset: page.offset, total: snap.services.length },
  };
}

/** `GET /services.json`: every service with its input schema and an example request. */
export function buildServicesJson(snap: CatalogSnapshot): Record<string, unknown> {
  return {
    network: snap.network,
    chainId: snap.chainId,
    version: CATALOG_VERSION,
    updatedAt: snap.now,
    nativeUsd: usdNumber(snap.nativeUsd.microUsd),
    count: snap.services.length,
    services: snap.services.map((def) => {
      const atomic = priceAtomic(def, snap.nativeUsd.microUsd);
      const h = snap.health.get(def.id);
      return {
        serviceId: def.id,
        name: def.name,
        category: def.category,
        description: def.description,
        tags: [...def.tags],
        endpoint: `${snap.baseUrl}/api/x402/${def.id}`,
        method: 'POST',
        price: dollarText(atomic),
        priceAman: nativeNumber(def.priceBase),
        priceNative: formatAmount(def.priceBase),
        priceBase: def.priceBase.toString(),
        priceUsd: usdNumber(atomic),
        requestFormat: def.requestFormat,
        requestRequired: def.requestRequired,
        requestIsJson: def.inputIsJson === true,
        inputSchema: def.inputSchema,
        example: exampleRequest(def, { payTo: snap.payTo }) ?? null,
        providerAgent: def.providerAgent,
        nodeOperated: def.nodeOperated,
        healthStatus: h.status,
        latencyMs: h.latencyMs,
      };
    }),
  };
}

// ---------------------------------------------------------------------------------------------
// Example calls

/** An EVM address that passes every checksum (Base's USDC contract): examples only. */
const SAMPLE_EVM = BASE_USDC.asset;
const SAMPLE_TEXT = 'The node settled my payment in one block and the result was exactly what I needed.';
const sampleItems = [{ description: 'Consulting, one hour', qty: 2, unitPrice: 120 }];

/** Example `request` values: a string, or a function of the node (its payee address is a valid address of its network). */
const EXAMPLES: Readonly<Record<string, string | ((n: { payTo?: string }) => string | undefined)>> = {
  'native-token-audit': 'USDC',
  'native-image-gen': 'a lighthouse at dawn, watercolor',
  'native-swap-quote': '100 NATIVE -> USDC',
  'native-wallet-portfolio': (n) => n.payTo,
  'native-llm-chat': 'Explain proof of work in one sentence.',
  'native-address-validator': (n) => n.payTo ?? SAMPLE_EVM,
  'native-geo-ip': '8.8.8.8',
  'native-world-clock': 'Europe/Berlin',
  'native-supply-audit': 'USDC',
  'native-token-launch-check': 'GOLD|Gold Token|8|21000000',
  'native-pool-analytics': 'NATIVE/USDC',
  'native-holder-stats': 'USDC',
  'native-staking-rewards': '1000',
  'native-whale-watch': '10000',
  'native-block-inspect': '1',
  'native-service-search': 'gas fees',
  'native-web-fetch': 'https://example.com',
  'native-url-meta': 'https://example.com',
  'native-web-search': 'x402 agent payments',
  'native-rss-read': 'https://example.com/feed.xml',
  'native-domain-info': 'example.com',
  'native-weather': 'Berlin',
  'native-fx-rates': '100 EUR to USD',
  'native-email-validate': 'alice@example.com',
  'native-translate': 'de|Hello world',
  'native-summarize': 'https://example.com',
  'native-sentiment': SAMPLE_TEXT,
  'native-keywords': SAMPLE_TEXT,
  'native-crypto-price': 'BTC',
  'native-gas-price': 'base',
  'native-evm-balance': SAMPLE_EVM,
  'native-ens-resolve': 'vitalik.eth',
  'native-x402-validation': 'https://example.com',
  'native-invoice-pdf': JSON.stringify({ invoiceNumber: 'INV-1001', buyer: { name: 'Acme GmbH', address: 'Hauptstr. 1, Berlin' }, items: sampleItems, vatRate: 19 }),
  'native-invoice-proforma': JSON.stringify({ proformaNumber: 'PF-1001', buyer: { name: 'Acme GmbH', address: 'Hauptstr. 1, Berlin' }, items: sampleItems, vatRate: 19, validUntil: '2030-12-31', currency: 'EUR' }),
  'native-receipt-payment': JSON.stringify({ receiptNumber: 'RC-1001', buyer: { name: 'Acme GmbH' }, items: sampleItems, payment: { method: 'card', reference: 'ch_123', paidOn: '2030-01-15' }, vatRate: 19 }),
  'native-credit-note': JSON.stringify({ creditNoteNumber: 'CN-1001', buyer: { name: 'Acme GmbH' }, originalInvoice: 'INV-1001', items: [{ description: 'Refund, one hour', qty: 1, unitPrice: -120 }], vatRate: 19 }),
  'native-quote-estimate': JSON.stringify({ quoteNumber: 'Q-1001', buyer: { name: 'Acme GmbH', address: 'Hauptstr. 1, Berlin' }, items: sampleItems, vatRate: 19, validUntil: '2030-12-31' }),
  'native-crypto-price-feed': 'bitcoin',
  'native-b2b-compliance-report': JSON.stringify({ txs: [{ id: 'tx-1', amount: 2500, counterparty: 'Acme GmbH', country: 'DE' }] }),
  'native-bridge-route-check': 'ethereum-solana-100',
  'native-risk-score': SAMPLE_EVM,
  'native-crypto-whale-watch': SAMPLE_EVM,
  'native-crypto-portfolio-tracker': SAMPLE_EVM,
  'native-aml-sanctions-scan': JSON.stringify({ entity: 'Acme Trading Ltd', lists: ['OFAC', 'EU', 'UN'] }),
};

/** Placeholder shown where an example needs a value only the caller has (a transaction id). */
export const TX_ID_PLACEHOLDER = '<txId>';

/**
 * An example `request` for a service: a valid input, undefined for services that take none,
 * or `<txId>` for native-tx-lookup (which needs a transaction of the caller's).
 */
export function exampleRequest(def: ServiceDefinition, node: { payTo?: string }): string | undefined {
  if (def.id === 'native-tx-lookup') return TX_ID_PLACEHOLDER;
  const e = EXAMPLES[def.id];
  const v = typeof e === 'function' ? e(node) : e;
  return v === undefined || v === '' ? undefined : v;
}

/** Single-quotes a word for a POSIX shell. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Copyable example calls of a service: the unpaid quote and the paid retry with curl, and the one-line CLI call. */
export function exampleCalls(def: ServiceDefinition, baseUrl: string, node: { payTo?: string; defaultNodeUrl?: string }): { request?: string; curlQuote: string; curlPaid: string; cli: string } {
  const request = exampleRequest(def, node);
  const url = `${baseUrl}/api/x402/${def.id}`;
  const body = request === undefined ? {} : { request };
  const paidBody = { ...body, payment: { txId: TX_ID_PLACEHOLDER } };
  const curl = (u: string, b: unknown) => `curl -s -X POST ${shellQuote(u)} -H 'content-type: application/json' -d ${shellQuote(JSON.stringify(b))}`;
  const nodeFlag = node.defaultNodeUrl !== undefined && baseUrl === node.defaultNodeUrl ? '' : ` --node ${shellQuote(baseUrl)}`;
  return {
    ...(request === undefined ? {} : { request }),
    curlQuote: curl(url, body),
    curlPaid: curl(`${url}?wait=30`, paidBody),
    cli: `native-node call${nodeFlag} ${def.id}${request === undefined ? '' : ` ${request.startsWith('-') ? '-- ' : ''}${shellQuote(request)}`}`,
  };
}
