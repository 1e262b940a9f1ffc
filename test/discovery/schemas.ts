/**
 * JSON Schemas written from the field tables of `shared/spec/api.md` (Service, its metadata, the
 * Catalog document, the Protocol descriptor, the Quote), plus the published formats the issue
 * names for the other surfaces (x402 discovery list, A2A agent card v1.0 + legacy fields). Every
 * field of a table is required with the table's type; extra fields are allowed (the node adds
 * exact base-unit strings beside the spec's numbers).
 *
 * Where the spec writes `native-mainnet` / chain id 1 / `mainnet`, the schemas take the
 * network of the node under test (a devnet node carries `native-devnet` / 1337 / `devnet`).
 */
import { Ajv, type ValidateFunction } from 'ajv';

/** Network naming of the node under test. */
export interface NetworkNames {
  network: string;
  chainId: number;
  short: string;
}

export const MAINNET: NetworkNames = { network: 'native-mainnet', chainId: 1, short: 'mainnet' };
export const DEVNET: NetworkNames = { network: 'native-devnet', chainId: 1337, short: 'devnet' };

/** The spec's categories. */
export const SPEC_CATEGORIES = ['audit', 'compute', 'pricing', 'market-data', 'portfolio', 'utility', 'oracle', 'compliance', 'analytics', 'trading', 'reports', 'staking-calculator', 'whale-watch', 'explorer', 'bridge', 'search', 'risk'];

const str = { type: 'string' } as const;
const bool = { type: 'boolean' } as const;
const int = { type: 'integer' } as const;
const num = { type: 'number' } as const;
const url = { type: 'string', pattern: '^https?://' } as const;
const obj = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ type: 'object', required: Object.keys(properties), properties, ...extra });

