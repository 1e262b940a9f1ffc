/**
 * The MCP endpoint: `POST /api/mcp` (optional `?net=mainnet`, or the node's own network) serves
 * the Model Context Protocol over Streamable HTTP with the official SDK, stateless
 * (`sessionIdGenerator: undefined`, JSON responses). The node builds its MCP side once
 * (`McpEndpoint`: prepared servers reused, the tool list serialised once per catalog version); a
 * request gets only a fresh transport. A batch carries at most `--mcp-max-batch` messages and
 * each counts against the caller's `--http-expensive-rate`. Tools, instructions and
 * quotes name the node's public base URL, never the request's Host.
 *
 * Tools, built from the live registry (again whenever the catalog's version changed):
 *   - one paid tool per service, named by its service id; its input is `{request}`, whose
 *     schema is the service's input schema and whose description is its requestFormat;
 *   - `search_services` (free): the catalog with its filters (category, maxPrice, network, q,
 *     limit, offset);
 *   - `get_quote` (free): the 402 quote of a call, without paying.
 *
 * A paid tool follows the x402 MCP convention (coinbase/x402 specs/transports-v2/mcp.md):
 *   - called without `_meta["x402/payment"]`: a result with `isError: true` whose
 *     `structuredContent` is the payment-required object — the same Quote as the HTTP 402, both
 *     rails — and whose `content[0].text` is `{"x402/error": {"code": 402, "message", "data"}}`;
 *   - called again with `_meta["x402/payment"] = {"txId": "<agent_invoke id>", "salt": "<hex>"}`: settled exactly as
 *     `POST /api/x402/:serviceId` with `payment` (same checks, same ledger, same refunds), and
 *     answered with the result, `structuredContent` = `{paid, result, receipt}` and
 *     `_meta["x402/payment-response"]` = the receipt plus the convention's `success`,
 *     `transaction`, `network`, `payer`;
 *   - or with `_meta["x402/payment"]` = an x402 `exact` payment payload (what `X-PAYMENT`
 *     carries, decoded: `{x402Version, scheme, network, payload: {signature, authorization}}`,
 *     v1 or v2): settled on the USDC rail exactly as the HTTP endpoint settles that header, with
 *     `x402/payment-response` = `{success, transaction, network, payer}` plus the receipt;
 *   - a refused payment is an `isError` result carrying the quote and `x402/payment-response`
 *     (in `structuredContent` and `_meta`) with `success: false` and the node's error code as
 *     `errorReason`; a failure after the payment was accepted (the service or the facilitator,
 *     502/504) is an `isError` result with the HTTP endpoint's body and that payment-response.
 * Input errors and unavailable services are `isError` results without a quote, as the HTTP
 * endpoint answers 400 / 503 before any quote; while the node syncs, payments are refused with
 * `node_syncing` as over HTTP.
 *
 * Paid tools are a thin adapter of the paid-call core (x402/core/paidCall.ts), like the HTTP routes:
 * this file turns a tool call into a `PaidCall` (the USDC payload is handed on decoded) and the
 * core's outcome into a tool result; the checks, their order and the settlement are the core's.
 */
import { randomBytes } from 'node:crypto';
import { Router } from '@koa/router';
import type Koa from 'koa';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { formatAmount } from '../../consensus/amount.js';
import { NodeError } from '../../consensus/errors.js';
import type { ChainParams } from '../../consensus/params.js';
import { silentLogger, type Logger } from '../../chain/types.js';
import type { ServiceRegistry } from '../../services/registry.js';
import { requestIsRequired, type NativeUsdSource, type ServiceDefinition } from '../../services/types.js';
import { CATALOG_LIMITS, SERVICE_CATEGORIES, dollarText, filterServices, parseCatalogQuery, priceAtomic, shortNetwork, type CatalogService, type CatalogSnapshot } from '../../discovery/catalog.js';
import { PaymentErrorCode } from '../../x402/core/errors.js';
import type { PaidCallOutcome } from '../../x402/core/outcome.js';
import type { PaidCallCore, PaymentProof } from '../../x402/core/paidCall.js';
import type { QuoteBody } from '../../x402/core/wire.js';
import { HttpErrorCode } from './http.js';
import { chargeOperations } from './httpLimits.js';
import { localBaseUrl } from './publicUrl.js';

