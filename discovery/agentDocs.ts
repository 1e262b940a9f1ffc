/**
 * The documents that describe this node's HTTP surface as a whole, built from the same snapshot
 * as the catalog (`catalog.ts`): the A2A agent card (`/.well-known/agent-card.json`, v1.0
 * fields, plus the legacy `url` / `protocolVersion` that `/.well-known/agent.json` readers
 * expect), `/llms.txt` and the OpenAPI 3.1 document (`/openapi.json`).
 *
 * The OpenAPI request schemas are the ones the server validates with: each service's
 * `inputSchema` (the registry compiles exactly that object with ajv; JSON inputs are described as
 * that object or a string whose `contentSchema` is it) and the catalog's filter limits (`CATALOG_LIMITS`).
 */
import { requestIsRequired, type ServiceDefinition } from '../services/types.js';
import { CATALOG_LIMITS, CATALOG_VERSION, MCP_PROTOCOL_VERSION, PATHS, SERVICE_CATEGORIES, dollarText, priceAtomic, shortNetwork, type CatalogSnapshot } from './catalog.js';
import { DISCOVERY_LIMITS, JSON_REQUEST_NOTE, howToPay } from './documents.js';
import { exampleRequest } from './examples.js';
import { formatAmount } from '../consensus/amount.js';
import { DEFAULT_WAIT_SECONDS, MAX_WAIT_SECONDS } from '../x402/core/paidCall.js';

/** Name this node shows in its cards and pages. */
export const NODE_DISPLAY_NAME = 'native-node x402 services';

// ---------------------------------------------------------------------------------------------
// Agent card

/** Input media type of a service (JSON documents or plain text). */
function inputMode(def: ServiceDefinition): string {
  return def.inputIsJson ? 'application/json' : 'text/plain';
}