/** The schemas, for one network naming. */
export function specSchemas(n: NetworkNames): Record<string, Record<string, unknown>> {
  const metadata = obj({
    scheme: { const: 'native-x402' },
    network: { const: n.network },
    asset: { const: 'NATIVE' },
    txType: { const: 'agent_invoke' },
    requestFormat: str,
    requestRequired: bool,
    nodeOperated: bool,
    providerAgent: str,
    provenCalls: { type: 'integer', minimum: 0 },
    provenCallsUsdc: { type: 'integer', minimum: 0 },
    provenVolumeUsdc: { type: 'number', minimum: 0 },
    provenVolumeAman: { type: 'number', minimum: 0 },
    // "null or value, present in every entry": required, any type.
    b2b: {},
  });
  const service = obj({
    endpoint: { type: 'string', pattern: '^https?://[^/]+/api/x402/native-[a-z0-9-]+$' },
    type: { const: 'http' },
    x402Version: { const: 1 },
    method: { const: 'POST' },
    serviceId: { type: 'string', pattern: '^native-[a-z0-9-]+$' },
    name: str,
    description: str,
    price: { type: 'string', pattern: '^\\$\\d+(\\.\\d+)?$' },
    priceAman: { type: 'number', exclusiveMinimum: 0 },
    priceUsd: { type: 'number', exclusiveMinimum: 0 },
    category: { enum: SPEC_CATEGORIES },
    tags: { type: 'array', items: str },
    paymentRails: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: ['x402-USDC-base', 'x402-native'] } },
    networks: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: ['base', n.network] } },
    healthStatus: { enum: ['active', 'degraded', 'down', 'unknown'] },
    lastVerifiedAt: { type: 'integer', minimum: 0 },
    latencyMs: { type: 'integer', minimum: 0 },
    metadata,
  });
  const counts = { type: 'integer', minimum: 0 };
  const catalog = obj({
    kind: { const: 'own-bazaar' },
    protocol: { const: 'native-x402' },
    x402Version: { const: 1 },
    marketplace: str,
    description: str,
    network: { const: n.network },
    chainId: { const: n.chainId },
    version: { type: 'string', pattern: '^\\d+\\.\\d+\\.\\d+$' },
    nativeUsd: num,
    updatedAt: int,
    autoRegistration: obj({ live: bool, note: str, totalServices: counts, nodeFleetBlueprints: counts, providerAgentServices: counts }),
    rails: obj({
      primary: obj({ scheme: str, network: str, chainId: int, asset: str, facilitator: str, note: str }),
      secondary: obj({ scheme: str, asset: str, settlement: str, note: str }),
      howToPay: str,
    }),
    resources: { type: 'array', items: service },
    health: obj({ total: counts, active: counts, degraded: counts, down: counts, unknown: counts, checkedAt: counts, ageMs: counts }),
    filters: obj({ note: str, example: str }),
    freeSurfaces: obj(
      Object.fromEntries(['openCatalog', 'bazaarDirectory', 'humanMarketplace', 'llmsTxt', 'agentCard', 'mailbox', 'communityLobby', 'onboarding'].map((k) => [k, { anyOf: [url, { type: 'null' }] }])),
    ),
    externalMarkets: obj({ note: str, addresses: { type: 'object', additionalProperties: url } }),
  });
  const descriptorService = obj({
    serviceId: { type: 'string', pattern: '^native-' },
    name: str,
    description: str,
    capability: { enum: SPEC_CATEGORIES },
    priceAman: num,
    priceUsd: num,
    provenCalls: counts,
    provenCallsUsdc: counts,
    provenVolumeUsdc: num,
    provenVolumeAman: num,
    agentId: str,
    agentName: str,
    nodeOperated: bool,
    endpoint: url,
    requestFormat: str,
  });
  const nullableStr = { type: ['string', 'null'] };
  const descriptor = obj({
    protocol: str,
    version: { const: 1 },
    description: str,
    network: { const: n.short },
    chainId: { const: n.chainId },
    nativeUsd: num,
    payment: obj({ scheme: { const: 'native-x402' }, asset: { const: 'NATIVE' }, step1: str, step2: str, step3: str }),
    baseUsdc: obj({
      mode: str,
      facilitatorUrl: nullableStr,
      network: { const: 'base' },
      chainId: { const: 8453 },
      asset: { const: 'USDC' },
      assetContract: { type: 'string', pattern: '^0x[0-9a-fA-F]{40}$' },
      payTo: nullableStr,
      scheme: { const: 'exact' },
      authVerified: bool,
      authDetail: str,
      note: str,
    }),
    facilitators: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['mode', 'url', 'default', 'verification'],
        properties: { mode: { enum: ['node-native', 'cdp'] }, url: url, default: bool, verification: str },
        if: { properties: { mode: { const: 'cdp' } } },
        then: { required: ['scheme', 'network', 'asset', 'assetContract', 'payTo', 'note'], properties: { scheme: { const: 'exact' }, network: { const: 'base' }, asset: { const: 'USDC' } } },
      },
    },
    discovery: obj({ wellKnown: url, bazaar: url, services: url, agentCard: url, llmsTxt: url, requests: { anyOf: [url, { type: 'null' }] }, perService: url }),
    services: { type: 'array', items: descriptorService },
    nodeOperatedCount: counts,
    priceFeed: obj({ source: str, live: bool, majors: obj(Object.fromEntries(['BTC', 'ETH', 'SOL', 'BNB', 'LTC'].map((k) => [k, { type: ['number', 'null'] }]))) }),
  });
  const requirement = {
    type: 'object',
    required: ['scheme', 'network', 'maxAmountRequired', 'resource', 'description', 'mimeType', 'payTo', 'maxTimeoutSeconds', 'asset'],
    properties: {
      scheme: { enum: ['native-x402', 'exact'] },
      network: { enum: [n.network, 'base'] },
      maxAmountRequired: { type: 'string', pattern: '^[1-9]\\d*$' },
      resource: url,
      description: str,
      mimeType: str,
      payTo: str,
      maxTimeoutSeconds: int,
      asset: str,
      extra: { type: 'object' },
    },
    // The USDC option is exact on base; the native one is native-x402 on the node's network.
    if: { properties: { scheme: { const: 'exact' } } },
    then: { properties: { network: { const: 'base' }, payTo: { pattern: '^0x[0-9a-fA-F]{40}$' } } },
    else: { properties: { network: { const: n.network }, asset: { const: 'NATIVE' } } },
  };
  const quote = obj({ x402: { const: true }, error: { const: 'Payment Required' }, accepts: { type: 'array', minItems: 1, items: requirement, contains: { properties: { scheme: { const: 'native-x402' } } } } });
  const discoveryList = obj({
    x402Version: { const: 1 },
    items: {
      type: 'array',
      items: obj({ resource: url, type: { const: 'http' }, x402Version: { const: 1 }, accepts: { type: 'array', minItems: 1, items: requirement }, lastUpdated: { type: 'string', format: 'date-time' }, metadata: { type: 'object' } }),
    },
    pagination: obj({ limit: counts, offset: counts, total: counts }),
  });
  const skill = obj({ id: str, name: str, description: str, tags: { type: 'array', minItems: 1, items: str } });
  const agentCard = obj({
    name: str,
    description: str,
    supportedInterfaces: { type: 'array', minItems: 1, items: obj({ url: url, protocolBinding: str }) },
    version: str,
    capabilities: { type: 'object' },
    defaultInputModes: { type: 'array', minItems: 1, items: str },
    defaultOutputModes: { type: 'array', minItems: 1, items: str },
    skills: { type: 'array', minItems: 1, items: skill },
    // Legacy readers of /.well-known/agent.json.
    url: url,
    protocolVersion: str,
  });
  const servicesJson = obj({
    network: { const: n.network },
    chainId: { const: n.chainId },
    count: counts,
    services: { type: 'array', items: obj({ serviceId: str, name: str, category: { enum: SPEC_CATEGORIES }, endpoint: url, priceAman: num, priceUsd: num, requestFormat: str, requestRequired: bool, inputSchema: { type: 'object' }, healthStatus: str }) },
  });
  return { metadata, service, catalog, descriptor, quote, discoveryList, agentCard, servicesJson };
}

/** Compiled validators of `specSchemas(n)`, with readable errors. */
export function specValidators(n: NetworkNames): Record<string, (doc: unknown) => string[]> {
  const ajv = new Ajv({ allErrors: true, strict: false });
  // date-time without ajv-formats: a strict ISO 8601 UTC check is enough here.
  ajv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
  const out: Record<string, (doc: unknown) => string[]> = {};
  for (const [name, schema] of Object.entries(specSchemas(n))) {
    const v: ValidateFunction = ajv.compile(schema);
    out[name] = (doc) => (v(doc) ? [] : (v.errors ?? []).map((e) => `${name}${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`));
  }
  return out;
}