/** `_meta` key of the payment a client sends (x402 MCP convention). */
export const X402_PAYMENT_META = 'x402/payment';
/** `_meta` key of the settlement answer a server returns (x402 MCP convention). */
export const X402_PAYMENT_RESPONSE_META = 'x402/payment-response';
/** Names of the free tools. */
export const FREE_TOOLS = Object.freeze({ search: 'search_services', quote: 'get_quote' });

/** What the MCP endpoint needs: the tools' registry and prices, the paid-call core the HTTP endpoints use too, the catalog. */
export interface McpModules {
  readonly registry: Pick<ServiceRegistry, 'list' | 'get'>;
  /** The paid-call core (x402/core/paidCall.ts): paid tools are settled exactly as `POST /api/x402/:serviceId`. */
  readonly paidCalls: PaidCallCore;
  readonly params: ChainParams;
  readonly nativeUsd: NativeUsdSource;
  /** The catalog snapshot and its (cached) entries for a base URL. */
  readonly catalog: (baseUrl: string) => { snap: CatalogSnapshot; resources: readonly CatalogService[] };
  /** The catalog's version (changes with health, settled calls, price, the registry): the tool list is rebuilt when it changes. */
  readonly catalogKey?: (baseUrl: string) => string;
  /** The public base URL the tools and instructions name (node/api/publicUrl.ts); default: the address the connection reached. */
  readonly baseUrl?: () => string;
  /** JSON-RPC messages one request may carry (default `DEFAULT_MCP_MAX_BATCH`). */
  readonly maxBatch?: number;
  readonly version: string;
  readonly logger?: Logger;
}

/** Values of `?net=` the endpoint accepts: the spec's `mainnet` and this node's own network names. */
export function acceptedNets(params: ChainParams): Set<string> {
  return new Set(['mainnet', shortNetwork(params.network), params.network]);
}

/** The SDK's modules, loaded on the first MCP request (they cost a noticeable part of the node's start-up). */
async function importSdk() {
  const [server, http, validation, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
    import('@modelcontextprotocol/sdk/validation/ajv-provider.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return {
    Server: server.Server,
    WebStandardStreamableHTTPServerTransport: http.WebStandardStreamableHTTPServerTransport,
    // One validator for every per-request Server (the SDK's default builds a new ajv instance each time).
    validator: new validation.AjvJsonSchemaValidator() as AjvJsonSchemaValidator,
    types,
  };
}
type Sdk = Awaited<ReturnType<typeof importSdk>>;
let sdkPromise: Promise<Sdk> | undefined;

/** The MCP SDK (loaded once). */
export function loadMcpSdk(): Promise<Sdk> {
  sdkPromise ??= importSdk();
  return sdkPromise;
}

/** A `tools/call` for a tool this server does not have (a JSON-RPC InvalidParams error). */
export class UnknownToolError extends Error {
  constructor(readonly tool: string) {
    super(`Unknown tool: ${tool}`);
    this.name = 'UnknownToolError';
  }
}

/** Tool input schema of a service: `{request}` with the service's own input schema and requestFormat. */
export function toolInputSchema(def: ServiceDefinition): Tool['inputSchema'] {
  const format = def.requestFormat || 'No input: omit request.';
  const request: Record<string, unknown> = def.inputIsJson
    ? { anyOf: [def.inputSchema, { type: 'string', description: 'the same JSON document as text' }], description: format }
    : { ...def.inputSchema, description: format };
  return {
    type: 'object',
    description: `Input of ${def.id}: ${format}`,
    properties: { request },
    ...(requestIsRequired(def) ? { required: ['request'] } : {}),
    additionalProperties: false,
  };
}

/** The paid tool of a service. */
function serviceTool(def: ServiceDefinition, m: McpModules): Tool {
  const atomic = priceAtomic(def, m.nativeUsd.get().microUsd);
  const available = m.paidCalls.isForSale(def);
  return {
    name: def.id,
    title: def.name,
    description:
      `${def.description}. Paid: ${formatAmount(def.priceBase)} NATIVE (${dollarText(atomic)}) per call with x402. Call without payment to get the quote ` +
      `(isError, structuredContent = payment requirements); pay the native-x402 option with an agent_invoke, then call again with ` +
      `_meta["x402/payment"] = {"txId": "<id>", "salt": "<your salt>"}.${available ? '' : ' Currently unavailable on this node.'}`,
    inputSchema: toolInputSchema(def),
    annotations: { title: def.name, readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: !def.nodeOperated },
    _meta: { 'x402/paid': true, serviceId: def.id, category: def.category, priceAman: Number(def.priceBase) / 1e8, priceBase: def.priceBase.toString(), priceUsd: Number(atomic) / 1e6, available },
  };
}

/** The free tools. */
function freeTools(m: McpModules): Tool[] {
  return [
    {
      name: FREE_TOOLS.search,
      title: 'Search the catalog',
      description: `Free. Lists the services of this node (price, health, latency, settled calls) matching the filters: q (words in id, name, description, tags), category, maxPrice (USD), network (base or ${m.params.network}), limit (1–${CATALOG_LIMITS.maxLimit}, default ${CATALOG_LIMITS.defaultLimit}), offset.`,
      inputSchema: {
        type: 'object',
        properties: {
          q: { type: 'string', maxLength: CATALOG_LIMITS.maxQueryChars, description: 'Words that must all appear in id, name, description or tags.' },
          category: { type: 'string', enum: [...SERVICE_CATEGORIES] },
          maxPrice: { type: ['number', 'string'], description: 'Highest price in USD, e.g. 0.01.' },
          network: { type: 'string', enum: ['base', m.params.network] },
          limit: { type: 'integer', minimum: 1, maximum: CATALOG_LIMITS.maxLimit },
          offset: { type: 'integer', minimum: 0, maximum: CATALOG_LIMITS.maxOffset },
        },
        additionalProperties: false,
      },
      annotations: { title: 'Search the catalog', readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    {
      name: FREE_TOOLS.quote,
      title: 'Get a quote',
      description: 'Free. The x402 quote (HTTP 402 body: payment options with exact amounts, payTo and request hash) of a call of a service with a request, without paying. The request is checked first.',
      inputSchema: {
        type: 'object',
        properties: { serviceId: { type: 'string', description: 'Service id, e.g. native-world-clock.' }, request: { description: 'The request the call will carry (string, or the JSON document of JSON services).' } },
        required: ['serviceId'],
        additionalProperties: false,
      },
      annotations: { title: 'Get a quote', readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
  ];
}

const text = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

/** An `isError` result with a coded error (no quote). */
function errorResult(code: string, message: string, extra: Record<string, unknown> = {}): CallToolResult {
  const error = { code, message, ...extra };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error }) }], structuredContent: { error } };
}

