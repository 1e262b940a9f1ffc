/**
 * The agent-side SDK of the native rail: quote, pay, settle — the three steps of
 * `shared/spec/api.md` (per-service rules, the native flow) as one small client.
 *
 *   quote   POST {node}/api/x402/{serviceId} {"request"}            → 402, the `native-x402` option
 *   pay     GET /api/v1/status (chain id, fee rate), GET /api/v1/account/:address (pending nonce,
 *           whether the chain knows the key), sign an `agent_invoke` for exactly
 *           `maxAmountRequired` to `payTo`, POST /api/v1/tx {"tx": hex}  → txId
 *   settle  POST {node}/api/x402/{serviceId}?wait=N {"request", "payment": {"txId", "salt"}}
 *           → 200 result + receipt | 202 payment_pending (retried) | 502 refunded | coded error
 *
 * The payment's requestHash commits to the seller, the service, the request and a random salt
 * the client keeps (x402/core/wire.ts requestCommitment); only the settle reveals the salt, so nobody
 * watching the mempool can claim the payment or read its result. Settling is idempotent on the
 * server (same tx id, request and salt → the stored answer), so the
 * client retries pending payments, `settlement_in_progress` and dropped connections until its
 * time budget is spent; the payment is never sent twice. The signed payment is kept
 * (sdk/pendingPayments.ts) until a settle proves it mined: when a settle answers
 * `payment_not_found` (the node lost it in a crash) the same bytes are broadcast again, with any
 * other stored payment of the client, lowest nonce first — the same tx id, never a new payment.
 * Every failure is an `AgentClientError` whose `code` is either one of `AgentErrorCode` or the server's own code (`payment_not_found`,
 * `amount_mismatch`, `unknown_service`, …), with the HTTP status and the tx id in its payload.
 */
import { encodeAddress, tryDecodeAddress } from '../consensus/address.js';
import { formatAmount, parseBaseUnits } from '../consensus/amount.js';
import { fromHex } from '../consensus/hash.js';
import type { HybridKeyPair } from '../consensus/keys.js';
import { silentLogger, type Logger } from '../chain/logger.js';
import { createAgentInvokeTx } from '../consensus/txBuilder.js';
import { toHex } from '../consensus/hash.js';
import { AgentClientError, AgentErrorCode, answerError, isAgentClientError, type AgentErrorPayload } from './errors.js';
import { createJsonFetch, errorBody, isObject, type Json, type JsonAnswer } from './http.js';
import { badQuote, parseQuote, parseSettlement, type AgentQuote, type AgentReceipt } from './quote.js';
import { createMemoryPaymentStore, type PendingPaymentStore } from './pendingPayments.js';

// The SDK's whole API from this one module.
export { AgentClientError, AgentErrorCode, isAgentClientError, type AgentErrorPayload } from './errors.js';
export { parseQuote, parseSettlement, quoteFromRequirement, usdcBinding, type AgentQuote, type AgentReceipt } from './quote.js';
export { createFilePaymentStore, createMemoryPaymentStore, type PendingPayment, type PendingPaymentStore } from './pendingPayments.js';
export { requestCommitment, COMMITMENT_SCHEME, type NativePaymentRequirement, type NativeRequirementExtra } from '../x402/core/wire.js';

/** A completed paid call. */
export interface AgentCallResult {
  /** The service's output (its shape depends on the service). */
  readonly result: unknown;
  readonly receipt: AgentReceipt;
  /** The agent_invoke transaction that paid. */
  readonly txId: string;
  /** The salt the payment commits to: with the request and txId, what fetches this result again. */
  readonly salt: string;
  readonly quote: AgentQuote;
  /** Fee of the payment, base units (0n when settling an earlier payment). */
  readonly feeBase: bigint;
}

/** A broadcast payment. */
export interface AgentPayment {
  readonly txId: string;
  readonly feeBase: bigint;
  readonly nonce: bigint;
  /** The secret the payment's requestHash commits to (send it in the settle, keep it to settle again). */
  readonly salt: string;
}

