/**
 * The paid-call core: every paid call, whatever carries it (the HTTP routes, MCP, later the
 * provider inbox and other 402 dialects), takes these steps in this order and gets one
 * `PaidCallOutcome` back (x402/core/outcome.ts):
 *
 *   1. the service exists (404 `unknown_service`), the request is a string or absent, or a JSON
 *      object or array for a JSON-input service, taken as its `JSON.stringify` (`requestTextOf`;
 *      anything else 400); a
 *      native payment for a service that is unknown or not for sale is answered by the payment
 *      watcher instead (409 `payment_refunded` with the refund tx, or 202 / 404 until it is mined);
 *   2. it is for sale here — available, and the node has a payee (503 `service_unavailable`); a
 *      native payment already on chain asks less: that the service can still serve it
 *      (`ServiceCatalog.isHonorable`: a provider agent's start-up grace after a restart);
 *   3. the request is valid input (400 `invalid_request`), and passes the service's own
 *      pre-payment check when it has one (`def.precheck`, e.g. a caller's URL resolving to a
 *      public address: 400 with the check's code, or 503 when its provider is down), and is not
 *      shown `down` by the catalog (503 `service_unavailable`, `reason` the catalog's) — all
 *      before any quote; a call carrying a native payment (already on chain) skips the
 *      pre-payment check: it settles, and a failing run is refunded;
 *   4. the quote (both rails' options; the native one names the seller id and the commitment
 *      scheme a payment's requestHash follows, x402/core/wire.ts), the same object as the last
 *      call's while nothing it is built from changed (x402/core/quoteMemo.ts);
 *   5. no payment → 402 with the quote (503 `payee_underfunded` instead while the payee owes a
 *      refund it cannot pay and could not refund this sale from what it holds: `payeeRefusal`);
 *      a payment the transport could not read → refused;
 *      a USDC payment while the rail is off → 402 `unsupported_scheme`; while the node is far
 *      behind the network → 503 `node_syncing`;
 *   6. the rail's settlement (x402/native/settle.ts, x402/usdc/settle.ts), against the quoted option.
 *
 * Transports only translate: they parse their payment carrier into a `PaymentProof` and render
 * the outcome. Nothing here knows koa or MCP.
 */
import { quoteRefusal } from '../../services/availability.js';
import { OutboundError } from '../../services/outbound/types.js';
import { ServiceError } from '../../services/types.js';
import { PAYMENT_HTTP_STATUS, PaymentErrorCode } from './errors.js';
import { refusal, type PaidCallOutcome, type Rail } from './outcome.js';
import { isHonorable, type NativeRail, type NativeUsdSource, type QuoteChain, type RefundCover, type ServiceCatalog, type ServiceDefinition, type ServiceRunContext, type UsdcRail } from './ports.js';
import type { QuoteContext } from './quote.js';
import { createQuoteMemo } from './quoteMemo.js';
import { UsdcErrorCode } from './errors.js';
import type { OfferSigner } from './offers.js';
import type { PaymentError } from './wire.js';

/** Default and largest wait for a native payment's block, seconds (`?wait=` over HTTP). */
export const DEFAULT_WAIT_SECONDS = 10;
export const MAX_WAIT_SECONDS = 60;

/**
 * A payment as a transport carries it: a native tx id (with the wait for its block the caller
 * asked for), a USDC payment (the base64 header value, or the payload already decoded), or a
 * carrier the transport found malformed (refused with its error after the checks before a quote).
 */
export type PaymentProof =
  | { readonly rail: 'native'; readonly txId: string; readonly salt?: string; readonly waitMs?: number }
  | { readonly rail: 'usdc'; readonly header: string; readonly provenPayer?: string }
  | { readonly rail: 'usdc'; readonly payload: object; readonly provenPayer?: string }
  | { readonly rail?: Rail; readonly malformed: PaymentError };

