/**
 * The paid endpoints (spec endpoints 1 and 2): `POST /api/x402` with `{serviceId, request,
 * payment}` and `POST /api/x402/:serviceId` with `{request, payment}`. Unknown service → 404,
 * unavailable → 503 before any quote, invalid input → 400 before any quote, no payment → 402
 * Quote, `payment.txId` → native settlement (`?wait=` seconds for the block, default 10), an
 * `X-PAYMENT` (x402 v1) or `PAYMENT-SIGNATURE` (x402 v2) header → USDC settlement
 * (x402/usdcSettle.ts).
 *
 * With the USDC rail on, every 402 also carries the x402 v2 `PAYMENT-REQUIRED` header (the
 * `exact`/Base option), which `@x402/fetch` 2.x reads first. A client that cannot parse our
 * native option (the legacy `x402-fetch` 1.2.0 validates every `accepts` entry strictly) asks
 * for the USDC option alone with `?rail=usdc` or `Prefer: rail=usdc` (RFC 7240); see
 * docs/usdc-rail.md.
 */
import Router from '@koa/router';
import type Koa from 'koa';
import { NodeError } from '../consensus/errors.js';
import type { ChainParams } from '../consensus/params.js';
import type { NativeUsdSource, ServiceDefinition } from '../services/types.js';
import { PAYMENT_HTTP_STATUS, PaymentErrorCode } from '../x402/errors.js';
import { buildQuote, usdcRequirements, type PaymentRequirements, type QuoteBody } from '../x402/quote.js';
import { requestHashOf, type NativeSettlement } from '../x402/settle.js';
import type { UsdcSettlement } from '../x402/usdcSettle.js';
import { encodeJsonHeader, paymentRequiredV2, UsdcErrorCode } from '../x402/usdcWire.js';
import { registerHttpStatuses } from './http.js';

/** What the routes need of the service registry. */
export interface ServiceCatalog {
  get(id: string): ServiceDefinition | undefined;
  validateInput(def: ServiceDefinition, request: string | undefined): { ok: true; input: unknown } | { ok: false; error: { code: string; message: string; details?: unknown } };
  isAvailable(def: ServiceDefinition): boolean;
}

/** Modules of the paid endpoints. */
export interface X402RouteModules {
  readonly catalog: ServiceCatalog;
  /** Native settlement; undefined when this node has no payee key (paid calls then answer 503). */
  readonly settlement?: NativeSettlement;
  readonly params: ChainParams;
  readonly nativeUsd: NativeUsdSource;
  /** USDC rail (exact on base), when configured (payTo and facilitator). */
  readonly usdc?: { readonly payTo: string };
  /** Settlement of the USDC rail; USDC payments are refused (402) without it. */
  readonly usdcSettlement?: UsdcSettlement;
  /** True while the node is far behind the network. */
  readonly isSyncing?: () => boolean;
  /** Time a request may take in all (the HTTP timeout), ms. */
  readonly requestBudgetMs: number;
}

/** Default and largest `?wait=` in seconds. */
export const DEFAULT_WAIT_SECONDS = 10;
export const MAX_WAIT_SECONDS = 60;

registerHttpStatuses(PAYMENT_HTTP_STATUS);

// ---- The steps every paid call takes, over HTTP here and over MCP (node/mcp.ts) ----

/**
 * The checks before any quote: the service sells on this node (available, and the node has a
 * payee: `settlement`), and the request is valid input. Throws NodeError.
 */
export function checkPaidCall<S>(catalog: ServiceCatalog, settlement: S | undefined, def: ServiceDefinition, request: string | undefined): { input: unknown; settlement: S } {
  if (!catalog.isAvailable(def) || !settlement) throw new NodeError(PaymentErrorCode.SERVICE_UNAVAILABLE, `${def.id} is not available on this node right now`);
  const checked = catalog.validateInput(def, request);
  if (!checked.ok) throw new NodeError(PaymentErrorCode.INVALID_REQUEST, checked.error.message, checked.error.details === undefined ? {} : { details: checked.error.details });
  return { input: checked.input, settlement };
}

/** Payments are refused while the node is far behind the network (its view of them may be stale): the refusal, if so. */
export function syncingRefusal(isSyncing: (() => boolean) | undefined): NodeError | undefined {
  return isSyncing?.() ? new NodeError(PaymentErrorCode.NODE_SYNCING, 'this node is catching up with the network; retry shortly or use another node') : undefined;
}

/** Throws `syncingRefusal`'s error, if any. */
export function assertInStep(isSyncing: (() => boolean) | undefined): void {
  const refusal = syncingRefusal(isSyncing);
  if (refusal) throw refusal;
}

/** How long a native settle may wait for the payment's block: at most what the request's time leaves after the service's own run. */
export function settleWaitMs(requestBudgetMs: number, def: ServiceDefinition, askedMs: number): number {
  return Math.min(askedMs, Math.max(0, requestBudgetMs - def.timeoutMs - 1000));
}

interface CallBody {
  serviceId?: unknown;
  request?: unknown;
  payment?: unknown;
}

function bodyOf(ctx: Koa.Context): CallBody {
  const b = ctx.request.body as unknown;
  if (b === undefined || b === null || (typeof b === 'object' && !Array.isArray(b))) return (b ?? {}) as CallBody;
  throw new NodeError(PaymentErrorCode.INVALID_REQUEST, 'body must be a JSON object');
}