/** Progress of a call, for interfaces that show it (the CLI prints it on stderr). */
export type AgentEvent =
  | { readonly type: 'quoted'; readonly quote: AgentQuote }
  | { readonly type: 'paid'; readonly txId: string; readonly feeBase: bigint }
  | { readonly type: 'pending'; readonly txId: string; readonly retryAfter: number }
  | { readonly type: 'retry'; readonly txId: string; readonly reason: string }
  /** The node did not know the payment: the stored signed payment was broadcast again (same tx id). */
  | { readonly type: 'rebroadcast'; readonly txId: string };

/** Options of `settle`. */
export interface SettleOptions {
  /** Seconds the node may hold one settle request while the payment is unmined (`?wait=`); default 10. */
  readonly waitSeconds?: number;
  /** Total time budget of the settle, all retries included; default 120 000 ms. */
  readonly timeoutMs?: number;
  readonly onEvent?: (e: AgentEvent) => void;
  /** The salt the payment committed to, when it is not the quote's (settling an earlier payment: see the stored payment). */
  readonly salt?: string;
}

/** Options of `call`. */
export interface CallOptions {
  /** Refuse (`price_above_limit`, before paying) when the quote is above this many base units. */
  readonly maxPriceBase?: bigint;
  /** Total time budget of the call: quote, payment, block and settle; default 120 000 ms. */
  readonly timeoutMs?: number;
  /** `?wait=` of each settle request; default 10 s. */
  readonly waitSeconds?: number;
  readonly onEvent?: (e: AgentEvent) => void;
}

/** Options of `createAgentClient`. */
export interface AgentClientOptions {
  /** Base URL of the node, e.g. `http://127.0.0.1:8402`. */
  readonly nodeUrl: string;
  /** The paying wallet's key (needed by `pay`, `sendPayment` and `call`; quoting and settling need none). */
  readonly key?: HybridKeyPair;
  /** fetch implementation (default: the global one). */
  readonly fetch?: typeof fetch;
  readonly logger?: Logger;
  /** Time limit of one quote, status, account or broadcast request; default 15 000 ms. */
  readonly requestTimeoutMs?: number;
  /** Clock (Unix ms) and sleep, injectable for tests. */
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
  /** Where signed payments are kept until mined (default: in memory, for the client's life). */
  readonly pendingPayments?: PendingPaymentStore;
}

/** The agent client (see module comment). */
export interface AgentClient {
  readonly nodeUrl: string;
  /** Asks the price of one call; `request` is the service's input string. */
  quote(serviceId: string, request?: string): Promise<AgentQuote>;
  /** Signs and broadcasts the quote's agent_invoke; resolves with its tx id. */
  pay(quote: AgentQuote): Promise<string>;
  /** Like `pay`, with the fee and nonce used. */
  sendPayment(quote: AgentQuote): Promise<AgentPayment>;
  /** Settles a sent payment: waits for its block (bounded) and returns the result and receipt. */
  settle(quote: AgentQuote, txId: string, opts?: SettleOptions): Promise<AgentCallResult>;
  /** Quote, price check, pay, settle. */
  call(serviceId: string, request?: string, opts?: CallOptions): Promise<AgentCallResult>;
  /**
   * Waits until a sent payment has `confirmations` blocks (polling `GET /api/v1/tx/:id`),
   * broadcasting the stored signed bytes again if the node lost them; resolves with the height
   * of its block. Throws `settle_timeout` when the budget runs out (the payment stands).
   */
  waitForPayment(txId: string, opts?: WaitForPaymentOptions): Promise<{ readonly height: number; readonly confirmations: number }>;
}

/** Options of `waitForPayment`. */
export interface WaitForPaymentOptions {
  /** Blocks the payment needs (the quote's `confirmations`); default 1 = mined. */
  readonly confirmations?: number;
  /** Time budget, ms; default 120 000. */
  readonly timeoutMs?: number;
  /** Poll interval, ms; default 500. */
  readonly pollMs?: number;
}