/** The payment-required result: the quote as structuredContent and in the `x402/error` wrapper (with a refusal's payment-response in both and in `_meta`). */
function paymentRequiredResult(quote: QuoteBody, message: string, paymentResponse?: Record<string, unknown>): CallToolResult {
  const data: Record<string, unknown> = { ...quote, ...(paymentResponse ? { error: message, [X402_PAYMENT_RESPONSE_META]: paymentResponse } : {}) };
  return {
    isError: true,
    content: [{ type: 'text', text: JSON.stringify({ 'x402/error': { code: 402, message, data } }) }],
    structuredContent: data,
    // A refusal's payment-response also goes where a settlement's goes, so clients read one place.
    ...(paymentResponse ? { _meta: { [X402_PAYMENT_RESPONSE_META]: paymentResponse } } : {}),
  };
}

/** The `request` string of a tool call, as the HTTP body would carry it. */
function requestOf(def: ServiceDefinition, raw: unknown): { ok: true; request: string | undefined } | { ok: false; message: string } {
  if (raw === undefined || raw === null) return { ok: true, request: undefined };
  if (typeof raw === 'string') return { ok: true, request: raw };
  if (typeof raw === 'number' || typeof raw === 'boolean') return { ok: true, request: String(raw) };
  if (def.inputIsJson) return { ok: true, request: JSON.stringify(raw) };
  return { ok: false, message: `request must be a string for ${def.id}` };
}

/** The native payment of `_meta["x402/payment"]`: `{txId, salt}` or an x402-style `{payload: {txId, salt}}`. */
function nativePayment(payment: unknown): { txId: string; salt?: string } | undefined {
  if (typeof payment !== 'object' || payment === null) return undefined;
  const outer = payment as { txId?: unknown; payload?: unknown };
  const p = (typeof outer.txId === 'string' ? outer : typeof outer.payload === 'object' && outer.payload !== null ? outer.payload : outer) as { txId?: unknown; salt?: unknown };
  if (typeof p.txId !== 'string' || (p.salt !== undefined && typeof p.salt !== 'string')) return undefined;
  return { txId: p.txId, ...(typeof p.salt === 'string' ? { salt: p.salt } : {}) };
}