/** A2A agent card (v1.0 fields and the legacy `url` / `protocolVersion`), one skill per service. */
export function buildAgentCard(snap: CatalogSnapshot): Record<string, unknown> {
  const b = snap.baseUrl;
  return {
    name: NODE_DISPLAY_NAME,
    description: `Sells ${snap.services.length} paid operations (chain data, audits, prices, documents, utilities) to software agents, per call, with x402 on ${snap.network}${snap.usdc ? ' and USDC on Base' : ''}. No account: the payment is the authentication.`,
    version: snap.nodeVersion,
    supportedInterfaces: [
      { url: `${b}/api/x402`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      { url: `${b}${PATHS.mcp}?net=${shortNetwork(snap.network)}`, protocolBinding: 'MCP', protocolVersion: MCP_PROTOCOL_VERSION },
    ],
    provider: { organization: 'native-node operator', url: b },
    documentationUrl: `${b}${PATHS.llmsTxt}`,
    capabilities: {
      streaming: false,
      pushNotifications: false,
      extendedAgentCard: false,
      extensions: [{ uri: `${b}${PATHS.wellKnown}`, description: 'x402 payments: an unpaid call answers 402 with the quote (native-x402 and exact/base options)', required: true }],
    },
    securitySchemes: {},
    security: [],
    defaultInputModes: ['application/json', 'text/plain'],
    defaultOutputModes: ['application/json'],
    skills: snap.services.map((def) => {
      const atomic = priceAtomic(def, snap.nativeUsd.microUsd);
      const example = exampleRequest(def, snap);
      return {
        id: def.id,
        name: def.name,
        description: `${def.description}. Price ${formatAmount(def.priceBase)} NATIVE (${dollarText(atomic)}) per call at ${b}/api/x402/${def.id}.${def.requestFormat ? ` Input: ${def.requestFormat}.` : ' No input.'}`,
        tags: [def.category, ...def.tags],
        examples: example === undefined ? [] : [example],
        inputModes: [inputMode(def)],
        outputModes: ['application/json'],
      };
    }),
    // Legacy (A2A 0.x) fields read from /.well-known/agent.json.
    url: `${b}/api/x402`,
    protocolVersion: '0.3.0',
    preferredTransport: 'HTTP+JSON',
  };
}

// ---------------------------------------------------------------------------------------------
// llms.txt

/** `/llms.txt`: `# name`, `> summary`, free text, then `## Section` lists of `- [title](url): note`. */
export function buildLlmsTxt(snap: CatalogSnapshot): string {
  const b = snap.baseUrl;
  const lines: string[] = [
    `# ${NODE_DISPLAY_NAME}`,
    '',
    `> A full node of a proof-of-work chain (${snap.network}, chain id ${snap.chainId}) that sells ${snap.services.length} paid operations to software agents with x402. No account and no API key: a call without payment answers HTTP 402 with a quote; pay it and repeat the call with the proof.`,
    '',
    howToPay(snap),
    '',
    `Prices are fixed in NATIVE; one NATIVE is worth $${(Number(snap.nativeUsd.microUsd) / 1e6).toString()} (${snap.nativeUsd.source}). Inputs are the string \`request\`; services with JSON inputs take the JSON document as text. A request that does not fit the service is refused with 400 before any quote; a service that is down answers 503.`,
    '',
    '## Discovery',
    '',
    `- [Catalog](${b}${PATHS.bazaar}): every service with price, health, latency and settled calls; filters category, maxPrice, network, q, limit, offset`,
    `- [Protocol descriptor](${b}${PATHS.wellKnown}): payment rails, the three payment steps, facilitators, per-service prices`,
    `- [x402 discovery list](${b}${PATHS.discovery}): the x402 discovery format with each service's payment requirements`,
    `- [Services with input schemas](${b}${PATHS.servicesJson}): JSON Schema and an example request per service`,
    `- [OpenAPI 3.1](${b}${PATHS.openApi}): every endpoint of this node`,
    `- [MCP endpoint](${b}${PATHS.mcp}?net=${shortNetwork(snap.network)}): Model Context Protocol over Streamable HTTP; one tool per service, paid with _meta["x402/payment"] = {"txId", "salt"}`,
    `- [Agent card](${b}${PATHS.agentCard}): A2A agent card, one skill per service`,
    `- [Marketplace](${b}${PATHS.marketplace}): the same catalog for people, with example calls`,
    '',
    '## Services',
    '',
  ];
  for (const cat of SERVICE_CATEGORIES) {
    for (const def of snap.services.filter((d) => d.category === cat)) {
      const atomic = priceAtomic(def, snap.nativeUsd.microUsd);
      const h = snap.health.get(def.id).status;
      lines.push(`- [${def.name}](${b}/api/x402/${def.id}): ${def.id}, ${cat}, ${formatAmount(def.priceBase)} NATIVE (${dollarText(atomic)}), ${h}. ${def.description}.${def.requestFormat ? ` Input: ${def.requestFormat}.` : ' No input.'}${def.inputIsJson ? ` ${JSON_REQUEST_NOTE}` : ''}`);
    }
  }
  lines.push('', '## Optional', '', `- [Agents](${b}${PATHS.agents}): the provider agents and their services`, `- [List a service](${b}${PATHS.join}): how a provider lists a service here`, '');
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------
// OpenAPI 3.1

/**
 * The `request` field of a service's call body: its input schema (text), or for a JSON-input
 * service either the JSON object itself (the input schema) or the same JSON as a string whose
 * `contentSchema` is it — the two forms the paid-call core accepts.
 */
export function requestFieldSchema(def: ServiceDefinition): Record<string, unknown> {
  const description = def.requestFormat || 'No input: leave request empty.';
  if (def.inputIsJson) {
    return {
      anyOf: [def.inputSchema, { type: 'string', contentMediaType: 'application/json', contentSchema: def.inputSchema, description: 'the same JSON document as text' }],
      description: `${JSON_REQUEST_NOTE} ${description}`,
    };
  }
  return { ...def.inputSchema, description };
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown, description: string) => ({ description, content: { 'application/json': { schema } } });
const errorResponse = (description: string) => json(ref('Error'), description);

/** Responses of a paid call (endpoints 1 and 2). */
function paidResponses(): Record<string, unknown> {
  return {
    '200': json(ref('SettlementResult'), 'Paid: the result and the receipt'),
    '202': json(ref('PaymentPending'), 'The payment is known but not mined with enough confirmations yet; settle again'),
    '400': errorResponse('Invalid request or payment (error.code invalid_request, invalid_payment); no quote'),
    '402': json(ref('Quote'), 'Payment Required: the quote (native-x402 option, and exact/base when the USDC rail is on)'),
    '404': errorResponse('Unknown service (unknown_service) or unknown payment (payment_not_found)'),
    '409': errorResponse('Payment already used for another request, or being settled'),
    '502': json(ref('Refunded'), 'The service failed after payment: refunded on-chain'),
    '503': errorResponse('Service unavailable on this node, node syncing, or request timeout'),
  };
}

const waitParam = {
  name: 'wait',
  in: 'query',
  required: false,
  description: `Seconds to wait for the payment's block when settling (default ${DEFAULT_WAIT_SECONDS}, at most ${MAX_WAIT_SECONDS}).`,
  schema: { type: 'integer', minimum: 0, maximum: MAX_WAIT_SECONDS, default: DEFAULT_WAIT_SECONDS },
};

/** Query parameters of the catalog, from the limits the filter parser enforces. */
export function catalogQueryParameters(network: string): Record<string, unknown>[] {
  return [
    { name: 'category', in: 'query', required: false, schema: { type: 'string', enum: [...SERVICE_CATEGORIES] }, description: 'Only services of this category.' },
    { name: 'maxPrice', in: 'query', required: false, schema: { type: 'string', pattern: '^\\$?\\d{1,9}(\\.\\d{1,6})?$' }, description: 'Only services priced at most this many USD, e.g. 0.01.' },
    { name: 'network', in: 'query', required: false, schema: { type: 'string', enum: ['base', network] }, description: 'Only services payable on this network.' },
    { name: 'q', in: 'query', required: false, schema: { type: 'string', maxLength: CATALOG_LIMITS.maxQueryChars }, description: 'Words matched (all of them, case-insensitive) in id, name, description and tags.' },
    { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: CATALOG_LIMITS.maxLimit, default: CATALOG_LIMITS.defaultLimit } },
    { name: 'offset', in: 'query', required: false, schema: { type: 'integer', minimum: 0, maximum: CATALOG_LIMITS.maxOffset, default: 0 } },
  ];
}

/** Component schemas shared by the paths. */
function components(network: string): Record<string, unknown> {
  const str = { type: 'string' };
  return {
    Error: {
      type: 'object',
      required: ['error'],
      properties: { error: { type: 'object', required: ['code', 'message'], properties: { code: str, message: str, param: str }, additionalProperties: true } },
    },
    Payment: {
      type: 'object',
      required: ['txId', 'salt'],
      properties: {
        txId: { type: 'string', pattern: '^[0-9a-fA-F]{64}$', description: 'Id of the agent_invoke transaction that paid the quote.' },
        salt: { type: 'string', pattern: '^[0-9a-fA-F]{64}$', description: "The payer's secret its requestHash commits to (extra.commitment): sellerId(8) || sha256(tag || sellerId || len serviceId || len request || salt)[0:24]." },
      },
    },
    PaymentRequirements: {
      type: 'object',
      required: ['scheme', 'network', 'maxAmountRequired', 'resource', 'description', 'mimeType', 'payTo', 'maxTimeoutSeconds', 'asset'],
      properties: {
        scheme: { type: 'string', enum: ['native-x402', 'exact'] },
        network: { type: 'string', enum: [network, 'base'] },
        maxAmountRequired: { type: 'string', pattern: '^\\d+$', description: 'NATIVE base units (native-x402) or USDC atomic units (exact).' },
        resource: { type: 'string', format: 'uri' },
        description: str,
        mimeType: str,
        payTo: str,
        maxTimeoutSeconds: { type: 'integer' },
        asset: str,
        extra: { type: 'object' },
      },
    },
    Quote: {
      type: 'object',
      required: ['x402', 'x402Version', 'error', 'accepts'],
      properties: { x402: { const: true }, x402Version: { const: 1 }, error: { const: 'Payment Required' }, accepts: { type: 'array', minItems: 1, items: ref('PaymentRequirements') } },
    },
    Receipt: {
      type: 'object',
      required: ['serviceId', 'caller', 'amount', 'txId'],
      properties: { serviceId: str, caller: str, amount: { type: 'number', description: 'NATIVE' }, amountBase: str, txId: str, blockHash: str, height: { type: 'integer' }, network: str, payTo: str, settledAt: { type: 'integer' } },
    },
    SettlementResult: { type: 'object', required: ['paid', 'result', 'receipt'], properties: { paid: { const: true }, result: {}, receipt: ref('Receipt') } },
    PaymentPending: { type: 'object', required: ['paid', 'status', 'txId'], properties: { paid: { const: false }, status: { const: 'payment_pending' }, txId: str, retryAfter: { type: 'integer' }, error: ref('Error') } },
    Refunded: { type: 'object', required: ['paid', 'refunded'], properties: { paid: { const: true }, refunded: { const: true }, refundTxId: { type: ['string', 'null'] }, error: { type: 'object' } } },
    CatalogService: {
      type: 'object',
      required: ['endpoint', 'type', 'x402Version', 'method', 'serviceId', 'name', 'description', 'price', 'priceAman', 'priceUsd', 'category', 'tags', 'paymentRails', 'networks', 'healthStatus', 'lastVerifiedAt', 'latencyMs', 'metadata'],
      properties: {
        endpoint: { type: 'string', format: 'uri' },
        serviceId: str,
        name: str,
        price: { type: 'string', pattern: '^\\$' },
        priceAman: { type: 'number' },
        priceUsd: { type: 'number' },
        category: { type: 'string', enum: [...SERVICE_CATEGORIES] },
        healthStatus: { type: 'string', enum: ['active', 'degraded', 'down', 'unknown'] },
        healthReason: {
          description: 'why the service is down or degraded (null while active or unknown)',
          oneOf: [{ type: 'null' }, { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string', examples: ['provider_not_configured', 'provider_down', 'data_not_installed', 'not_for_sale'] }, message: { type: 'string' } } }],
        },
        metadata: { type: 'object' },
      },
    },
    Catalog: {
      type: 'object',
      required: ['kind', 'protocol', 'x402Version', 'network', 'chainId', 'version', 'nativeUsd', 'updatedAt', 'resources', 'health', 'filters'],
      properties: { kind: { const: 'own-bazaar' }, protocol: { const: 'native-x402' }, resources: { type: 'array', items: ref('CatalogService') } },
    },
    JsonRpcMessage: { type: 'object', required: ['jsonrpc'], properties: { jsonrpc: { const: '2.0' }, id: { type: ['string', 'integer', 'null'] }, method: str, params: { type: 'object' } } },
  };
}

/** A free GET document. */
function freeGet(summary: string, schema: unknown, mime = 'application/json', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { get: { summary, tags: ['discovery'], ...extra, responses: { '200': { description: summary, content: { [mime]: { schema } } } } } };
}

/** The OpenAPI 3.1 document of every endpoint of the node. */
export function buildOpenApi(snap: CatalogSnapshot): Record<string, unknown> {
  const network = snap.network;
  const ids = snap.services.map((d) => d.id);
  const paths: Record<string, unknown> = {
    '/api/x402': {
      get: { summary: 'Protocol descriptor', tags: ['discovery'], responses: { '200': json({ type: 'object' }, 'The protocol descriptor') } },
      post: {
        summary: 'Call a service by id (spec endpoint 1)',
        tags: ['x402'],
        parameters: [waitParam, { name: 'net', in: 'query', required: false, schema: { type: 'string' }, description: 'Network, e.g. mainnet (informative).' }],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: { type: 'object', required: ['serviceId'], properties: { serviceId: { type: 'string', enum: ids }, request: { type: ['string', 'object'], description: "The service's input (see its own path for the schema): a string; for a JSON-input service also the JSON object itself." }, payment: ref('Payment') } },
            },
          },
        },
        responses: paidResponses(),
      },
    },
  };
  for (const def of snap.services) {
    const atomic = priceAtomic(def, snap.nativeUsd.microUsd);
    const example = exampleRequest(def, snap);
    paths[`/api/x402/${def.id}`] = {
      post: {
        operationId: def.id.replace(/-/g, '_'),
        summary: `${def.name}: ${def.description}`,
        description: `Price ${formatAmount(def.priceBase)} NATIVE (${dollarText(atomic)}) per call. Without payment: 402 with the quote. With payment {txId, salt}: settle and run. Input: ${def.requestFormat || 'none'}.`,
        tags: ['services', def.category],
        parameters: [waitParam],
        requestBody: {
          required: requestIsRequired(def),
          content: {
            'application/json': {
              schema: { type: 'object', required: requestIsRequired(def) ? ['request'] : [], properties: { request: requestFieldSchema(def), payment: ref('Payment') } },
              ...(example === undefined ? {} : { example: { request: example } }),
            },
          },
        },
        responses: paidResponses(),
        'x-price': { priceBase: def.priceBase.toString(), priceAman: Number(def.priceBase) / 1e8, priceUsd: Number(atomic) / 1e6 },
      },
    };
  }
  Object.assign(paths, {
    [PATHS.bazaar]: {
      get: {
        summary: 'Catalog (own-bazaar)',
        tags: ['discovery'],
        parameters: catalogQueryParameters(network),
        responses: { '200': json(ref('Catalog'), 'The catalog document'), '400': errorResponse('A filter value is invalid (error.param names it)') },
      },
    },
    [PATHS.wellKnown]: freeGet('Protocol descriptor', { type: 'object' }),
    [PATHS.discovery]: {
      get: {
        summary: 'x402 discovery list',
        tags: ['discovery'],
        parameters: [
          { name: 'type', in: 'query', required: false, schema: { const: 'http' } },
          { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: DISCOVERY_LIMITS.maxLimit, default: DISCOVERY_LIMITS.defaultLimit } },
          { name: 'offset', in: 'query', required: false, schema: { type: 'integer', minimum: 0, maximum: DISCOVERY_LIMITS.maxOffset, default: 0 } },
        ],
        responses: { '200': json({ type: 'object', required: ['x402Version', 'items', 'pagination'] }, 'Resources with their payment requirements'), '400': errorResponse('Bad type, limit or offset') },
      },
    },
    [PATHS.servicesJson]: freeGet('Services with input schemas and examples', { type: 'object' }),
    [PATHS.agentCard]: freeGet('A2A agent card (legacy path)', { type: 'object' }),
    [PATHS.agentCardV1]: freeGet('A2A agent card (v1.0 path)', { type: 'object' }),
    [PATHS.llmsTxt]: freeGet('llms.txt', { type: 'string' }, 'text/plain'),
    [PATHS.openApi]: freeGet('This document', { type: 'object' }),
    [PATHS.mcp]: {
      post: {
        summary: 'Model Context Protocol (Streamable HTTP, stateless); send Accept: application/json, text/event-stream',
        tags: ['mcp'],
        parameters: [{ name: 'net', in: 'query', required: false, schema: { type: 'string', enum: ['mainnet', shortNetwork(network), network] } }],
        requestBody: { required: true, content: { 'application/json': { schema: { oneOf: [ref('JsonRpcMessage'), { type: 'array', items: ref('JsonRpcMessage') }] } } } },
        responses: { '200': json({ type: 'object' }, 'JSON-RPC response'), '202': { description: 'Notification accepted' }, '400': errorResponse('Bad net, or not JSON'), '406': { description: 'Accept header lacks application/json and text/event-stream' } },
      },
    },
    [PATHS.marketplace]: freeGet('Marketplace page (HTML); q and category filter', { type: 'string' }, 'text/html', { parameters: catalogQueryParameters(network).filter((p) => p.name === 'q' || p.name === 'category') }),
    [PATHS.agents]: {
      get: { summary: 'Provider agents (HTML, or JSON with Accept: application/json)', tags: ['discovery'], responses: { '200': { description: 'Agents', content: { 'text/html': { schema: { type: 'string' } }, 'application/json': { schema: { type: 'object' } } } } } },
    },
    [PATHS.join]: freeGet('How a provider lists a service (HTML)', { type: 'string' }, 'text/html'),
    '/api/v1/tx': { post: txSubmit('Broadcast a signed transaction (the native payment)') },
    '/api/tx': { post: txSubmit('Broadcast a signed transaction (alias)') },
    '/api/v1/tx/{id}': chainGet('A transaction, pending or mined', [pathParam('id', { type: 'string', pattern: '^[0-9a-fA-F]{64}$' })]),
    '/api/v1/block/{id}': chainGet('A block by height or hash', [pathParam('id', { type: 'string' })]),
    '/api/v1/blocks': chainGet('Block summaries, newest first', [queryInt('from', 0, 0xffffffff), queryInt('limit', 1, 100)]),
    '/api/v1/account/{address}': chainGet('Balance and nonce of an address', [pathParam('address', { type: 'string' })]),
    '/api/v1/mempool': chainGet('Mempool size and top entries', [queryInt('limit', 1, 100)]),
    '/api/v1/status': chainGet('Network, tip, difficulty, hashrate, mempool, mining', []),
    '/api/v1/mining': chainGet('Stratum, RPC and built-in miner statistics', []),
    '/api/v1/peers': chainGet('Peers, bans, sync and gossip (404 with --no-p2p)', []),
    '/rpc': {
      post: {
        summary: 'Bitcoin-style JSON-RPC for miners (getblocktemplate, submitblock); HTTP Basic, loopback only by default',
        tags: ['mining'],
        security: [{ basic: [] }],
        requestBody: { required: true, content: { 'application/json': { schema: ref('JsonRpcMessage') } } },
        responses: { '200': json({ type: 'object' }, 'JSON-RPC result'), '401': errorResponse('rpc_unauthorized'), '403': errorResponse('rpc_disabled or rpc_forbidden') },
      },
    },
  });
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: NODE_DISPLAY_NAME,
      version: snap.nodeVersion,
      summary: 'Paid calls for software agents with x402, and the chain API of the node.',
      description: `${howToPay(snap)} Catalog version ${CATALOG_VERSION}.`,
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: snap.baseUrl }],
    tags: [
      { name: 'discovery', description: 'Free, cross-origin readable documents' },
      { name: 'x402', description: 'Paid calls' },
      { name: 'services', description: 'One path per service' },
      { name: 'mcp', description: 'Model Context Protocol' },
      { name: 'chain', description: 'The chain API' },
      { name: 'mining', description: 'Mining endpoints' },
    ],
    paths,
    components: { schemas: components(network), securitySchemes: { basic: { type: 'http', scheme: 'basic' } } },
  };
}

function pathParam(name: string, schema: unknown): Record<string, unknown> {
  return { name, in: 'path', required: true, schema };
}

function queryInt(name: string, minimum: number, maximum: number): Record<string, unknown> {
  return { name, in: 'query', required: false, schema: { type: 'integer', minimum, maximum } };
}

function chainGet(summary: string, parameters: Record<string, unknown>[]): Record<string, unknown> {
  return { get: { summary, tags: ['chain'], parameters, responses: { '200': json({ type: 'object' }, summary), '400': errorResponse('Bad parameter'), '404': errorResponse('Not found') } } };
}

function txSubmit(summary: string): Record<string, unknown> {
  return {
    summary,
    tags: ['chain'],
    requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', required: ['tx'], properties: { tx: { type: 'string', pattern: '^([0-9a-fA-F]{2})+$', description: 'Hex of the signed transaction.' } } } } } },
    responses: {
      '200': json({ type: 'object', required: ['txId', 'status'], properties: { txId: { type: 'string' }, status: { const: 'accepted' } } }, 'Accepted into the mempool'),
      '400': errorResponse('Malformed transaction'),
      '409': errorResponse('Duplicate or underpriced replacement'),
      '422': errorResponse('Refused by a consensus or policy rule'),
    },
  };
}
