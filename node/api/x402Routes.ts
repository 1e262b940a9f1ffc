/**
 * The paid endpoints (spec endpoints 1 and 2): `POST /api/x402` with `{serviceId, request,
 * payment}` and `POST /api/x402/:serviceId` with `{request, payment}`. Unknown service → 404,
 * unavailable → 503 before any quote, invalid input → 400 before any quote, no payment → 402
 * Quote, `payment.txId` → native settlement (`?wait=` seconds for the block, default 10), an
 * `X-PAYMENT` (x402 v1) or `PAYMENT-SIGNATURE` (x402 v2) header → USDC settlement
 * (x402/usdc/settle.ts), or native settlement when the header's option is `native-x402` (the
 * payload `{txId, salt}` of the agent package's scheme for the official x402 clients).
 *
 * With the USDC rail on, every 402 also carries the x402 v2 `PAYMENT-REQUIRED` header (the
 * `exact`/Base option), which `@x402/fetch` 2.x reads first. A client that cannot parse our
 * native option (the legacy `x402-fetch` 1.2.0 validates every `accepts` entry strictly) asks
 * for the USDC option alone with `?rail=usdc` or `Prefer: rail=usdc` (RFC 7240); see
 * docs/usdc-rail.md. The 402 of a call without payment is rendered once and served again, byte for
 * byte what a fresh rendering would write, while its quote holds (node/api/quoteAnswers.ts).
 *
 * A thin adapter of the paid-call core (x402/core/paidCall.ts): it reads the body and the payment
 * headers into a `PaidCall`, and writes the core's outcome back as status, body and headers.
 * Which checks run, in which order, and what they answer is the core's business.
 */
import Router from '@koa/router';
import type Koa from 'koa';
import { NodeError } from '../../consensus/errors.js';
import { PaymentErrorCode } from '../../x402/core/errors.js';
import { outcomeBody, type PaidCallOutcome } from '../../x402/core/outcome.js';
import type { QuoteBody } from '../../x402/core/quote.js';
import { DEFAULT_WAIT_SECONDS, MAX_WAIT_SECONDS, type PaidCallCore, type PaymentProof } from '../../x402/core/paidCall.js';
import { checkPaymentPayload, decodePaymentHeader, paymentResponseHeaders } from '../../x402/usdc/wire.js';
import { nativePaymentOfHeader, PaymentAuth, paymentReceiptOf } from './paymentDialects.js';
import { SIGN_IN_WITH_X, SiwxChallenges } from '../../x402/usdc/siwx.js';
import { localBaseUrl } from './publicUrl.js';
import { EXPOSED_402_HEADERS, QuoteAnswers, quoteHeaders, renderQuoteAnswer } from './quoteAnswers.js';

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

/** `?wait=` (seconds) as ms, or the refusal of a malformed value. */
function waitMsOf(ctx: Koa.Context): number | { code: string; message: string } {
  const raw = ctx.query.wait;
  if (raw === undefined) return DEFAULT_WAIT_SECONDS * 1000;
  const n = typeof raw === 'string' && /^\d{1,3}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(n) || n > MAX_WAIT_SECONDS) return { code: PaymentErrorCode.INVALID_REQUEST, message: `wait must be an integer number of seconds from 0 to ${MAX_WAIT_SECONDS}` };
  return n * 1000;
}

/**
 * The payment of a request: a USDC header (`PAYMENT-SIGNATURE`, x402 v2, or `X-PAYMENT`, v1), or
 * `payment.txId` in the body (native); undefined when none.
 */