/** The payment of `_meta["x402/payment"]`: an x402 `exact` payload (USDC, passed on decoded), `{txId, salt}` or `{payload: {txId, salt}}` (native). */
function paymentOf(payment: unknown): PaymentProof | undefined {
  if (payment === undefined || payment === null) return undefined;
  if (isUsdcPayment(payment)) return { rail: 'usdc', payload: payment };
  const native = nativePayment(payment);
  if (native === undefined) return { rail: 'native', malformed: { code: PaymentErrorCode.INVALID_PAYMENT, message: `_meta["${X402_PAYMENT_META}"] must be {"txId": "<id of your agent_invoke transaction>", "salt": "<the 64-hex secret its requestHash commits to>"}` } };
  return { rail: 'native', ...native };
}

/** An x402 payment payload of the `exact` scheme (v1 or v2): the decoded `X-PAYMENT` value. */
function isUsdcPayment(payment: unknown): payment is Record<string, unknown> {
  if (typeof payment !== 'object' || payment === null) return false;
  const p = payment as { x402Version?: unknown; payload?: { authorization?: unknown } };
  return typeof p.x402Version === 'number' && typeof p.payload === 'object' && p.payload !== null && typeof p.payload.authorization === 'object';
}

/** The network a payment-response names: Base for the USDC rail, the node's chain otherwise. */
const responseNetwork = (m: McpModules, rail: string | undefined) => (rail === 'usdc' ? 'base' : m.params.network);

/** A paid call's outcome as a tool result (x402 MCP convention, see module comment). */
export function toolResult(m: McpModules, o: PaidCallOutcome): CallToolResult {
  switch (o.kind) {
    case 'rejected':
      return errorResult(o.error.code, o.error.message, o.error);
    case 'quote':
      return paymentRequiredResult(o.quote, 'Payment Required');
    case 'paid': {
      const { result, receipt } = o.body;
      return { content: [{ type: 'text', text: text(result) }], structuredContent: { ...o.body }, _meta: { [X402_PAYMENT_RESPONSE_META]: { ...o.response, ...receipt } } };
    }
    case 'refused':
    case 'pending': {
      const error = o.kind === 'pending' ? o.body.error : o.error;
      const extra = o.kind === 'pending' ? { retryAfter: o.body.retryAfter } : o.payer ? { payer: o.payer } : {};
      const transaction = (o.kind === 'pending' ? o.body.txId : o.txId) ?? '';
      return paymentRequiredResult(o.quote, error.message, { success: false, errorReason: error.code, message: error.message, transaction, network: responseNetwork(m, o.rail), ...extra });
    }
    case 'failed': {
      // The service (or the facilitator) failed after the payment was accepted: native refunded, USDC never settled.
      const b = o.body;
      // Refunded on chain (its tx), or owed and not sent yet (`refund: "pending"`), or neither (USDC: never settled).
      const refund = !('refunded' in b) ? {} : b.refunded ? { refunded: true, refundTxId: b.refundTxId } : { refunded: false, refund: 'pending' as const };
      // USDC settlement being reconciled from Base: retry with the same payment after retryAfter s.
      const retry = 'retryAfter' in b && typeof b.retryAfter === 'number' ? { retryAfter: b.retryAfter } : {};
      return {
        isError: true,
        content: [{ type: 'text', text: JSON.stringify(b) }],
        structuredContent: { ...b },
        _meta: { [X402_PAYMENT_RESPONSE_META]: { success: false, errorReason: b.error.code, message: b.error.message, transaction: o.txId ?? '', network: responseNetwork(m, o.rail), ...refund, ...retry } },
      };
    }
  }
}

