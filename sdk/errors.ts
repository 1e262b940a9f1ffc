/**
 * The errors of the agent SDK: every failure is an `AgentClientError` whose `code` is one of
 * `AgentErrorCode` or the node's own code (`payment_not_found`, `amount_mismatch`, …), with the
 * HTTP status, the service and the tx id in its payload when known.
 */
import { NodeError } from '../consensus/errors.js';
import { errorBody, TransportErrorCode, type JsonAnswer } from './http.js';

/** Error codes of the SDK itself; errors answered by the node keep the node's code. */
export const AgentErrorCode = {
  /** A bad argument of the caller (service id, tx id), refused before any request. */
  INVALID_ARGUMENT: 'invalid_argument',
  /** The node could not be reached (connection refused, DNS, reset). */
  UNREACHABLE: TransportErrorCode.UNREACHABLE,
  /** One HTTP request took longer than its time limit. */
  TIMEOUT: TransportErrorCode.TIMEOUT,
  /** A body that is not JSON, or an error status without a coded error body. */
  BAD_RESPONSE: TransportErrorCode.BAD_RESPONSE,
  /** A status the protocol does not have at this step (e.g. 200 to an unpaid quote). */
  UNEXPECTED_RESPONSE: 'unexpected_response',
  /** The 402 body is not a valid x402 v1 quote, or its native option is inconsistent. */
  BAD_QUOTE: 'bad_quote',
  /** Paying needs a key and the client was created without one. */
  NO_KEY: 'wallet_required',
  /** The 402 offers no `native-x402` option. */
  NO_NATIVE_OPTION: 'no_native_option',
  /** The quote is for another chain than the node's. */
  CHAIN_MISMATCH: 'chain_mismatch',
  /** The quoted price is above the caller's `maxPriceBase`; nothing was paid. */
  PRICE_ABOVE_LIMIT: 'price_above_limit',
  /** The wallet's confirmed balance does not cover price plus fee; nothing was paid. */
  INSUFFICIENT_FUNDS: 'insufficient_funds',
  /**
   * The service failed after the payment; the node refunded it on-chain (`refundTxId`), or the
   * refund is owed and not sent yet (`refundPending`: no `refundTxId`; the node sends it).
   */
  SERVICE_REFUNDED: 'service_refunded',
  /** The payment was sent but no final answer came within the time budget; settle again with the same tx id. */
  SETTLE_TIMEOUT: 'settle_timeout',
  /** A 200 settlement whose body is not `{paid: true, result, receipt}` for this payment. */
  BAD_RECEIPT: 'bad_receipt',
} as const;
export type AgentErrorCode = (typeof AgentErrorCode)[keyof typeof AgentErrorCode];

/** What an SDK error carries besides code and message (all optional: each step fills what it knows). */
export interface AgentErrorPayload {
  /** HTTP status of the answer that caused the error. */
  readonly status?: number;
  readonly serviceId?: string;
  /** The payment, once sent: settle again with it after `settle_timeout`. */
  readonly txId?: string;
  /** The refund transaction (`service_refunded`). */
  readonly refundTxId?: string;
  /** `service_refunded` with the refund owed but not sent yet (no `refundTxId`): the node sends it. */
  readonly refundPending?: boolean;
  /** The service's failure behind a refund. */
  readonly cause?: { readonly code: string; readonly message: string };
  /** Quoted price and caller limit, base units (`price_above_limit`). */
  readonly priceBase?: string;
  readonly limitBase?: string;
  /** Other fields of the server's error body. */
  readonly details?: Readonly<Record<string, unknown>>;
}

/** A failure of the agent client: a stable `code` (SDK or server code) and a typed payload. */
export class AgentClientError extends NodeError<string, AgentErrorPayload> {
  constructor(code: string, message: string, payload: AgentErrorPayload = {}) {
    super(code, message, payload);
    this.name = 'AgentClientError';
  }
}

/** Whether `e` is an AgentClientError, of a given code when one is given. */
export function isAgentClientError(e: unknown, code?: string): e is AgentClientError {
  return e instanceof AgentClientError && (code === undefined || e.code === code);
}

/** Turns a non-success answer into the server's coded error, or `node_bad_response`. */
export function answerError(what: string, a: JsonAnswer, extra: AgentErrorPayload = {}): AgentClientError {
  const err = errorBody(a.json);
  // `payment_refunded` names its refund: lifted beside the tx id, as for `service_refunded`.
  const refundTxId = typeof err?.details.refundTxId === 'string' ? { refundTxId: err.details.refundTxId } : {};
  if (err) return new AgentClientError(err.code, err.message, { ...extra, status: a.status, ...refundTxId, ...(Object.keys(err.details).length ? { details: err.details } : {}) });
  return new AgentClientError(AgentErrorCode.BAD_RESPONSE, `${what} answered ${a.status} without a coded error`, { ...extra, status: a.status });
}