/** One paid call as the core sees it. */
export interface PaidCall {
  readonly serviceId: string;
  /**
   * The request as the transport received it: a string, absent (null/undefined), or for a JSON-input
   * service the parsed JSON value (see `requestTextOf`); anything else is refused with 400.
   */
  readonly request: unknown;
  /** Base URL the caller reached the node at (the quote's `resource` is `${baseUrl}/api/x402/${id}`). */
  readonly baseUrl: string;
  readonly payment?: PaymentProof;
}

/**
 * What the core reports of every call it answers, whatever the transport (the metrics count paid
 * calls, quotes and settle latency from these): the service id, the rail of the presented payment
 * (undefined without one, or when a malformed carrier did not say), the outcome and the seconds
 * the call took in the core (payment check, wait for the block, run, settlement).
 */
export interface PaidCallRecord {
  readonly serviceId: string;
  readonly paymentPresented: boolean;
  readonly rail: Rail | undefined;
  readonly outcome: PaidCallOutcome;
  readonly seconds: number;
}

/** What the core needs. */
export interface PaidCallModules {
  readonly catalog: ServiceCatalog;
  /** Native settlement; undefined when the node has no payee key (paid calls then answer 503). */
  readonly native?: NativeRail;
  /** USDC settlement, when the operator configured the rail. */
  readonly usdc?: UsdcRail;
  readonly params: QuoteChain;
  readonly nativeUsd: NativeUsdSource;
  /** True while the node is far behind the network (payments are refused then). */
  readonly isSyncing?: () => boolean;
  /**
   * Why this node must not sell though its peers do not find it behind: a fleet node whose tip
   * is far behind its fleet's best (x402/fleet/fleet.ts). Refused like a sync, 503 `node_syncing`.
   */
  readonly behindFleet?: () => string | undefined;
  /** Time a request may take in all (the HTTP timeout), ms: the block wait and the run must fit. */
  readonly requestBudgetMs: number;
  /** What services' pre-payment checks (`def.precheck`) run with; without it they are skipped. */
  readonly context?: ServiceRunContext;
  /** Told every answered call of a known service (the metrics); must not throw. */
  readonly observe?: (r: PaidCallRecord) => void;
  /** What the payee holds against the refunds it owes (x402/native/refunds.ts `cover`): a stuck refund blocks the sales `payeeRefusal` names. */
  readonly refundCover?: () => RefundCover;
  /** Signs the offers of every 402 (x402 Offer and Receipt extension, x402/core/offers.ts); without it 402s carry none. */
  readonly offers?: OfferSigner;
}

/** The paid-call core (see module comment). */
export interface PaidCallCore {
  /** The native payee address; undefined when the node sells nothing. */
  readonly nativePayTo: string | undefined;
  /** The seller id native payments commit to and the confirmations they need; undefined when the node sells nothing. */
  readonly nativeSeller: { readonly sellerId: string; readonly confirmations: number } | undefined;
  /** The USDC payee address when the rail is on. */
  readonly usdcPayTo: string | undefined;
  /** Whether a service is for sale on this node now (available, and the node has a payee). */
  isForSale(def: ServiceDefinition): boolean;
  /** What the payee holds against the refunds it owes, where the node knows (`payeeRefusal` weighs a sale against it). */
  refundCover(): RefundCover | undefined;
  /** Runs the steps of a paid call (never throws for anything the caller did). */
  call(c: PaidCall): Promise<PaidCallOutcome>;
}

const error = (code: string, message: string, extra: Record<string, unknown> = {}): PaymentError => ({ code, message, ...extra });

/**
 * The one request string of a call: a string as sent; for a JSON-input service (`inputIsJson`)
 * an object or array as `JSON.stringify(value)` (compact, keys in the order received), as MCP
 * does. That string is what the input check reads, the quote prices and a native payment's
 * requestHash must commit to (x402/core/wire.ts requestCommitment). Undefined when absent; an error
 * message for anything else.
 */