/** Handles one `tools/call`. Exported for in-process tests. */
export async function callTool(m: McpModules, baseUrl: string, name: string, args: Record<string, unknown>, meta: Record<string, unknown> | undefined): Promise<CallToolResult> {
  if (name === FREE_TOOLS.search) return searchTool(m, baseUrl, args);
  const quoteOnly = name === FREE_TOOLS.quote;
  const extra = quoteOnly ? Object.keys(args).filter((k) => k !== 'serviceId' && k !== 'request') : [];
  if (extra.length) return errorResult(PaymentErrorCode.INVALID_REQUEST, `unknown argument ${extra.map((k) => JSON.stringify(k)).join(', ')}: ${FREE_TOOLS.quote} takes serviceId and request`, { param: extra[0] });
  const serviceId = quoteOnly ? args.serviceId : name;
  const def = typeof serviceId === 'string' ? m.registry.get(serviceId) : undefined;
  if (!def) {
    if (!quoteOnly) throw new UnknownToolError(name);
    return errorResult(PaymentErrorCode.UNKNOWN_SERVICE, `no service ${String(args.serviceId)}; use ${FREE_TOOLS.search}`);
  }
  const r = requestOf(def, args.request);
  if (!r.ok) return errorResult(PaymentErrorCode.INVALID_REQUEST, r.message);
  const outcome = await m.paidCalls.call({ serviceId: def.id, request: r.request, baseUrl, payment: quoteOnly ? undefined : paymentOf(meta?.[X402_PAYMENT_META]) });
  if (quoteOnly && outcome.kind === 'quote') return { content: [{ type: 'text', text: JSON.stringify(outcome.quote) }], structuredContent: { ...outcome.quote } };
  return toolResult(m, outcome);
}

/** The arguments `search_services` takes (its input schema admits no others). */
const SEARCH_ARGS: readonly string[] = ['q', 'category', 'maxPrice', 'network', 'limit', 'offset'];

/** `search_services`: the catalog's filters over the live entries; an argument it does not know is an error, never a filter ignored. */
function searchTool(m: McpModules, baseUrl: string, args: Record<string, unknown>): CallToolResult {
  const unknown = Object.keys(args).filter((k) => !SEARCH_ARGS.includes(k));
  if (unknown.length) return errorResult(HttpErrorCode.INVALID_QUERY, `unknown argument ${unknown.map((k) => JSON.stringify(k)).join(', ')}: ${FREE_TOOLS.search} takes ${SEARCH_ARGS.join(', ')}`, { param: unknown[0] });
  const query: Record<string, string> = {};
  for (const k of SEARCH_ARGS) {
    const v = args[k];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string' && typeof v !== 'number') return errorResult(HttpErrorCode.INVALID_QUERY, `${k} must be a string or a number`, { param: k });
    query[k] = String(v);
  }
  const parsed = parseCatalogQuery(query, m.params.network);
  if (!parsed.ok) return errorResult(HttpErrorCode.INVALID_QUERY, parsed.message, { param: parsed.param });
  const { snap, resources } = m.catalog(baseUrl);
  const { total, page } = filterServices(resources, snap.services, parsed.filters);
  const out = { total, returned: page.length, limit: parsed.filters.limit, offset: parsed.filters.offset, services: page };
  return { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: out };
}

/** Default of `--mcp-max-batch`: JSON-RPC messages one `POST /api/mcp` may carry. */
export const DEFAULT_MCP_MAX_BATCH = 20;
/** `error.data.code` of the JSON-RPC error answering a batch over the cap (HTTP 400, JSON-RPC -32600). */
export const MCP_BATCH_TOO_LARGE = 'mcp_batch_too_large';
/** Prepared servers kept idle at most; more are made while requests overlap (paid calls wait for blocks), then dropped. */
const MAX_IDLE_SERVERS = 16;

/** The tool list of one catalog version: its key and its JSON text (the `result` of `tools/list`). */
interface ToolList {
  readonly key: string;
  readonly json: string;
  readonly count: number;
}

/**
 * The MCP side of a node, built once: prepared SDK servers (handlers registered once)
 * reused across requests, and the `tools/list` result serialised once per catalog version.
 *
 * The SDK binds a `Server` to one transport at a time and a stateless transport to one request,
 * so each request gets a fresh `WebStandardStreamableHTTPServerTransport` (cheap) connected to an
 * idle prepared server, released after the answer. The SDK parses, validates and dispatches every
 * message and writes every envelope. `tools/list` answers a stand-in whose JSON is a token of this
 * process (128 random bits, never sent out); the response text has the token replaced by the
 * cached JSON of the list, so a list is built and serialised only when the catalog, the health or
 * the price changed, not per message.
 */