function paymentOf(ctx: Koa.Context, body: CallBody, auth: PaymentAuth, resource: string, now: () => number): PaymentProof | undefined {
  // The "Payment" HTTP auth scheme (paymentDialects.ts) carries either rail's payment.
  const viaAuth = ctx.get('authorization') ? auth.proofOf(ctx.get('authorization'), resource, now()) : undefined;
  if (viaAuth) {
    if (ctx.get('payment-signature') || ctx.get('x-payment') || (body.payment !== undefined && body.payment !== null)) {
      return { malformed: { code: PaymentErrorCode.INVALID_REQUEST, message: 'send one payment: an Authorization: Payment credential, a payment header or payment.txId' } };
    }
    return viaAuth;
  }
  const header = ctx.get('payment-signature') || ctx.get('x-payment');
  const inBody = body.payment !== undefined && body.payment !== null;
  if (header) {
    if (inBody) return { malformed: { code: PaymentErrorCode.INVALID_REQUEST, message: 'send either payment.txId (native rail) or a payment header (USDC rail), not both' } };
    // The native scheme of the x402 v2 clients sends {txId, salt} in the header (paymentDialects.ts).
    const native = nativePaymentOfHeader(header);
    if (native && 'malformed' in native) return { rail: 'native', malformed: { code: PaymentErrorCode.INVALID_PAYMENT, message: native.malformed } };
    if (native) {
      const waitMs = waitMsOf(ctx);
      if (typeof waitMs !== 'number') return { rail: 'native', malformed: waitMs };
      return { rail: 'native', ...native, waitMs };
    }
    return { rail: 'usdc', header };
  }
  if (!inBody) return undefined;
  const payment = body.payment as { txId?: unknown; salt?: unknown };
  if (typeof payment !== 'object' || typeof payment.txId !== 'string' || (payment.salt !== undefined && typeof payment.salt !== 'string')) {
    return { rail: 'native', malformed: { code: PaymentErrorCode.INVALID_PAYMENT, message: 'payment must be {"txId": "<id of your agent_invoke transaction>", "salt": "<the 64-hex secret its requestHash commits to>"}' } };
  }
  const waitMs = waitMsOf(ctx);
  if (typeof waitMs !== 'number') return { rail: 'native', malformed: waitMs };
  return { rail: 'native', txId: payment.txId, ...(typeof payment.salt === 'string' ? { salt: payment.salt } : {}), waitMs };
}

/** How the caller asked for the USDC option alone: `?rail=usdc` or `Prefer: rail=usdc` (RFC 7240). */
function usdcOnlyPreference(ctx: Koa.Context): 'query' | 'prefer' | undefined {
  if (ctx.query.rail === 'usdc') return 'query';
  const prefer = ctx.get('prefer');
  if (prefer && prefer.split(',').some((p) => p.split(';')[0].trim().toLowerCase().replace(/\s+/g, '') === 'rail=usdc')) return 'prefer';
  return undefined;
}

/** What the answers of the paid endpoints are written with. */
interface AnswerDeps {
  readonly auth: PaymentAuth;
  readonly siwx: SiwxChallenges;
  /** The kept 402 answers of plain quotes; undefined: rendered each time. */
  readonly answers: QuoteAnswers | undefined;
  /** Unix ms. */
  readonly now: () => number;
}

/** The JSON type koa gives an object body; a kept body is bytes and says it itself. */
const JSON_TYPE = 'application/json; charset=utf-8';

/** The request text a 402 names (the native option's v2 `extra.request`): the core's request text. */
function requestTextOf(request: unknown): string | undefined {
  return typeof request === 'string' ? request : request !== undefined && request !== null && typeof request === 'object' ? JSON.stringify(request) : undefined;
}

/** Writes the 402 of a plain quote (no payment presented): kept or rendered (quoteAnswers.ts), the same bytes either way. */
function answerQuote(ctx: Koa.Context, quote: QuoteBody, d: AnswerDeps, baseUrl: string, request: unknown): void {
  const only = quote.accepts.some((a) => a.scheme === 'exact') ? usdcOnlyPreference(ctx) : undefined;
  const input = { quote, baseUrl, requestText: requestTextOf(request), only };
  const a = d.answers ? d.answers.answer(input, d.now()) : renderQuoteAnswer(input, d.auth, d.siwx, d.now());
  if (a.varyPrefer) ctx.vary('Prefer');
  if (only === 'prefer') ctx.set('Preference-Applied', 'rail=usdc');
  ctx.set('PAYMENT-REQUIRED', a.paymentRequired);
  ctx.set('WWW-Authenticate', a.wwwAuthenticate as string[]);
  ctx.set('Access-Control-Expose-Headers', EXPOSED_402_HEADERS);
  ctx.status = 402;
  ctx.set('Content-Type', JSON_TYPE);
  ctx.body = a.body;
}

