/**
 * The agent-side SDK of the native rail: quote, pay, settle — the three steps of
 * `shared/spec/api.md` (per-service rules, the native flow) as one small client.
 *
 *   quote   POST {node}/api/x402/{serviceId} {"request"}            → 402, the `native-x402` option
 *   pay     GET /api/v1/status (chain id, fee rate), GET /api/v1/account/:address (pending nonce,
 *           whether the chain knows the key), sign an `agent_invoke` for exactly
 *           `maxAmountRequired` to `payTo`, POST /api/v1/tx {"tx": hex}  → txId
 *   settle  POST {node}/api/x402/{serviceId}?wait=N {"request", "payment": {"txId"}}
 *           → 200 result + receipt | 202 payment_pending (retried) | 502 refunded | coded error
 *
 * Settling is idempotent on the server (same tx id and request → the stored answer), so the
 * client retries pending payments, `settlement_in_progress` and dropped connections until its
 * time budget is spent; the payment is never sent twice. Every failure is an `AgentClientError`
 * whose `code` is either one of `AgentErrorCode` or the server's own code (`payment_not_found`,
 * `amount_mismatch`, `unknown_service`, …), with the HTTP status and the tx id in its payload.
 */
import { NodeError } from '../consensus/errors.js';
import { encodeAddress, tryDecodeAddress } from '../consensus/address.js';
import { formatAmount, parseAmount, parseBaseUnits } from '../consensus/amount.js';
import { fromHex } from '../consensus/hash.js';
import type { HybridKeyPair } from '../consensus/keys.js';
import { silentLogger, type Logger } from '../chain/types.js';
import { createAgentInvokeTx } from '../consensus/txBuilder.js';
import { requestHashOf, type NativePaymentRequirement } from '../x402/wire.js';