export function requestTextOf(def: Pick<ServiceDefinition, 'id' | 'inputIsJson'>, raw: unknown): { readonly request: string | undefined } | { readonly refused: string } {
  if (raw === undefined || raw === null) return { request: undefined };
  if (typeof raw === 'string') return { request: raw };
  if (def.inputIsJson && typeof raw === 'object') return { request: JSON.stringify(raw) };
  return { refused: def.inputIsJson ? 'request must be a JSON object or the same JSON as a string' : `request must be a string for ${def.id}` };
}

/** Time limit of a service's pre-payment check (DNS of a caller's URL), ms. */
export const PRECHECK_TIMEOUT_MS = 5_000;
/** Codes of the outbound client's refusals of a caller's URL: each answers 400 with its own code. */
const URL_REFUSALS: ReadonlySet<string> = new Set(['url_invalid', 'url_scheme_refused', 'url_address_refused', 'dns_failed', 'too_many_redirects']);

/**
 * Runs `def.precheck` (see step 3): a caller's fault (`OutboundError` with `callerFault`) is a
 * 400 — with the client's code for a refused URL, else `invalid_request` with the code as
 * `reason` —, a `ServiceError` a 503 `service_unavailable`; anything else it throws is left for
 * the run to meet. Returns the refusal, if any.
 */
export async function precheckRefusal(def: ServiceDefinition, input: unknown, context: ServiceRunContext | undefined): Promise<PaymentError | undefined> {
  if (!context) return undefined;
  if (def.precheck) {
    try {
      await def.precheck({ ...context, signal: AbortSignal.timeout(PRECHECK_TIMEOUT_MS) }, input);
    } catch (e) {
      if (e instanceof OutboundError && e.callerFault) return URL_REFUSALS.has(e.code) ? error(e.code, e.message) : error(PaymentErrorCode.INVALID_REQUEST, e.message, { reason: e.code });
      if (e instanceof ServiceError) return error(PaymentErrorCode.SERVICE_UNAVAILABLE, `${def.id} is not available on this node right now: ${e.message}`, { reason: e.code });
    }
  }
  // What the catalog shows `down` is never quoted: health and this check are one state (services/availability.ts).
  const down = quoteRefusal(context, def);
  if (down) return error(PaymentErrorCode.SERVICE_UNAVAILABLE, `${def.id} is not available on this node right now: ${down.message}`, { reason: down.code });
  return undefined;
}
const statusOf = (code: string): number => PAYMENT_HTTP_STATUS[code] ?? 400;

/**
 * Why a new sale of `def` is not quoted for the payee's funds, or undefined: only while the payee
 * owes a refund it cannot pay (`cover.stuck`), and only a sale it could not refund from what it
 * holds now, without the sale's own payment — its price plus one refund's fee above the payee's
 * spendable balance. Cheaper services keep selling (what they earn pays the stuck refund); an
 * owed refund never stops every service. A payment already made is never refused for this.
 */
export function payeeRefusal(def: Pick<ServiceDefinition, 'id' | 'priceBase'>, cover: RefundCover | undefined): PaymentError | undefined {
  if (!cover || cover.stuck.count === 0) return undefined;
  const need = def.priceBase + cover.refundFeeBase;
  if (need <= cover.spendableBase) return undefined;
  return error(
    PaymentErrorCode.PAYEE_UNDERFUNDED,
    `this node owes ${cover.stuck.count} refund(s) its payee cannot pay yet, and could not refund a call of ${def.id} (${def.priceBase} plus a refund's fee of ${cover.refundFeeBase} base units) from the ${cover.spendableBase} it holds; cheaper services are still sold, and this one is again once the refunds are paid`,
    { refundsStuck: cover.stuck.count, refundsStuckBase: cover.stuck.amountBase.toString(), priceBase: def.priceBase.toString(), spendableBase: cover.spendableBase.toString() },
  );
}

