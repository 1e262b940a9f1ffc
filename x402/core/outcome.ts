/**
 * The one answer of a paid call, whatever the transport: a discriminated union on `kind` that
 * always carries its HTTP status, and after the quote was built, the quote (so a refusal can be
 * answered with the payment options, as x402 wants). Both rails' settlements answer a
 * `SettleOutcome`; the paid-call core (`paidCall.ts`) adds the quote and the refusals of its own
 * steps. Transports render it: the HTTP routes with `outcomeBody` (the API's JSON bodies), MCP
 * as tool results, and later dialects (x402 v2 headers, `Authorization: Payment`, the provider
 * inbox) the same way, without deciding anything about the payment.
 *
 *   kind        status              when
 *   rejected    400 / 404 / 503     before any quote: unknown service, bad input, not for sale
 *   quote       402                 no payment presented
 *   refused     400/402/404/409/503 a payment was presented and not accepted; nothing ran
 *   pending     202                 native payment not mined with enough confirmations yet
 *   paid        200                 the result and the receipt
 *   failed      502 / 504           the service or the facilitator failed after the payment was
 *                                   accepted: native refunded on-chain, USDC never settled
 */
import type { Rail } from '../ledger/ledger.js';
import type { PaidBody, PaymentError, PaymentResponse, PendingBody, QuoteBody, RefundedBody } from './wire.js';
import { narrowOfferExtension } from './offers.js';

export type { Rail };

/** 200: the service ran and the payment is settled. */
export interface PaidOutcome {
  readonly kind: 'paid';
  readonly status: 200;
  readonly rail: Rail;
  /** The payment's ledger id (USDC: the authorization's id; native: the invoke's tx id, also `receipt.txId`). */
  readonly paymentId?: string;
  readonly body: PaidBody;
  /** The settlement answer (USDC: the `X-PAYMENT-RESPONSE` header; MCP: `x402/payment-response`). */
  readonly response: PaymentResponse;
}

/** 202 (native rail): settle again with the same payment. */
export interface PendingOutcome {
  readonly kind: 'pending';
  readonly status: 202;
  readonly rail: 'native';
  readonly body: PendingBody;
}

/** A presented payment not accepted (nothing ran, nothing charged by this request). */
export interface RefusedOutcome {
  readonly kind: 'refused';
  /** 402 when paying properly would do (the answer carries the quote), else 400/404/409/503. */
  readonly status: number;
  /** The rail the payment was for; undefined when it could not be told. */
  readonly rail?: Rail;
  readonly error: PaymentError;
  /** The payer, when the payment named one (USDC). */
  readonly payer?: string;
  /** The native payment's tx id as presented. */
  readonly txId?: string;
}

/** 502/504: the service or the facilitator failed after the payment was accepted. */
export interface FailedOutcome {
  readonly kind: 'failed';
  readonly status: 502 | 504;
  readonly rail: Rail;
  /** Native: `{paid: true, refunded: true, refundTxId, error}`; USDC: `{paid: false, error}` (never settled). */
  readonly body: RefundedBody | { paid: false; error: PaymentError; /** USDC settlement pending on Base: seconds before retrying with the same payment header. */ retryAfter?: number };
  /** The native payment's tx id (lower case). */
  readonly txId?: string;
}

/** What a rail's settlement answers. */
export type SettleOutcome = PaidOutcome | PendingOutcome | RefusedOutcome | FailedOutcome;

/** Before any quote: the call cannot be sold as asked. */
export interface RejectedOutcome {
  readonly kind: 'rejected';
  readonly status: number;
  readonly error: PaymentError;
}

/** No payment presented: the quote. */
export interface QuoteOutcome {
  readonly kind: 'quote';
  readonly status: 402;
  readonly quote: QuoteBody;
}

/** The answer of a paid call: every outcome after the quote carries it. */
export type PaidCallOutcome = RejectedOutcome | QuoteOutcome | (SettleOutcome & { readonly quote: QuoteBody });

/** A refusal with its status. */
export function refusal(status: number, error: PaymentError, extra: { rail?: Rail; payer?: string; txId?: string } = {}): RefusedOutcome {
  return { kind: 'refused', status, error, ...extra };
}

/**
 * The JSON body of an outcome on the HTTP API: the quote (402, with the refusal's `error` and
 * `payer`; `accepts` narrowed when the transport asked for one option), the coded error, or the
 * rail's settlement body. USDC refusals say `paid: false` (no authorization was settled).
 */
export function outcomeBody(o: PaidCallOutcome, accepts?: QuoteBody['accepts']): unknown {
  switch (o.kind) {
    case 'rejected':
      return { error: o.error };
    case 'quote':
      return narrowed(o.quote, accepts);
    case 'refused':
      if (o.status === 402) return { ...narrowed(o.quote, accepts), error: o.error, ...(o.payer ? { payer: o.payer } : {}) };
      return o.rail === 'usdc' ? { paid: false, error: o.error } : { error: o.error };
    default:
      return o.body;
  }
}

/** The quote with only the options of `accepts` (and their signed offers, re-indexed); the whole quote without. */
function narrowed(quote: QuoteBody, accepts: QuoteBody['accepts'] | undefined): QuoteBody {
  if (!accepts || accepts === quote.accepts) return quote;
  const extensions = narrowOfferExtension(quote.extensions, quote.accepts, accepts);
  return { ...quote, accepts, ...(extensions ? { extensions } : {}) };
}