export class McpEndpoint {
  private readonly idle: Server[] = [];
  private list?: ToolList;
  private readonly token = `native-mcp-tools-${randomBytes(16).toString('hex')}`;
  private readonly quotedToken = JSON.stringify(this.token);
  /** Tool lists built (once per catalog version), for tests. */
  listsBuilt = 0;
  /** Prepared servers made (one per request in flight at the busiest moment, not one per request), for tests. */
  serversMade = 0;

  constructor(
    private readonly m: McpModules,
    private readonly baseUrl: () => string,
  ) {}

  /** The current tool list (rebuilt when its key changed: catalog version, price, what is for sale). */
  toolList(): ToolList {
    const base = this.baseUrl();
    const defs = this.m.registry.list();
    let forSale = '';
    for (const d of defs) forSale += this.m.paidCalls.isForSale(d) ? '1' : '0';
    const key = `${this.m.catalogKey?.(base) ?? ''}|${this.m.nativeUsd.get().microUsd}|${defs.length}|${forSale}|${base}`;
    if (this.list?.key !== key) {
      const tools = [...freeTools(this.m), ...defs.map((d) => serviceTool(d, this.m))];
      this.list = { key, json: JSON.stringify({ tools }), count: tools.length };
      this.listsBuilt++;
    }
    return this.list;
  }

  /** A response text with the `tools/list` stand-in replaced by the list's JSON. */
  private withToolList(text: string): string {
    if (!text.includes(this.quotedToken)) return text;
    const json = this.toolList().json;
    return text.split(this.quotedToken).join(json);
  }

  /** A prepared server (an idle one, or a new one). */
  private async take(): Promise<Server> {
    const reused = this.idle.pop();
    if (reused) return reused;
    const sdk = await loadMcpSdk();
    const { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } = sdk.types;
    const m = this.m;
    const baseUrl = this.baseUrl();
    this.serversMade++;
    const server = new sdk.Server(
      { name: 'native-node', title: 'native-node x402 services', version: m.version },
      {
        capabilities: { tools: { listChanged: false } },
        instructions:
          `Paid services of a ${m.params.network} node, one tool per service, sold per call with x402. ` +
          `Use ${FREE_TOOLS.search} to find a service and ${FREE_TOOLS.quote} for its price. A paid tool called without payment returns isError with the ` +
          `payment requirements; pay the native-x402 option (an agent_invoke for exactly maxAmountRequired to payTo whose requestHash is the commitment described by extra.commitment over extra.sellerId, the tool, the request and a secret salt of yours, broadcast ` +
          `with POST ${baseUrl}/api/v1/tx), then call the tool again with the same arguments and _meta["x402/payment"] = {"txId": "<id>", "salt": "<the salt>"}.`,
        jsonSchemaValidator: sdk.validator,
      },
    );
    // The list is built (if its version changed) now, and its JSON spliced into the response text.
    const token = this.token;
    server.setRequestHandler(ListToolsRequestSchema, () => {
      this.toolList();
      return { toJSON: () => token } as unknown as { tools: Tool[] };
    });
    server.setRequestHandler(CallToolRequestSchema, async (req) => {
      const args = (req.params.arguments ?? {}) as Record<string, unknown>;
      try {
        return await callTool(m, this.baseUrl(), req.params.name, args, req.params._meta as Record<string, unknown> | undefined);
      } catch (e) {
        if (e instanceof UnknownToolError) throw new McpError(ErrorCode.InvalidParams, e.message);
        if (e instanceof McpError) throw e;
        (m.logger ?? silentLogger).error({ err: e, tool: req.params.name }, 'MCP tool call crashed');
        return errorResult(HttpErrorCode.INTERNAL, 'internal error');
      }
    });
    return server;
  }

  /** Puts a server back once its transport is closed. */
  private release(server: Server): void {
    if (this.idle.length < MAX_IDLE_SERVERS) this.idle.push(server);
  }

