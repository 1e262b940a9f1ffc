/**
 * The four x402 discovery documents, as pure functions of a `CatalogSnapshot` (catalog.ts): the
 * catalog (`GET /api/x402/bazaar`, kind `own-bazaar`), the protocol descriptor (`/api/x402`,
 * `/.well-known/x402`), the x402 discovery list (`/x402/discovery`) and `/services.json`. Field
 * names and types are those of `shared/spec/api.md`; exact base-unit strings go beside the
 * spec's numbers.
 */
import { formatAmount } from '../consensus/amount.js';
import { requestIsRequired, type HealthReason, type ServiceCategory, type ServiceDefinition } from '../services/types.js';
import type { HealthSummary } from '../services/prober.js';
import { nativeNumber, usdNumber } from '../x402/core/pricing.js';
import { BASE_USDC, BROADCAST_PATH, nativeRequirements, usdcRequirements, type PaymentRequirements } from '../x402/core/quote.js';
import { CATALOG_LIMITS, CATALOG_VERSION, PATHS, PROTOCOL_DESCRIPTOR_VERSION, SERVICE_CATEGORIES, buildResources, dollarText, filterServices, healthReasonOf, priceAtomic, provenFields, shortNetwork, type CatalogFilters, type CatalogService, type CatalogSnapshot, type ProvenFields } from './catalog.js';
import { exampleRequest } from './examples.js';

/** What the documents say of a JSON-input service's `request`: a JSON object, or the same JSON as text (x402/core/paidCall.ts requestTextOf). */
export const JSON_REQUEST_NOTE = 'A JSON object, or the same JSON as a string, is accepted as `request`; a native payment commits to the string (an object counts as its JSON.stringify).';

/**
 * The x402 discovery list's `bodyFields.request` of a service: a string, or for a JSON-input
 * service a JSON object (its properties those of the input schema) that may also be sent as text.
 */
export function requestBodyField(def: ServiceDefinition): Record<string, unknown> {
  const required = requestIsRequired(def);
  const description = def.requestFormat || 'no input';
  if (!def.inputIsJson) return { type: 'string', required, description };
  const props = (def.inputSchema as { properties?: unknown }).properties;
  return { type: 'object', required, description: `${description}. ${JSON_REQUEST_NOTE}`, ...(props ? { properties: props } : {}) };
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

/** Absolute addresses of the free surfaces (the spec's `freeSurfaces`). */
export function freeSurfaces(baseUrl: string, network: string): Record<string, string | null> {
  return {
    openCatalog: `${baseUrl}${PATHS.bazaar}`,
    bazaarDirectory: `${baseUrl}${PATHS.discovery}`,
    humanMarketplace: `${baseUrl}${PATHS.marketplace}`,
    llmsTxt: `${baseUrl}${PATHS.llmsTxt}`,
    agentCard: `${baseUrl}${PATHS.agentCard}`,
    // The provider agents' job inbox (signed) and the community lobby.
    mailbox: `${baseUrl}${PATHS.inbox}`,
    communityLobby: `${baseUrl}${PATHS.community}`,
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
    `maxAmountRequired (NATIVE base units) to the quoted payTo, its requestHash the commitment of extra.commitment (seller id, service, request and a 32-byte secret salt of yours), broadcast it with POST ${snap.baseUrl}${BROADCAST_PATH}, ` +
    `wait for the block (about 3 s), then POST the same request again with {"payment": {"txId": "…", "salt": "…"}} → 200 {paid, result, receipt}. ` +
    '`npx native-node call <serviceId> [request]` (in the node\'s folder) does all of it.';
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
      note: 'Every service of the node registry, and every provider agent service approved by moderation on chain and not retired or suspended, appears automatically, with its live health and settled volume.',
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
  /** Beyond the spec's list: the prober's status and, when `down` or `degraded`, why (as in the catalog). */
  healthStatus: string;
  healthReason: HealthReason | null;
}

/** The spec's Protocol descriptor (`GET /api/x402`, `GET /.well-known/x402`). */
export function buildProtocolDescriptor(snap: CatalogSnapshot): Record<string, unknown> {
  const b = snap.baseUrl;
  const services: DescriptorService[] = snap.services.map((d) => {
    const atomic = priceAtomic(d, snap.nativeUsd.microUsd);
    const h = snap.health.get(d.id);
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
      healthStatus: h.status,
      healthReason: healthReasonOf(h),
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
      step1: `POST ${b}/api/x402/{serviceId} with {"request": "…"} (or POST ${b}/api/x402 with {"serviceId", "request"}): the 402 quote names the exact price (maxAmountRequired, base units), payTo, the seller id (extra.sellerId) and the confirmations a payment needs.`,
      step2: `Pick a random 32-byte salt and keep it secret; sign an agent_invoke for exactly that amount to payTo with serviceId and requestHash = the commitment of extra.commitment (sellerId ‖ service ‖ request ‖ salt, see the agents\' guide) in its payload and broadcast it: POST ${b}${BROADCAST_PATH} {"tx": "<hex>"}; the block follows in about 3 seconds.`,
      step3: `POST the same request again with {"payment": {"txId": "<id>", "salt": "<your salt, 64 hex>"}} (only the salt proves you are the payer) (add ?wait=N to wait up to N seconds for the block): 200 {paid, result, receipt}; a failed run is refunded on-chain.`,
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
      requests: `${b}${PATHS.requests}`,
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
      nativeUsdChange24h: snap.nativeUsd.change24h ?? null,
      // From the market-data provider's last answer (native-crypto-prices); unknown (null) until there is a fresh one, never invented.
      majors: { BTC: null, ETH: null, SOL: null, BNB: null, LTC: null, ...snap.majors?.usd },
      majorsSource: snap.majors?.source ?? null,
      majorsUpdatedAt: snap.majors?.at ?? null,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// x402 discovery list and services.json

/** The payment options of a service as its 402 lists them. */
export function acceptsOf(def: ServiceDefinition, snap: CatalogSnapshot): PaymentRequirements[] {
  const q = {
    resource: `${snap.baseUrl}/api/x402/${def.id}`,
    network: snap.network,
    chainId: snap.chainId,
    payTo: snap.payTo ?? '',
    sellerId: snap.seller?.sellerId ?? '',
    confirmations: snap.seller?.confirmations ?? 1,
    microUsd: snap.nativeUsd.microUsd,
    usdc: snap.usdc,
  };
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
          requestRequired: requestIsRequired(def),
          input: { type: 'http', method: 'POST', bodyType: 'json', bodyFields: { request: requestBodyField(def) } },
          healthStatus: h.status,
          healthReason: healthReasonOf(h),
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
        requestRequired: requestIsRequired(def),
        requestIsJson: def.inputIsJson === true,
        // The JSON types `request` may have: a JSON-input service takes the object itself as well as its text.
        requestTypes: def.inputIsJson ? ['object', 'string'] : ['string'],
        inputSchema: def.inputSchema,
        example: exampleRequest(def, snap) ?? null,
        providerAgent: def.providerAgent,
        nodeOperated: def.nodeOperated,
        healthStatus: h.status,
        healthReason: healthReasonOf(h),
        latencyMs: h.latencyMs,
      };
    }),
  };
}