/** Parses `?wait=` (seconds). */
function waitSeconds(ctx: Koa.Context): number {
  const raw = ctx.query.wait;
  if (raw === undefined) return DEFAULT_WAIT_SECONDS;
  const n = typeof raw === 'string' && /^\d{1,3}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(n) || n > MAX_WAIT_SECONDS) throw new NodeError(PaymentErrorCode.INVALID_REQUEST, `wait must be an integer number of seconds from 0 to ${MAX_WAIT_SECONDS}`);
  return n;
}

/** The USDC payment header of a request: `PAYMENT-SIGNATURE` (x402 v2) or `X-PAYMENT` (v1); '' when none. */
function paymentHeaderOf(ctx: Koa.Context): string {
  return ctx.get('payment-signature') || ctx.get('x-payment');
}

/** How the caller asked for the USDC option alone: `?rail=usdc` or `Prefer: rail=usdc` (RFC 7240). */
function usdcOnlyPreference(ctx: Koa.Context): 'query' | 'prefer' | undefined {
  if (ctx.query.rail === 'usdc') return 'query';
  const prefer = ctx.get('prefer');
  if (prefer && prefer.split(',').some((p) => p.split(';')[0].trim().toLowerCase().replace(/\s+/g, '') === 'rail=usdc')) return 'prefer';
  return undefined;
}

/** Builds the router of the paid endpoints. */
export function createX402Router(m: X402RouteModules): Router {
  const router = new Router();

  const call = async (ctx: Koa.Context, serviceId: unknown, body: CallBody) => {
    if (typeof serviceId !== 'string' || serviceId.length === 0) throw new NodeError(PaymentErrorCode.INVALID_REQUEST, 'serviceId (string) is required');
    const def = m.catalog.get(serviceId);
    if (!def) throw new NodeError(PaymentErrorCode.UNKNOWN_SERVICE, `no service ${serviceId}; see /api/x402/bazaar`);
    if (body.request !== undefined && body.request !== null && typeof body.request !== 'string') {
      throw new NodeError(PaymentErrorCode.INVALID_REQUEST, 'request must be a string (JSON inputs are sent as a JSON string)');
    }
    const request = typeof body.request === 'string' ? body.request : undefined;
    const { input, settlement } = checkPaidCall(m.catalog, m.settlement, def, request);

    const nativePayTo = settlement.payTo;
    const quoteContext = () => ({
      resource: `${ctx.protocol}://${ctx.host}/api/x402/${def.id}`,
      network: m.params.network,
      chainId: m.params.chainId,
      payTo: nativePayTo,
      requestHash: request === undefined ? undefined : requestHashOf(request),
      microUsd: m.nativeUsd.get().microUsd,
      usdc: m.usdc && m.usdcSettlement ? m.usdc : undefined,
    });
    /** A 402: the quote (only the USDC option when asked for), its v2 header, and the reason of a refusal. */
    const answer402 = (quote: QuoteBody, error?: { code: string; message: string }, payer?: string) => {
      const usdcOption = quote.accepts.find((a) => a.scheme === 'exact');
      let accepts = quote.accepts;
      if (usdcOption) {
        ctx.vary('Prefer');
        const only = usdcOnlyPreference(ctx);
        if (only) accepts = [usdcOption];
        if (only === 'prefer') ctx.set('Preference-Applied', 'rail=usdc');
        ctx.set('PAYMENT-REQUIRED', encodeJsonHeader(paymentRequiredV2(usdcOption, error?.code)));
      }
      ctx.status = 402;
      ctx.body = { ...quote, accepts, ...(error ? { error, ...(payer ? { payer } : {}) } : {}) };
    };

    const usdcHeader = paymentHeaderOf(ctx);
    if (usdcHeader) {
      if (body.payment !== undefined && body.payment !== null) throw new NodeError(PaymentErrorCode.INVALID_REQUEST, 'send either payment.txId (native rail) or a payment header (USDC rail), not both');
      const q = quoteContext();
      if (!q.usdc || !m.usdcSettlement) {
        answer402(buildQuote(def, q), { code: UsdcErrorCode.UNSUPPORTED_SCHEME, message: 'this node does not accept USDC payments; pay the native option' });
        return;
      }
      assertInStep(m.isSyncing);
      const req: PaymentRequirements = usdcRequirements(def, { ...q, usdc: q.usdc });
      const outcome = await m.usdcSettlement.settle(def, request, input, usdcHeader, req);
      if (outcome.status === 402) {
        answer402(buildQuote(def, q), outcome.error, outcome.payer);
        return;
      }
      if (outcome.status === 200) for (const [k, v] of Object.entries(outcome.headers)) ctx.set(k, v);
      ctx.status = outcome.status;
      ctx.body = outcome.body;
      return;
    }

    if (body.payment === undefined || body.payment === null) {
      answer402(buildQuote(def, quoteContext()));
      return;
    }
    const payment = body.payment as { txId?: unknown };
    if (typeof payment !== 'object' || typeof payment.txId !== 'string') {
      throw new NodeError(PaymentErrorCode.INVALID_PAYMENT, 'payment must be {"txId": "<id of your agent_invoke transaction>"}');
    }
    assertInStep(m.isSyncing);
    // The wait for the block and the service's own run must both fit in the request's time.
    const outcome = await settlement.settle(def, request, input, payment.txId, settleWaitMs(m.requestBudgetMs, def, waitSeconds(ctx) * 1000));
    ctx.status = outcome.status;
    ctx.body = outcome.body;
  };

  router.post('/api/x402/:serviceId', async (ctx) => {
    const body = bodyOf(ctx);
    await call(ctx, ctx.params.serviceId, body);
  });
  router.post('/api/x402', async (ctx) => {
    const body = bodyOf(ctx);
    await call(ctx, body.serviceId, body);
  });
  return router;
}