/** Error codes of the SDK itself; errors answered by the node keep the node's code. */
export const AgentErrorCode = {
  /** A bad argument of the caller (service id, tx id), refused before any request. */
  INVALID_ARGUMENT: 'invalid_argument',
  /** The node could not be reached (connection refused, DNS, reset). */
  UNREACHABLE: 'node_unreachable',
  /** One HTTP request took longer than its time limit. */
  TIMEOUT: 'node_timeout',
  /** A body that is not JSON, or an error status without a coded error body. */
  BAD_RESPONSE: 'node_bad_response',
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
  /** The service failed after the payment; the node refunded it on-chain (`refundTxId`). */
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

export { requestHashOf, type NativePaymentRequirement, type NativeRequirementExtra } from '../x402/wire.js';

/** A parsed quote: the native requirement plus what paying it needs, checked and typed. */
export interface AgentQuote {
  readonly serviceId: string;
  /** The request the quote (and the payment's requestHash) is bound to; undefined when none. */
  readonly request: string | undefined;
  /** Exact price, base units. */
  readonly amount: bigint;
  /** Exact price, NATIVE decimal string. */
  readonly priceNative: string;
  /** Price, NATIVE number (display only). */
  readonly priceAman: number;
  readonly payTo: string;
  readonly network: string;
  readonly chainId: number;
  /** Hex sha256 of the request when the payment must carry it. */
  readonly requestHash: string | undefined;
  /** Until when (Unix ms, local clock) the quoted price is guaranteed. */
  readonly validUntil: number;
  /** Where the quote came from and where the settle goes. */
  readonly endpoint: string;
  /** The node's native option as received. */
  readonly requirement: NativePaymentRequirement;
  /** The USDC option when the node offers one (not used by this client). */
  readonly usdc?: { readonly maxAmountRequired: string; readonly payTo: string; readonly network: string; readonly asset?: string };
}

/** The receipt of a settled call (spec fields, plus block data when the node adds it). */
export interface AgentReceipt {
  readonly serviceId: string;
  /** Address of the payer. */
  readonly caller: string;
  /** NATIVE amount (number, as in the spec). */
  readonly amount: number;
  readonly txId: string;
  /** Exact amount, base units. */
  readonly amountBase?: string;
  readonly blockHash?: string;
  readonly height?: number;
  readonly network?: string;
}

/** A completed paid call. */
export interface AgentCallResult {
  /** The service's output (its shape depends on the service). */
  readonly result: unknown;
  readonly receipt: AgentReceipt;
  /** The agent_invoke transaction that paid. */
  readonly txId: string;
  readonly quote: AgentQuote;
  /** Fee of the payment, base units (0n when settling an earlier payment). */
  readonly feeBase: bigint;
}

/** A broadcast payment. */
export interface AgentPayment {
  readonly txId: string;
  readonly feeBase: bigint;
  readonly nonce: bigint;
}

/** Progress of a call, for interfaces that show it (the CLI prints it on stderr). */
export type AgentEvent =
  | { readonly type: 'quoted'; readonly quote: AgentQuote }
  | { readonly type: 'paid'; readonly txId: string; readonly feeBase: bigint }
  | { readonly type: 'pending'; readonly txId: string; readonly retryAfter: number }
  | { readonly type: 'retry'; readonly txId: string; readonly reason: string };

/** Options of `settle`. */
export interface SettleOptions {
  /** Seconds the node may hold one settle request while the payment is unmined (`?wait=`); default 10. */
  readonly waitSeconds?: number;
  /** Total time budget of the settle, all retries included; default 120 000 ms. */
  readonly timeoutMs?: number;
  readonly onEvent?: (e: AgentEvent) => void;
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
}

/** Default `?wait=` of a settle request, seconds (a few 3 s blocks). */
export const DEFAULT_SETTLE_WAIT_SECONDS = 10;
/** Default total budget of a settle or a call, ms. */
export const DEFAULT_CALL_TIMEOUT_MS = 120_000;
/** Longest server-side wait the client asks for, seconds. */
export const MAX_SETTLE_WAIT_SECONDS = 60;

const SERVICE_ID_RE = /^[a-z0-9][a-z0-9-]{0,63}$/;
const HEX64_RE = /^[0-9a-f]{64}$/;

interface HttpAnswer {
  readonly status: number;
  readonly json: unknown;
}

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The coded error body `{"error": {code, message, …}}` of an answer, if it has one. */
function errorBody(json: unknown): { code: string; message: string; details: Json } | undefined {
  if (!isObject(json) || !isObject(json.error) || typeof json.error.code !== 'string') return undefined;
  const { code, message, ...details } = json.error;
  return { code: code as string, message: typeof message === 'string' ? message : (code as string), details };
}

/** Turns a non-success answer into the server's coded error, or `node_bad_response`. */
function answerError(what: string, a: HttpAnswer, extra: AgentErrorPayload = {}): AgentClientError {
  const err = errorBody(a.json);
  if (err) return new AgentClientError(err.code, err.message, { ...extra, status: a.status, ...(Object.keys(err.details).length ? { details: err.details } : {}) });
  return new AgentClientError(AgentErrorCode.BAD_RESPONSE, `${what} answered ${a.status} without a coded error`, { ...extra, status: a.status });
}

function badQuote(why: string, serviceId: string): AgentClientError {
  return new AgentClientError(AgentErrorCode.BAD_QUOTE, `the 402 quote of ${serviceId} is not usable: ${why}`, { serviceId, status: 402 });
}

/**
 * Parses a 402 body into a quote: finds the `native-x402` option, checks its fields and that it
 * is for `serviceId` and bound to `request` (never pays a quote for something else).
 */
export function parseQuote(body: unknown, serviceId: string, request: string | undefined, endpoint: string, now: number): AgentQuote {
  if (!isObject(body) || !Array.isArray(body.accepts)) throw badQuote('no accepts[] array', serviceId);
  if (body.x402Version !== undefined && body.x402Version !== 1) throw badQuote(`x402Version ${String(body.x402Version)} is not 1`, serviceId);
  const options = body.accepts.filter(isObject);
  const native = options.find((o) => o.scheme === 'native-x402');
  if (!native) {
    throw new AgentClientError(AgentErrorCode.NO_NATIVE_OPTION, `the quote of ${serviceId} offers no native-x402 option (schemes: ${options.map((o) => String(o.scheme)).join(', ') || 'none'})`, { serviceId, status: 402 });
  }
  const extra = native.extra;
  if (!isObject(extra)) throw badQuote('the native option has no extra object', serviceId);
  if (native.asset !== 'NATIVE') throw badQuote(`asset ${String(native.asset)} is not NATIVE`, serviceId);
  if (extra.txType !== 'agent_invoke') throw badQuote(`txType ${String(extra.txType)} is not agent_invoke`, serviceId);
  if (extra.serviceId !== serviceId) throw badQuote(`it is for service ${String(extra.serviceId)}`, serviceId);
  if (typeof native.maxAmountRequired !== 'string' || !/^\d{1,20}$/.test(native.maxAmountRequired)) throw badQuote('maxAmountRequired is not a base-unit integer string', serviceId);
  const amount = parseBaseUnits(native.maxAmountRequired, 'maxAmountRequired');
  if (amount <= 0n) throw badQuote('the price is zero', serviceId);
  if (typeof native.payTo !== 'string' || native.payTo.length === 0) throw badQuote('payTo is missing', serviceId);
  if (typeof native.network !== 'string' || native.network.length === 0) throw badQuote('network is missing', serviceId);
  if (!Number.isInteger(extra.chainId) || (extra.chainId as number) < 0) throw badQuote('extra.chainId is not an integer', serviceId);
  const priceNative = typeof extra.priceNative === 'string' ? extra.priceNative : undefined;
  if (priceNative !== undefined && parseAmount(priceNative, 'priceNative') !== amount) throw badQuote(`priceNative ${priceNative} disagrees with maxAmountRequired ${native.maxAmountRequired}`, serviceId);
  // Bind the payment to the request we are about to send, whatever the node put in the quote.
  const ours = request !== undefined && request !== '' ? requestHashOf(request) : undefined;
  const theirs = typeof extra.requestHash === 'string' ? extra.requestHash.toLowerCase() : undefined;
  if (theirs !== undefined && theirs !== (request !== undefined ? requestHashOf(request) : undefined)) throw badQuote('extra.requestHash is not sha256 of our request', serviceId);
  const maxTimeoutSeconds = Number.isInteger(native.maxTimeoutSeconds) && (native.maxTimeoutSeconds as number) > 0 ? (native.maxTimeoutSeconds as number) : 60;
  const usdcRaw = options.find((o) => o.scheme === 'exact' && o.network === 'base');
  const usdc =
    usdcRaw && typeof usdcRaw.maxAmountRequired === 'string' && typeof usdcRaw.payTo === 'string'
      ? { maxAmountRequired: usdcRaw.maxAmountRequired, payTo: usdcRaw.payTo, network: 'base', ...(typeof usdcRaw.asset === 'string' ? { asset: usdcRaw.asset } : {}) }
      : undefined;
  const requirement = native as unknown as NativePaymentRequirement;
  return {
    serviceId,
    request,
    amount,
    priceNative: priceNative ?? formatAmount(amount),
    priceAman: typeof extra.priceAman === 'number' ? extra.priceAman : Number(formatAmount(amount)),
    payTo: native.payTo,
    network: native.network,
    chainId: extra.chainId as number,
    requestHash: theirs ?? ours,
    validUntil: now + maxTimeoutSeconds * 1000,
    endpoint,
    requirement,
    ...(usdc ? { usdc } : {}),
  };
}

/** Parses a 200 settlement body into result and receipt, checked against the payment. */
function parseSettlement(json: unknown, quote: AgentQuote, txId: string): { result: unknown; receipt: AgentReceipt } {
  const bad = (why: string) => new AgentClientError(AgentErrorCode.BAD_RECEIPT, `the settlement of ${txId} is not usable: ${why}`, { status: 200, txId, serviceId: quote.serviceId });
  if (!isObject(json) || json.paid !== true) throw bad('paid is not true');
  const r = json.receipt;
  if (!isObject(r)) throw bad('no receipt');
  if (r.txId !== txId) throw bad(`the receipt is for tx ${String(r.txId)}`);
  if (r.serviceId !== quote.serviceId) throw bad(`the receipt is for service ${String(r.serviceId)}`);
  if (typeof r.caller !== 'string') throw bad('receipt.caller is missing');
  if (typeof r.amount !== 'number') throw bad('receipt.amount is not a number');
  const receipt: AgentReceipt = {
    serviceId: r.serviceId,
    caller: r.caller,
    amount: r.amount,
    txId,
    ...(typeof r.amountBase === 'string' ? { amountBase: r.amountBase } : {}),
    ...(typeof r.blockHash === 'string' ? { blockHash: r.blockHash } : {}),
    ...(typeof r.height === 'number' ? { height: r.height } : {}),
    ...(typeof r.network === 'string' ? { network: r.network } : {}),
  };
  return { result: json.result, receipt };
}

/** Creates an agent client for one node and one wallet key. */
export function createAgentClient(opts: AgentClientOptions): AgentClient {
  const nodeUrl = opts.nodeUrl.replace(/\/+$/, '');
  if (!/^https?:\/\/[^\s/]+/.test(nodeUrl)) throw new AgentClientError(AgentErrorCode.INVALID_ARGUMENT, `nodeUrl must be an http(s) URL, got ${opts.nodeUrl}`);
  const doFetch = opts.fetch ?? fetch;
  const log = opts.logger ?? silentLogger;
  const requestTimeoutMs = opts.requestTimeoutMs ?? 15_000;
  const now = opts.now ?? Date.now;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const key = opts.key;
  // Payments from one client are serialized and remember the next nonce, so concurrent calls of
  // one agent do not reuse a nonce the node has not counted yet.
  let payQueue: Promise<unknown> = Promise.resolve();
  let nextNonce = 0n;

  async function http(method: 'GET' | 'POST', url: string, body: unknown, timeoutMs: number): Promise<HttpAnswer> {
    let res: Response;
    try {
      res = await doFetch(url, {
        method,
        headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(Math.max(1, timeoutMs)),
      });
    } catch (e) {
      const err = e as Error & { cause?: { code?: string; message?: string } };
      if (err.name === 'TimeoutError' || err.name === 'AbortError') throw new AgentClientError(AgentErrorCode.TIMEOUT, `${method} ${url} took longer than ${timeoutMs} ms`);
      const why = err.cause?.code ?? err.cause?.message ?? err.message;
      throw new AgentClientError(AgentErrorCode.UNREACHABLE, `cannot reach the node at ${nodeUrl} (${why})`);
    }
    let text: string;
    try {
      text = await res.text();
    } catch (e) {
      const err = e as Error;
      if (err.name === 'TimeoutError' || err.name === 'AbortError') throw new AgentClientError(AgentErrorCode.TIMEOUT, `${method} ${url} took longer than ${timeoutMs} ms`);
      throw new AgentClientError(AgentErrorCode.UNREACHABLE, `the connection to ${nodeUrl} broke (${err.message})`);
    }
    try {
      return { status: res.status, json: text ? JSON.parse(text) : undefined };
    } catch {
      throw new AgentClientError(AgentErrorCode.BAD_RESPONSE, `${method} ${url} answered ${res.status} with a non-JSON body`, { status: res.status });
    }
  }

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
    const acc = await getJson(`/api/v1/account/${encodeURIComponent(address)}`);
    if (!Number.isInteger(acc.pendingNonce) || typeof acc.balanceBase !== 'string') throw new AgentClientError(AgentErrorCode.BAD_RESPONSE, 'the account answer lacks pendingNonce or balanceBase');
    const nonce = BigInt(acc.pendingNonce as number) > nextNonce ? BigInt(acc.pendingNonce as number) : nextNonce;
    const feeRate = typeof status.minFeeRate === 'string' && /^\d+$/.test(status.minFeeRate) ? BigInt(status.minFeeRate) : 1n;
    const built = createAgentInvokeTx({
      key,
      chainId: q.chainId,
      serviceId: q.serviceId,
      payTo,
      amount: q.amount,
      nonce,
      // The key travels until the chain knows it (a pending first transaction may not be mined yet).
      includeKey: acc.publicKeyKnown !== true,
      feeRate,
      ...(q.requestHash ? { requestHash: fromHex(q.requestHash) } : {}),
    });
    const balance = parseBaseUnits(acc.balanceBase, 'balanceBase');
    if (balance < q.amount + built.tx.fee) {
      throw new AgentClientError(AgentErrorCode.INSUFFICIENT_FUNDS, `${address} holds ${formatAmount(balance)} NATIVE; the call needs ${formatAmount(q.amount)} plus a fee of ${formatAmount(built.tx.fee)}`, { serviceId: q.serviceId });
    }
    const broadcast = typeof q.requirement.extra.broadcast === 'string' && q.requirement.extra.broadcast.startsWith('/') ? q.requirement.extra.broadcast : '/api/v1/tx';
    const a = await http('POST', `${nodeUrl}${broadcast}`, { tx: Buffer.from(built.bytes).toString('hex') }, requestTimeoutMs);
    if (a.status !== 200 && a.status !== 201 && a.status !== 202) throw answerError(`POST ${broadcast}`, a, { serviceId: q.serviceId });
    const txId = isObject(a.json) && typeof a.json.txId === 'string' ? a.json.txId : built.id;
    if (txId !== built.id) throw new AgentClientError(AgentErrorCode.BAD_RESPONSE, `the node accepted tx ${txId}, we sent ${built.id}`);
    nextNonce = nonce + 1n;
    log.info({ serviceId: q.serviceId, txId, amount: q.amount.toString(), fee: built.tx.fee.toString(), nonce: nonce.toString() }, 'payment sent');
    return { txId, feeBase: built.tx.fee, nonce };
  }

  function sendPayment(q: AgentQuote): Promise<AgentPayment> {
    const run = payQueue.then(() => sendPaymentNow(q));
    payQueue = run.catch(() => undefined);
    return run;
  }

  async function settle(q: AgentQuote, txId: string, o: SettleOptions = {}, feeBase = 0n): Promise<AgentCallResult> {
    if (!HEX64_RE.test(txId)) throw new AgentClientError(AgentErrorCode.INVALID_ARGUMENT, 'a transaction id is 64 lowercase hex characters', { txId });
    const waitSeconds = Math.min(MAX_SETTLE_WAIT_SECONDS, Math.max(0, Math.floor(o.waitSeconds ?? DEFAULT_SETTLE_WAIT_SECONDS)));
    const deadline = now() + (o.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS);
    const url = `${q.endpoint}?wait=${waitSeconds}`;
    const body = { ...(q.request !== undefined ? { request: q.request } : {}), payment: { txId } };
    const ctx = { serviceId: q.serviceId, txId };
    let attempt = 0;
    let lastWhy = 'no answer yet';
    for (;;) {
      const left = deadline - now();
      if (left <= 0) {
        throw new AgentClientError(AgentErrorCode.SETTLE_TIMEOUT, `no settlement of ${txId} within the time budget (${lastWhy}); the payment stands: settle again with this tx id`, ctx);
      }
      attempt++;
      let a: HttpAnswer;
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
        log.info({ serviceId: q.serviceId, txId, height: receipt.height }, 'call settled');
        return { result, receipt, txId, quote: q, feeBase };
      }
      if (a.status === 202) {
        const retryAfter = isObject(a.json) && typeof a.json.retryAfter === 'number' && a.json.retryAfter >= 0 ? a.json.retryAfter : 1;
        lastWhy = 'payment not mined yet';
        o.onEvent?.({ type: 'pending', txId, retryAfter });
        log.debug({ txId, retryAfter }, 'payment pending');
        await sleep(Math.min(Math.max(0, deadline - now()), Math.max(100, retryAfter * 1000)));
        continue;
      }
      if (isObject(a.json) && a.json.refunded === true) {
        const cause = errorBody(a.json);
        const refundTxId = typeof a.json.refundTxId === 'string' ? a.json.refundTxId : undefined;
        throw new AgentClientError(
          AgentErrorCode.SERVICE_REFUNDED,
          `${q.serviceId} failed after payment (${cause ? `${cause.code}: ${cause.message}` : 'no reason given'}); refunded in ${refundTxId ?? 'an unnamed tx'}`,
          { ...ctx, status: a.status, ...(refundTxId ? { refundTxId } : {}), ...(cause ? { cause: { code: cause.code, message: cause.message } } : {}) },
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

  return {
    nodeUrl,
    quote,
    pay: async (q) => (await sendPayment(q)).txId,
    sendPayment,
    settle: (q, txId, o) => settle(q, txId, o),
    call,
  };
}