/** Writes an outcome as the HTTP answer: status, body, and the headers of every 402 dialect or of the settlement. */
function answer(ctx: Koa.Context, o: PaidCallOutcome, d: AnswerDeps, viaAuth: boolean, baseUrl: string, request: unknown, viaHeader: boolean): void {
  if (o.kind === 'quote') return answerQuote(ctx, o.quote, d, baseUrl, request);
  let accepts;
  if (o.status === 402 && 'quote' in o) {
    // A refused payment's 402: the quote (only the USDC option when asked for), the x402 v2 header
    // (its error, the sign-in declaration a payer that lost its payment identifier proves itself
    // with, the shown options' signed offers, the request the native payment commits to) and the
    // Payment challenges of the same options: as a plain quote's, rendered each time.
    const only = o.quote.accepts.some((a) => a.scheme === 'exact') ? usdcOnlyPreference(ctx) : undefined;
    const h = quoteHeaders({ quote: o.quote, baseUrl, requestText: requestTextOf(request), only }, o.kind === 'refused' ? o.error.code : undefined, d.auth, d.siwx, d.now());
    if (h.varyPrefer) ctx.vary('Prefer');
    if (only === 'prefer') ctx.set('Preference-Applied', 'rail=usdc');
    ctx.set('PAYMENT-REQUIRED', h.paymentRequired);
    ctx.set('WWW-Authenticate', h.wwwAuthenticate as string[]);
    ctx.set('Access-Control-Expose-Headers', EXPOSED_402_HEADERS);
    if (h.accepts !== o.quote.accepts) accepts = h.accepts;
  }
  // A USDC settlement, or a native one whose payment came in a payment header (an x402 client reads the answer there).
  if (o.kind === 'paid' && (o.rail === 'usdc' || viaHeader)) ctx.set(paymentResponseHeaders(o.response));
  if (o.kind === 'paid' && viaAuth) {
    ctx.set('Payment-Receipt', paymentReceiptOf(o.rail, o.response.transaction, d.now()));
    ctx.append('Access-Control-Expose-Headers', 'Payment-Receipt');
    ctx.set('Cache-Control', 'private');
  }
  // A USDC settlement being reconciled from Base: when to retry with the same payment header.
  if (o.kind === 'failed' && 'retryAfter' in o.body && typeof o.body.retryAfter === 'number') {
    ctx.set('Retry-After', String(o.body.retryAfter));
    ctx.append('Access-Control-Expose-Headers', 'Retry-After');
  }
  ctx.status = o.status;
  ctx.body = outcomeBody(o, accepts);
}

/** Options of the paid endpoints' router. */
export interface X402RouterOptions {
  /**
   * The kept 402 answers of plain quotes (node/api/quoteAnswers.ts); default: a set of its own
   * with the default limits; `null`: every 402 rendered anew.
   */
  readonly answers?: QuoteAnswers | null;
  /** Unix ms (tests). */
  readonly now?: () => number;
}

/**
 * Builds the router of the paid endpoints over the paid-call core. `baseUrl` is the node's public
 * base URL (node/api/publicUrl.ts): the quote's `resource`, the sign-in challenge and the Payment
 * realm name it, never the request's Host; default: the address the connection reached.
 */
export function createX402Router(core: PaidCallCore, auth: PaymentAuth = new PaymentAuth(), siwx: SiwxChallenges = new SiwxChallenges(), publicBaseUrl?: () => string, opts: X402RouterOptions = {}): Router {
  const router = new Router();
  const now = opts.now ?? Date.now;
  const deps: AnswerDeps = { auth, siwx, answers: opts.answers === null ? undefined : (opts.answers ?? new QuoteAnswers(auth, siwx)), now };
  const call = async (ctx: Koa.Context, serviceId: unknown, body: CallBody) => {
    if (typeof serviceId !== 'string' || serviceId.length === 0) throw new NodeError(PaymentErrorCode.INVALID_REQUEST, 'serviceId (string) is required');
    const baseUrl = publicBaseUrl?.() ?? localBaseUrl(ctx);
    const resource = `${baseUrl}/api/x402/${serviceId}`;
    let payment = paymentOf(ctx, body, auth, resource, now);
    // A USDC retry signed in as its payer (x402 sign-in-with-x) for this very payment: the proven
    // address goes with the payment. A sign-in that proves nothing is ignored: the call is
    // answered as without one, so it tells nothing about the payment.
    const signIn = ctx.get(SIGN_IN_WITH_X);
    if (signIn && payment?.rail === 'usdc' && !('malformed' in payment)) {
      const decoded = 'header' in payment ? decodePaymentHeader(payment.header) : checkPaymentPayload(payment.payload);
      const proven = decoded.ok ? await siwx.verify(signIn, resource, now(), { nonce: decoded.payment.payload.authorization.nonce }) : undefined;
      if (proven?.ok) payment = { ...payment, provenPayer: proven.address };
    }
    const viaAuth = /^Payment(\s|$)/i.test(ctx.get('authorization'));
    const viaHeader = Boolean(ctx.get('payment-signature') || ctx.get('x-payment'));
    answer(ctx, await core.call({ serviceId, request: body.request, baseUrl, payment }), deps, viaAuth, baseUrl, body.request, viaHeader);
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