/** A signed, not yet broadcast payment of a quote (`createPaymentTx`). */
export interface SignedPayment {
  /** Hex of the signed agent_invoke: the body of `POST /api/v1/tx` is `{"tx": this}`. */
  readonly tx: string;
  /** Its id (SHA-256d of the bytes), hex. */
  readonly txId: string;
  /** Fee, base units. */
  readonly fee: bigint;
  readonly nonce: bigint;
  /** The salt the payment's requestHash commits to: reveal it only in the settle. */
  readonly salt: string;
  /** The payment's requestHash (the commitment), hex. */
  readonly requestHash: string;
}

/** What signing a payment needs besides the quote. */
export interface PaymentTxOptions {
  readonly key: HybridKeyPair;
  /** The account's next nonce (`pendingNonce` of `GET /api/v1/account/:address`). */
  readonly nonce: bigint;
  /** Carry the public key: true while the chain does not know it (`publicKeyKnown` false). */
  readonly includeKey: boolean;
  /** Base units per signed byte (`minFeeRate` of `GET /api/v1/status`); default 1. */
  readonly feeRate?: bigint;
}

/**
 * Builds and signs the `agent_invoke` that pays `quote`, without sending it: exactly the quoted
 * amount to its `payTo` (an address of the quote's own network prefix), for its service, with
 * the quote's commitment as requestHash and the fee for the exact signed size at `feeRate`.
 */
export function createPaymentTx(quote: AgentQuote, o: PaymentTxOptions): SignedPayment {
  const hrp = hrpOf(quote.payTo);
  const payTo = hrp === undefined ? undefined : tryDecodeAddress(quote.payTo, hrp);
  if (!payTo) throw badQuote(`payTo ${quote.payTo} is not a bech32m account address`, quote.serviceId);
  const built = createAgentInvokeTx({
    key: o.key,
    chainId: quote.chainId,
    serviceId: quote.serviceId,
    payTo,
    amount: quote.amount,
    nonce: o.nonce,
    includeKey: o.includeKey,
    feeRate: o.feeRate ?? 1n,
    requestHash: fromHex(quote.requestHash),
  });
  return { tx: toHex(built.bytes), txId: built.id, fee: built.tx.fee, nonce: o.nonce, salt: quote.salt, requestHash: quote.requestHash };
}

/** The human-readable prefix of a bech32m address (`tnative`, `native`), or undefined. */
function hrpOf(address: string): string | undefined {
  const at = address.lastIndexOf('1');
  return at > 0 ? address.slice(0, at).toLowerCase() : undefined;
}

/** Default `?wait=` of a settle request, seconds (a few 3 s blocks). */
export const DEFAULT_SETTLE_WAIT_SECONDS = 10;
/** Default total budget of a settle or a call, ms. */
export const DEFAULT_CALL_TIMEOUT_MS = 120_000;
/** Longest server-side wait the client asks for, seconds. */
export const MAX_SETTLE_WAIT_SECONDS = 60;
/** Settle refusals the node gives only for a payment it found mined. */
const MINED_ANSWERS = new Set(['payment_not_invoke', 'wrong_service', 'wrong_payee', 'amount_mismatch', 'request_mismatch', 'payment_already_used', 'payment_refunded']);
/** Times one settle broadcasts its payment again after `payment_not_found`. */
export const MAX_REBROADCASTS = 3;
/**
 * How long settle keeps asking after a rebroadcast is refused because the payment's nonce is used,
 * ms: the payment was most likely mined (our signed bytes hold that nonce) and the node finds it
 * once it has connected that block, which a node restarting on a busy machine can take seconds to
 * do. Only a different transaction of ours with the same nonce makes the refusal final.
 */
export const NONCE_USED_PATIENCE_MS = 30_000;