/** How long a native settle may wait for the payment's block: at most what the request's time leaves after the service's own run. */
export function settleWaitMs(requestBudgetMs: number, def: ServiceDefinition, askedMs: number): number {
  return Math.min(askedMs, Math.max(0, requestBudgetMs - def.timeoutMs - 1000));
}

/** `core` with `call` put in front of it (a decorator: payouts, ledger availability); everything else is `core`'s. */
export function decorateCall(core: PaidCallCore, call: PaidCallCore['call']): PaidCallCore {
  return {
    get nativePayTo() {
      return core.nativePayTo;
    },
    get nativeSeller() {
      return core.nativeSeller;
    },
    get usdcPayTo() {
      return core.usdcPayTo;
    },
    isForSale: (def) => core.isForSale(def),
    refundCover: () => core.refundCover(),
    call,
  };
}

/** Creates the paid-call core. */
export function createPaidCallCore(m: PaidCallModules): PaidCallCore {
  const isForSale = (def: ServiceDefinition) => m.native !== undefined && m.catalog.isAvailable(def);
  const rejected = (code: string, message: string, extra?: Record<string, unknown>): PaidCallOutcome => ({ kind: 'rejected', status: statusOf(code), error: error(code, message, extra) });
  const quotes = createQuoteMemo();

  /** The answer to a native payment presented at a service that is unknown or not for sale (see NativeRail.settleRefused). */
  async function refusedPayment(def: ServiceDefinition | undefined, p: PaymentProof | undefined): Promise<PaidCallOutcome | undefined> {
    if (!p || !('txId' in p) || !m.native?.settleRefused) return undefined;
    const waitMs = Math.min(p.waitMs ?? DEFAULT_WAIT_SECONDS * 1000, Math.max(0, m.requestBudgetMs - (def?.timeoutMs ?? 0) - 1000));
    const out = await m.native.settleRefused(p.txId, waitMs);
    return out && { kind: 'rejected', status: out.status, error: out.error };
  }

  async function call(c: PaidCall): Promise<PaidCallOutcome> {
    const def = m.catalog.get(c.serviceId);
    // A native payment is already on chain: it is honoured while the service can still serve
    // it (`isHonorable`: a provider's start-up grace after a restart), not only while it is sold.
    const paidNative = c.payment?.rail === 'native' && 'txId' in c.payment;
    const available = (d: ServiceDefinition) => (paidNative ? isHonorable(m.catalog, d) : m.catalog.isAvailable(d));
    // A payment for a service that is gone or not for sale here is refunded (x402/native/unhonored.ts): say so, with the refund tx.
    if (!def || !m.native || !available(def)) {
      const refunded = await refusedPayment(def, c.payment);
      if (refunded) return refunded;
    }
    if (!def) return rejected(PaymentErrorCode.UNKNOWN_SERVICE, `no service ${c.serviceId}; see /api/x402/bazaar`);
    const text = requestTextOf(def, c.request);
    if ('refused' in text) return rejected(PaymentErrorCode.INVALID_REQUEST, text.refused);
    const request = text.request;
    const native = m.native;
    if (!native || !available(def)) return rejected(PaymentErrorCode.SERVICE_UNAVAILABLE, `${def.id} is not available on this node right now`);
    const checked = m.catalog.validateInput(def, request);
    if (!checked.ok) return rejected(PaymentErrorCode.INVALID_REQUEST, checked.error.message, checked.error.details === undefined ? {} : { details: checked.error.details });
    // A native payment is already on chain: its answer is the settlement's (the stored result, or a run refunded when it fails), never a refusal that keeps the money.
    const pre = paidNative ? undefined : await precheckRefusal(def, checked.input, m.context);
    if (pre) return { kind: 'rejected', status: statusOf(pre.code), error: pre };

    const quoteContext: QuoteContext = {
      resource: `${c.baseUrl}/api/x402/${def.id}`,
      network: m.params.network,
      chainId: m.params.chainId,
      payTo: native.payTo,
      sellerId: native.sellerId,
      confirmations: native.requiredConfirmations,
      microUsd: m.nativeUsd.get().microUsd,
      // Provider services too: the node is paid (escrow) and pays the provider its NATIVE share (x402/providers/payouts.ts).
      usdc: m.usdc ? { payTo: m.usdc.payTo } : undefined,
    };
    const quote = quotes.quoteOf(def, quoteContext, c.baseUrl);
    const p = c.payment;
    if (!p) {
      const underfunded = payeeRefusal(def, m.refundCover?.());
      if (underfunded) return { kind: 'rejected', status: statusOf(underfunded.code), error: underfunded };
      return { kind: 'quote', status: 402, quote };
    }
    const refused = (rail: Rail | undefined, status: number, code: string, message: string) => ({ ...refusal(status, error(code, message), { rail, ...('txId' in p ? { txId: p.txId } : {}) }), quote });

    if ('malformed' in p) return { ...refusal(statusOf(p.malformed.code), p.malformed, { rail: p.rail }), quote };
    const usdcOption = quote.accepts.find((a) => a.scheme === 'exact');
    if (p.rail === 'usdc' && (!m.usdc || !usdcOption)) return refused('usdc', 402, UsdcErrorCode.UNSUPPORTED_SCHEME, 'this node does not accept USDC payments; pay the native option');
    if (m.isSyncing?.()) return refused(p.rail, 503, PaymentErrorCode.NODE_SYNCING, 'this node is catching up with the network; retry shortly or use another node');
    const behindFleet = m.behindFleet?.();
    if (behindFleet) return refused(p.rail, 503, PaymentErrorCode.NODE_SYNCING, behindFleet);

    const issue = { baseUrl: c.baseUrl, resource: quoteContext.resource };
    if (p.rail === 'usdc') {
      const out = await m.usdc!.settle(def, request, checked.input, 'header' in p ? p.header : p.payload, usdcOption!, { issue, ...(p.provenPayer === undefined ? {} : { provenPayer: p.provenPayer }) });
      return { ...out, quote };
    }
    // The wait for the block and the service's own run must both fit in the request's time.
    const waitMs = settleWaitMs(m.requestBudgetMs, def, p.waitMs ?? DEFAULT_WAIT_SECONDS * 1000);
    const out = await native.settle(def, request, checked.input, { txId: p.txId, ...(p.salt !== undefined ? { salt: p.salt } : {}) }, waitMs, issue);
    return { ...out, quote };
  }

  /** A 402 with its signed offers (one per option, from the signer's cache); any other outcome as it is. */
  async function offered(c: PaidCall): Promise<PaidCallOutcome> {
    const outcome = await call(c);
    if (!m.offers || outcome.status !== 402 || !('quote' in outcome)) return outcome;
    return { ...outcome, quote: quotes.offeredOf(outcome.quote, c.baseUrl, m.offers) };
  }

  /** `call`, reported to `observe` once per answered call of a known service. */
  async function observedCall(c: PaidCall): Promise<PaidCallOutcome> {
    if (!m.observe) return offered(c);
    const started = process.hrtime.bigint();
    const outcome = await offered(c);
    if (m.catalog.get(c.serviceId)) {
      const rail = c.payment?.rail ?? ('rail' in outcome ? outcome.rail : undefined);
      m.observe({ serviceId: c.serviceId, paymentPresented: c.payment !== undefined, rail, outcome, seconds: Number(process.hrtime.bigint() - started) / 1e9 });
    }
    return outcome;
  }

  return {
    get nativePayTo() {
      return m.native?.payTo;
    },
    get nativeSeller() {
      return m.native && { sellerId: m.native.sellerId, confirmations: m.native.requiredConfirmations };
    },
    get usdcPayTo() {
      return m.usdc?.payTo;
    },
    isForSale,
    refundCover: () => m.refundCover?.(),
    call: observedCall,
  };
}