  /** Answers one POST (already parsed `body`) through the SDK's transport: status, headers and text. */
  async handle(url: string, headers: Record<string, string | string[] | undefined>, body: unknown): Promise<{ status: number; headers: [string, string][]; text: string }> {
    const sdk = await loadMcpSdk();
    const server = await this.take();
    const transport = new sdk.WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    transport.onerror = (e) => (this.m.logger ?? silentLogger).debug({ err: e.message }, 'MCP transport error');
    try {
      await server.connect(transport);
      const h = new Headers();
      for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP_HEADERS.has(k)) h.set(k, Array.isArray(v) ? v.join(', ') : v);
      const response = await transport.handleRequest(new Request(url, { method: 'POST', headers: h }), { parsedBody: body });
      const out: [string, string][] = [];
      response.headers.forEach((v, k) => out.push([k, v]));
      return { status: response.status, headers: out, text: this.withToolList(response.body ? await response.text() : '') };
    } finally {
      await transport.close().catch(() => undefined);
      this.release(server);
    }
  }
}

/** Request headers not handed to the SDK's transport (the connection's, and the Host: the SDK is given the public URL). */
const HOP_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'upgrade']);

/** CORS headers of the MCP endpoint (browser-based agents may call it cross-origin). */
function mcpCors(ctx: Koa.Context): void {
  ctx.set('Access-Control-Allow-Origin', '*');
  ctx.set('Access-Control-Allow-Methods', 'POST, OPTIONS');
  ctx.set('Access-Control-Allow-Headers', 'content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id');
  ctx.set('Access-Control-Expose-Headers', 'mcp-session-id, mcp-protocol-version');
  ctx.set('Access-Control-Max-Age', '600');
}

/** A JSON-RPC error answer of the endpoint itself (before the SDK), with the node's error code in `data.code`. */
function jsonRpcError(ctx: Koa.Context, status: number, rpcCode: number, message: string, data: Record<string, unknown>): void {
  ctx.status = status;
  ctx.body = { jsonrpc: '2.0', error: { code: rpcCode, message, data }, id: null };
}

/**
 * The router of `POST /api/mcp` (GET and DELETE answer 405: stateless, no server-initiated
 * stream). A batch of more than `maxBatch` messages is refused (400, JSON-RPC -32600 with
 * `data.code` `mcp_batch_too_large`); each message of a batch is one request against the
 * caller's `--http-expensive-rate` (the guard charged the first; `chargeOperations` the others).
 */
export function createMcpRouter(m: McpModules): Router {
  const router = new Router();
  const nets = acceptedNets(m.params);
  const maxBatch = m.maxBatch ?? DEFAULT_MCP_MAX_BATCH;
  let endpoint: McpEndpoint | undefined;
  router.options('/api/mcp', (ctx) => {
    mcpCors(ctx);
    ctx.status = 204;
  });
  const notAllowed = (ctx: Koa.Context) => {
    mcpCors(ctx);
    ctx.set('Allow', 'POST, OPTIONS');
    ctx.status = 405;
    ctx.body = { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless; POST JSON-RPC messages.' }, id: null };
  };
  router.get('/api/mcp', notAllowed);
  router.delete('/api/mcp', notAllowed);
  router.post('/api/mcp', async (ctx) => {
    mcpCors(ctx);
    const net = ctx.query.net;
    if (net !== undefined && (typeof net !== 'string' || !nets.has(net))) {
      throw new NodeError(HttpErrorCode.INVALID_QUERY, `net must be one of ${[...nets].join(', ')} (this node serves ${m.params.network})`, { param: 'net' });
    }
    const body = ctx.request.body as unknown;
    const messages = Array.isArray(body) ? body.length : 1;
    if (messages > maxBatch) {
      return jsonRpcError(ctx, 400, -32600, `Invalid Request: a batch of ${messages} messages; this node takes at most ${maxBatch} per request (--mcp-max-batch)`, { code: MCP_BATCH_TOO_LARGE, maxBatch, received: messages });
    }
    // Every message is a request against the caller's limit: the guard counted one.
    if (!chargeOperations(ctx, messages - 1)) return;
    // The public base URL (never the request's Host); the first request after the listener is up builds the endpoint.
    const baseUrl = m.baseUrl ?? (() => localBaseUrl(ctx));
    endpoint ??= new McpEndpoint(m, m.baseUrl ?? baseUrl);
    const answer = await endpoint.handle(`${baseUrl()}${ctx.url}`, ctx.req.headers, body);
    ctx.status = answer.status;
    for (const [k, v] of answer.headers) if (k !== 'content-length') ctx.set(k, v);
    ctx.body = answer.text;
  });
  return router;
}