const SERVICE_ID_RE = /^[a-z0-9][a-z0-9-]{0,63}$/;
const HEX64_RE = /^[0-9a-f]{64}$/;

/** Creates an agent client for one node and one wallet key. */
export function createAgentClient(opts: AgentClientOptions): AgentClient {
  const nodeUrl = opts.nodeUrl.replace(/\/+$/, '');
  if (!/^https?:\/\/[^\s/]+/.test(nodeUrl)) throw new AgentClientError(AgentErrorCode.INVALID_ARGUMENT, `nodeUrl must be an http(s) URL, got ${opts.nodeUrl}`);
  const log = opts.logger ?? silentLogger;
  const requestTimeoutMs = opts.requestTimeoutMs ?? 15_000;
  const now = opts.now ?? Date.now;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const key = opts.key;
  // Payments from one client are serialized and remember the next nonce, so concurrent calls of
  // one agent do not reuse a nonce the node has not counted yet.
  let payQueue: Promise<unknown> = Promise.resolve();
  let nextNonce = 0n;
  const pending = opts.pendingPayments ?? createMemoryPaymentStore();

  const http = createJsonFetch({ nodeUrl, fetch: opts.fetch, error: (code, message, payload) => new AgentClientError(code, message, payload) });

  async function getJson(path: string): Promise<Json> {
    const a = await http('GET', `${nodeUrl}${path}`, undefined, requestTimeoutMs);
    if (a.status !== 200) throw answerError(`GET ${path}`, a);
    if (!isObject(a.json)) throw new AgentClientError(AgentErrorCode.BAD_RESPONSE, `GET ${path} answered a non-object`, { status: a.status });
    return a.json;
  }

  function endpointOf(serviceId: string): string {
    return `${nodeUrl}/api/x402/${encodeURIComponent(serviceId)}`;
  }

  async function quote(serviceId: string, request?: string): Promise<AgentQuote> {
    if (!SERVICE_ID_RE.test(serviceId)) throw new AgentClientError(AgentErrorCode.INVALID_ARGUMENT, `"${serviceId}" is not a service id`, { serviceId });
    const endpoint = endpointOf(serviceId);
    const a = await http('POST', endpoint, request === undefined ? {} : { request }, requestTimeoutMs);
    if (a.status !== 402) {
      if (errorBody(a.json)) throw answerError(`quote of ${serviceId}`, a, { serviceId });
      throw new AgentClientError(AgentErrorCode.UNEXPECTED_RESPONSE, `the unpaid call of ${serviceId} answered ${a.status}, not 402`, { serviceId, status: a.status });
    }
    const q = parseQuote(a.json, serviceId, request, endpoint, now());
    log.debug({ serviceId, amount: q.amount.toString(), payTo: q.payTo, network: q.network }, 'quoted');
    return q;
  }

  async function sendPaymentNow(q: AgentQuote): Promise<AgentPayment> {
    if (!key) throw new AgentClientError(AgentErrorCode.NO_KEY, 'paying needs a wallet key: create the client with `key`', { serviceId: q.serviceId });
    const status = await getJson('/api/v1/status');
    const chainId = status.chainId;
    const hrp = status.hrp;
    if (typeof hrp !== 'string') throw new AgentClientError(AgentErrorCode.BAD_RESPONSE, 'the node status lacks hrp');
    if (chainId !== q.chainId) {
      throw new AgentClientError(AgentErrorCode.CHAIN_MISMATCH, `the quote is for chain ${q.chainId}, the node runs chain ${String(chainId)}`, { serviceId: q.serviceId });
    }
    const payTo = tryDecodeAddress(q.payTo, hrp);
    if (!payTo) throw badQuote(`payTo ${q.payTo} is not an address of this chain`, q.serviceId);
    if (now() > q.validUntil) throw badQuote('it expired (maxTimeoutSeconds passed); ask for a new quote', q.serviceId);
    const address = encodeAddress(key.address, hrp);
    let acc = await getJson(`/api/v1/account/${encodeURIComponent(address)}`);
    if (Number.isInteger(acc.pendingNonce) && BigInt(acc.pendingNonce as number) < nextNonce) {
      // The node lost payments of ours that we counted (a crash before their block): send them again first.
      await rebroadcastStored();
      acc = await getJson(`/api/v1/account/${encodeURIComponent(address)}`);
    }
    if (!Number.isInteger(acc.pendingNonce) || typeof acc.balanceBase !== 'string') throw new AgentClientError(AgentErrorCode.BAD_RESPONSE, 'the account answer lacks pendingNonce or balanceBase');
    const nonce = BigInt(acc.pendingNonce as number) > nextNonce ? BigInt(acc.pendingNonce as number) : nextNonce;
    const feeRate = typeof status.minFeeRate === 'string' && /^\d+$/.test(status.minFeeRate) ? BigInt(status.minFeeRate) : 1n;
    // The key travels until the chain knows it (a pending first transaction may not be mined yet).
    const built = createPaymentTx(q, { key, nonce, includeKey: acc.publicKeyKnown !== true, feeRate });
    const balance = parseBaseUnits(acc.balanceBase, 'balanceBase');
    if (balance < q.amount + built.fee) {
      throw new AgentClientError(AgentErrorCode.INSUFFICIENT_FUNDS, `${address} holds ${formatAmount(balance)} NATIVE; the call needs ${formatAmount(q.amount)} plus a fee of ${formatAmount(built.fee)}`, { serviceId: q.serviceId });
    }
    const broadcast = typeof q.requirement.extra.broadcast === 'string' && q.requirement.extra.broadcast.startsWith('/') ? q.requirement.extra.broadcast : '/api/v1/tx';
    const hex = built.tx;
    // Kept before it leaves: if the node loses it (or we lose the answer), the same bytes go again.
    await pending.put({ txId: built.txId, tx: hex, nonce: nonce.toString(), serviceId: q.serviceId, createdAt: now(), salt: q.salt, ...(q.request !== undefined ? { request: q.request } : {}) });
    const a = await http('POST', `${nodeUrl}${broadcast}`, { tx: hex }, requestTimeoutMs);
    if (a.status !== 200 && a.status !== 201 && a.status !== 202) {
      await pending.delete(built.txId); // refused: it never entered a mempool
      throw answerError(`POST ${broadcast}`, a, { serviceId: q.serviceId });
    }
    const txId = isObject(a.json) && typeof a.json.txId === 'string' ? a.json.txId : built.txId;
    if (txId !== built.txId) throw new AgentClientError(AgentErrorCode.BAD_RESPONSE, `the node accepted tx ${txId}, we sent ${built.txId}`);
    nextNonce = nonce + 1n;
    // A stored payment of ours at this nonce (one whose answer never came and that the node lost)
    // can no longer be mined beside this one: broadcast again later, it would take this one's place.
    for (const p of await pending.list()) if (p.nonce === nonce.toString() && p.txId !== txId) await pending.delete(p.txId);
    log.info({ serviceId: q.serviceId, txId, amount: q.amount.toString(), fee: built.fee.toString(), nonce: nonce.toString() }, 'payment sent');
    return { txId, feeBase: built.fee, nonce, salt: q.salt };
  }

  function sendPayment(q: AgentQuote): Promise<AgentPayment> {
    const run = payQueue.then(() => sendPaymentNow(q));
    payQueue = run.catch(() => undefined);
    return run;
  }

  /**
   * Broadcasts every stored payment again, lowest nonce first (a lost payment may be the gap
   * before later ones). Returns the node's refusal of `target`, if it refused it; a payment whose
   * nonce is used already can never enter a mempool again and is forgotten.
   */
  async function rebroadcastStored(target?: string): Promise<AgentClientError | undefined> {
    let refusal: AgentClientError | undefined;
    for (const p of await pending.list()) {
      const a = await http('POST', `${nodeUrl}/api/v1/tx`, { tx: p.tx }, requestTimeoutMs);
      if (a.status === 200 || a.status === 201 || a.status === 202) {
        log.info({ txId: p.txId, serviceId: p.serviceId }, 'payment broadcast again');
        continue;
      }
      const code = errorBody(a.json)?.code;
      if (code === 'mempool_duplicate') continue;
      // Its nonce is used: mined (maybe this very payment, after the node answered), or replaced.
      // The target stays stored: its settle looks again before calling it lost.
      if (code === 'tx_bad_nonce' && p.txId !== target) await pending.delete(p.txId);
      if (p.txId === target) refusal = answerError('POST /api/v1/tx (broadcast again)', a, { txId: p.txId, serviceId: p.serviceId });
    }
    return refusal;
  }

  async function settle(q: AgentQuote, txId: string, o: SettleOptions = {}, feeBase = 0n): Promise<AgentCallResult> {
    if (!HEX64_RE.test(txId)) throw new AgentClientError(AgentErrorCode.INVALID_ARGUMENT, 'a transaction id is 64 lowercase hex characters', { txId });
    const waitSeconds = Math.min(MAX_SETTLE_WAIT_SECONDS, Math.max(0, Math.floor(o.waitSeconds ?? DEFAULT_SETTLE_WAIT_SECONDS)));
    const deadline = now() + (o.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS);
    const url = `${q.endpoint}?wait=${waitSeconds}`;
    const salt = o.salt ?? (await pending.get(txId))?.salt ?? q.salt;
    const body = { ...(q.request !== undefined ? { request: q.request } : {}), payment: { txId, salt } };
    const ctx = { serviceId: q.serviceId, txId, salt };
    let attempt = 0;
    let rebroadcasts = 0;
    let nonceUsed: { since: number; refusal: AgentClientError } | undefined;
    let lastWhy = 'no answer yet';
    for (;;) {
      const left = deadline - now();
      if (left <= 0) {
        throw new AgentClientError(AgentErrorCode.SETTLE_TIMEOUT, `no settlement of ${txId} within the time budget (${lastWhy}); the payment stands: settle again with this tx id`, ctx);
      }
      attempt++;
      let a: JsonAnswer;
      try {
        a = await http('POST', url, body, left);
      } catch (e) {
        // Transport trouble after paying: settling is idempotent, so try again while time is left.
        if (!isAgentClientError(e) || (e.code !== AgentErrorCode.UNREACHABLE && e.code !== AgentErrorCode.TIMEOUT && e.code !== AgentErrorCode.BAD_RESPONSE)) throw e;
        lastWhy = e.message;
        o.onEvent?.({ type: 'retry', txId, reason: e.code });
        log.warn({ txId, code: e.code, attempt }, 'settle failed in transport; retrying');
        await sleep(Math.min(Math.max(0, deadline - now()), Math.min(5_000, 250 * 2 ** Math.min(attempt, 5))));
        continue;
      }
      if (a.status === 200) {
        const { result, receipt } = parseSettlement(a.json, q, txId);
        await pending.delete(txId);
        log.info({ serviceId: q.serviceId, txId, height: receipt.height }, 'call settled');
        return { result, receipt, txId, salt, quote: q, feeBase };
      }
      if (a.status === 202) {
        const retryAfter = isObject(a.json) && typeof a.json.retryAfter === 'number' && a.json.retryAfter >= 0 ? a.json.retryAfter : 1;
        lastWhy = 'payment not mined yet';
        o.onEvent?.({ type: 'pending', txId, retryAfter });
        log.debug({ txId, retryAfter }, 'payment pending');
        await sleep(Math.min(Math.max(0, deadline - now()), Math.max(100, retryAfter * 1000)));
        continue;
      }
      // Refunded on chain, or owed and not sent yet (`refund: "pending"`: the payee cannot cover it
      // now, or in a fleet the signing node sends it): either way the service failed after the payment.
      if (isObject(a.json) && a.json.paid === true && (a.json.refunded === true || a.json.refund === 'pending')) {
        await pending.delete(txId);
        const cause = errorBody(a.json);
        const refundTxId = typeof a.json.refundTxId === 'string' ? a.json.refundTxId : undefined;
        const owed = a.json.refunded !== true;
        const reason = typeof a.json.reason === 'string' ? a.json.reason : 'the refund is being prepared';
        throw new AgentClientError(
          AgentErrorCode.SERVICE_REFUNDED,
          `${q.serviceId} failed after payment (${cause ? `${cause.code}: ${cause.message}` : 'no reason given'}); ${owed ? `the refund is owed and not sent yet (${reason})` : `refunded in ${refundTxId ?? 'an unnamed tx'}`}`,
          { ...ctx, status: a.status, ...(refundTxId ? { refundTxId } : {}), ...(owed ? { refundPending: true } : {}), ...(cause ? { cause: { code: cause.code, message: cause.message } } : {}) },
        );
      }
      const err = errorBody(a.json);
      if (err?.code === 'settlement_in_progress' || err?.code === 'node_syncing') {
        // Another request (an earlier attempt of ours whose connection dropped) is executing it,
        // or the node is catching up with the network: the answer will come, ask again.
        lastWhy = err.code === 'node_syncing' ? 'node syncing' : 'settlement in progress';
        o.onEvent?.({ type: 'retry', txId, reason: err.code });
        await sleep(Math.min(Math.max(0, deadline - now()), err.code === 'node_syncing' ? 2_000 : 500));
        continue;
      }
      if (err?.code === 'payment_not_found' && nonceUsed) {
        // A rebroadcast found the payment's nonce used: the payment was most likely mined and the
        // node finds it once it has connected that block. Ask again (no new broadcast) while the
        // patience and the time budget last; after that the refusal is the answer.
        if (now() - nonceUsed.since < NONCE_USED_PATIENCE_MS && deadline - now() > 1_000) {
          lastWhy = 'payment nonce used: looking for it again';
          o.onEvent?.({ type: 'retry', txId, reason: 'payment_nonce_used' });
          await sleep(1_000);
          continue;
        }
        await pending.delete(txId);
        throw new AgentClientError(err.code, `${err.message}; broadcasting it again was refused (${nonceUsed.refusal.code}: ${nonceUsed.refusal.message})`, { ...ctx, status: a.status, details: { rebroadcast: { code: nonceUsed.refusal.code, message: nonceUsed.refusal.message } } });
      }
      if (err?.code === 'payment_not_found' && rebroadcasts < MAX_REBROADCASTS && (await pending.get(txId))) {
        // The node lost our payment (a crash before its block): the same signed bytes go again.
        rebroadcasts++;
        let refusal: AgentClientError | undefined;
        try {
          refusal = await rebroadcastStored(txId);
        } catch (e) {
          if (!isAgentClientError(e) || (e.code !== AgentErrorCode.UNREACHABLE && e.code !== AgentErrorCode.TIMEOUT)) throw e;
          lastWhy = e.message;
          await sleep(Math.min(Math.max(0, deadline - now()), 1_000));
          continue;
        }
        if (refusal?.code === 'tx_bad_nonce') {
          // The nonce is used: the payment may have been mined between the node's answer and the
          // broadcast (a block, a restart). Settle again: a mined payment is found then (above).
          nonceUsed = { since: now(), refusal };
          continue;
        }
        if (refusal) throw new AgentClientError(err.code, `${err.message}; broadcasting it again was refused (${refusal.code}: ${refusal.message})`, { ...ctx, status: a.status, details: { rebroadcast: { code: refusal.code, message: refusal.message } } });
        lastWhy = 'payment broadcast again';
        o.onEvent?.({ type: 'rebroadcast', txId });
        log.warn({ txId, attempt: rebroadcasts }, 'the node did not know the payment: broadcast it again');
        continue;
      }
      // These answers mean the node found the payment mined: nothing left to broadcast.
      if (err && MINED_ANSWERS.has(err.code)) await pending.delete(txId);
      throw answerError(`settle of ${txId}`, a, ctx);
    }
  }

  async function call(serviceId: string, request?: string, o: CallOptions = {}): Promise<AgentCallResult> {
    const deadline = now() + (o.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS);
    const q = await quote(serviceId, request);
    o.onEvent?.({ type: 'quoted', quote: q });
    if (o.maxPriceBase !== undefined && q.amount > o.maxPriceBase) {
      throw new AgentClientError(AgentErrorCode.PRICE_ABOVE_LIMIT, `${serviceId} costs ${q.priceNative} NATIVE, above the limit of ${formatAmount(o.maxPriceBase)} NATIVE; nothing was paid`, {
        serviceId,
        status: 402,
        priceBase: q.amount.toString(),
        limitBase: o.maxPriceBase.toString(),
      });
    }
    const p = await sendPayment(q);
    o.onEvent?.({ type: 'paid', txId: p.txId, feeBase: p.feeBase });
    return settle(q, p.txId, { waitSeconds: o.waitSeconds, timeoutMs: Math.max(1, deadline - now()), onEvent: o.onEvent }, p.feeBase);
  }

  async function waitForPayment(txId: string, o: WaitForPaymentOptions = {}): Promise<{ height: number; confirmations: number }> {
    if (!HEX64_RE.test(txId)) throw new AgentClientError(AgentErrorCode.INVALID_ARGUMENT, 'a transaction id is 64 lowercase hex characters', { txId });
    const want = Math.max(1, o.confirmations ?? 1);
    const deadline = now() + (o.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS);
    const pollMs = o.pollMs ?? 500;
    let rebroadcasts = 0;
    let lastWhy = 'not mined yet';
    for (;;) {
      let a: JsonAnswer | undefined;
      try {
        a = await http('GET', `${nodeUrl}/api/v1/tx/${txId}`, undefined, Math.max(1, Math.min(requestTimeoutMs, deadline - now())));
      } catch (e) {
        if (!isAgentClientError(e) || (e.code !== AgentErrorCode.UNREACHABLE && e.code !== AgentErrorCode.TIMEOUT)) throw e;
        lastWhy = e.message;
      }
      if (a?.status === 200 && isObject(a.json)) {
        const confirmations = typeof a.json.confirmations === 'number' ? a.json.confirmations : 0;
        if (a.json.status === 'mined' && confirmations >= want) return { height: a.json.height as number, confirmations };
        lastWhy = a.json.status === 'mined' ? `${confirmations} of ${want} confirmations` : 'not mined yet';
      } else if (a && errorBody(a.json)?.code === 'tx_not_found') {
        // The node lost it (a crash before its block): the same signed bytes go again.
        if (rebroadcasts >= MAX_REBROADCASTS || !(await pending.get(txId))) throw answerError(`GET /api/v1/tx/${txId}`, a, { txId });
        rebroadcasts++;
        const refusal = await rebroadcastStored(txId);
        if (refusal && refusal.code !== 'tx_bad_nonce') throw refusal;
        lastWhy = 'broadcast again';
      } else if (a) {
        throw answerError(`GET /api/v1/tx/${txId}`, a, { txId });
      }
      if (now() + pollMs > deadline) throw new AgentClientError(AgentErrorCode.SETTLE_TIMEOUT, `payment ${txId} did not reach ${want} confirmation(s) within the time budget (${lastWhy}); the payment stands`, { txId });
      await sleep(pollMs);
    }
  }

  return {
    nodeUrl,
    quote,
    pay: async (q) => (await sendPayment(q)).txId,
    sendPayment,
    settle: (q, txId, o) => settle(q, txId, o),
    call,
    waitForPayment,
  };
}
