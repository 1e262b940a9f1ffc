/**
 * The pieces of the paid-call benchmarks (`bench/paid.ts`, `bench/paidFleet.ts`): HTTP over a
 * keep-alive pool, the statistics, signing a payment ahead of time, and one paid call the whole
 * native way (quote, submit, settle with the block wait).
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createFastSigner } from '../consensus/fastSign.js';
import { fromHex, toHex } from '../consensus/hash.js';
import { type HybridKeyPair } from '../consensus/keys.js';
import { encodeTx, txId, txSighash, TxType, TX_VERSION } from '../consensus/tx.js';
import { feeForRate } from '../consensus/txBuilder.js';
import { agentInvoke } from '../consensus/txTypes/agentInvoke.js';
import { parseQuote, type AgentQuote } from '../sdk/quote.js';
import { requestCommitment, SALT_BYTES } from '../x402/core/wire.js';
import { percentile } from './percentile.js';

export const SERVICE = 'native-world-clock';
export const ZONES = ['Europe/Berlin', 'Asia/Tokyo', 'America/New_York', 'UTC', 'Australia/Sydney', 'Africa/Cairo'];

/** A payment accepted but still unmined this long after its submit is reported, not awaited further. */
const SETTLE_GIVE_UP_MS = 180_000;

// ---------------------------------------------------------------- HTTP (keep-alive, no fetch overhead)

export interface Answer {
  readonly status: number;
  readonly json: Record<string, unknown>;
}

// Idle sockets close after 4 s, before the node's keep-alive timeout (5 s), but live through the
// wait for the next block: reopening thousands of connections after every block overflowed the
// node's listen backlog on the loaded machine (dropped SYNs wait for TCP's retransmits).
export const httpAgent = new http.Agent({ keepAlive: true, maxSockets: Infinity, timeout: 4_000 });

/**
 * One JSON request over the shared keep-alive pool; `timeoutMs` bounds it. A reused socket the
 * node had closed meanwhile (its keep-alive timeout ran out while this process was busy, e.g.
 * signing) fails before the request reached it: that request goes again on a fresh socket.
 */
export async function request(method: 'GET' | 'POST', url: string, body?: unknown, headers: Record<string, string> = {}, timeoutMs = 60_000): Promise<Answer> {
  try {
    return await requestOnce(method, url, body, headers, timeoutMs);
  } catch (e) {
    if (!(e as { reusedSocket?: boolean }).reusedSocket) throw e;
    return requestOnce(method, url, body, headers, timeoutMs);
  }
}

function requestOnce(method: 'GET' | 'POST', url: string, body: unknown, headers: Record<string, string>, timeoutMs: number): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(url, { method, agent: httpAgent, headers: { accept: 'application/json', ...(data ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } : {}), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: Record<string, unknown>;
        try {
          json = JSON.parse(text) as Record<string, unknown>;
        } catch {
          json = { error: { code: 'bench_not_json', message: text.slice(0, 200) } };
        }
        resolve({ status: res.statusCode ?? 0, json });
      });
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`timeout after ${timeoutMs} ms: ${method} ${url}`)));
    req.on('error', (e: NodeJS.ErrnoException) => {
      const code = e.code;
      reject(Object.assign(e, { reusedSocket: req.reusedSocket && (code === 'ECONNRESET' || code === 'EPIPE') }));
    });
    req.end(data);
  });
}

export const codeOf = (a: Answer): string => {
  const e = a.json.error as { code?: unknown } | undefined;
  return typeof e?.code === 'string' ? e.code : `http_${a.status}`;
};

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The bench agents' hybrid signer: the node's fast one (consensus/fastSign.ts), in the bench's argument order. */
export async function fastSigner(): Promise<Signer> {
  const sign = await createFastSigner();
  return (msg, kp) => sign(kp, msg);
}

// ---------------------------------------------------------------- statistics

export function summary(xs: readonly number[]): { n: number; p50: number; p99: number; max: number; mean: number } {
  const s = [...xs].sort((a, b) => a - b);
  return { n: s.length, p50: percentile(s, 50), p99: percentile(s, 99), max: s.length ? s[s.length - 1] : NaN, mean: s.reduce((a, b) => a + b, 0) / Math.max(1, s.length) };
}
export const f0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
export const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
export const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');
export const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');

/** The JSON log lines of a log text (other lines skipped). */
export function logLines(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // a line being written
    }
  }
  return out;
}

/** A payment signed ahead: the call it pays for, the salt its requestHash commits to and its bytes. */
export interface Signed {
  readonly nonce: bigint;
  readonly zone: string;
  readonly salt: string;
  readonly txId: string;
  readonly hex: string;
}

/** What the quote of each zone fixed: price, payee, seller (the same for every agent). */
export interface Terms {
  readonly chainId: number;
  readonly amount: bigint;
  readonly payTo: Uint8Array;
  readonly payToText: string;
  /** The node's ledger id, which every payment commits to (the quote's extra.sellerId). */
  readonly sellerId: string;
  readonly feeRate: bigint;
}

export type Signer = (msg: Uint8Array, kp: HybridKeyPair) => { mldsa: Uint8Array; ed25519: Uint8Array };

export function signPayment(sign: Signer, kp: HybridKeyPair, t: Terms, nonce: bigint, zone: string): Signed {
  const salt = randomBytes(SALT_BYTES).toString('hex');
  const requestHash = fromHex(requestCommitment({ sellerId: t.sellerId, serviceId: SERVICE, request: zone, salt }));
  const payload = agentInvoke.encodePayload({ serviceId: SERVICE, payTo: t.payTo, amount: t.amount, requestHash });
  const base = { version: TX_VERSION, chainId: t.chainId, type: TxType.agent_invoke, from: kp.address, nonce, payload, ...(nonce === 0n ? { publicKey: kp.publicKey } : {}) };
  const u = { ...base, fee: feeForRate(base, t.feeRate) };
  const bytes = encodeTx({ ...u, signature: sign(txSighash(u), kp) });
  return { nonce, zone, salt, txId: toHex(txId(bytes)), hex: Buffer.from(bytes).toString('hex') };
}

/** The outcome of one timed call. */
export interface CallRecord {
  submitAt: number;
  /** When the node answered the payment's POST /api/v1/tx as accepted (performance.now()). */
  acceptedAt?: number;
  /** Open loop: when the call was due to start (performance.now()). */
  scheduledAt?: number;
  resultAt?: number;
  height?: number;
  accepted: boolean;
  refunded: boolean;
  error?: string;
  pendingAnswers: number;
  quoteRetries: number;
  submitRetries: number;
}

/** One agent: its key, its payments in nonce order, the chain of its submissions. */
export interface Agent {
  readonly key: HybridKeyPair;
  readonly address: string;
  readonly payments: Signed[];
  next: number;
  submitted: Promise<unknown>;
  /** Sends its next payment once the previous one was sent, not answered (`--pipeline`): the node's queue of future nonces puts them back in order. */
  pipeline?: boolean;
  /** Why the agent stopped: a payment of its was not accepted, so its later nonces can never be mined. */
  stopped?: string;
}

/** Attempts of a quote before the call gives up (a transient refusal or timeout under load). */
const QUOTE_ATTEMPTS = 3;
/** Why quotes were tried again, and how often. */
export const quoteRetryReasons = new Map<string, number>();
/** Attempts of a payment submission whose answer did not come, and how long one waits. */
const SUBMIT_ATTEMPTS = 3;
const SUBMIT_TIMEOUT_MS = 60_000;

export async function quoteOf(endpoint: string, zone: string, now: number): Promise<AgentQuote> {
  const a = await request('POST', endpoint, { request: zone });
  if (a.status !== 402) throw new Error(`quote: ${a.status} ${codeOf(a)}`);
  return parseQuote(a.json, SERVICE, zone, endpoint, now);
}

/** Waits until every tx is mined (bounded). */
export async function waitMined(url: string, ids: readonly string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const id of ids) {
    for (;;) {
      const a = await request('GET', `${url}/api/v1/tx/${id}`);
      if (a.json.status === 'mined') break;
      if (Date.now() > deadline) throw new Error(`tx ${id} not mined within ${timeoutMs / 1000} s (${a.status} ${String(a.json.status ?? codeOf(a))})`);
      await sleep(200);
    }
  }
}

/** Quote → submit (in nonce order) → settle with long-poll → result. Never throws: the record says what happened. */
export async function paidCall(url: string, agent: Agent, p: Signed, terms: Terms, waitSeconds: number): Promise<CallRecord> {
  const endpoint = `${url}/api/x402/${SERVICE}`;
  const r: CallRecord = { submitAt: NaN, accepted: false, refunded: false, pendingAnswers: 0, quoteRetries: 0, submitRetries: 0 };
  const quoteWithRetries = async (): Promise<AgentQuote> => {
    for (let i = 1; ; i++) {
      try {
        return await quoteOf(endpoint, p.zone, Date.now());
      } catch (e) {
        if (i >= QUOTE_ATTEMPTS) throw e;
        r.quoteRetries++;
        const why = (e as Error).message.replace(/http:\/\/\S+/g, '').slice(0, 50);
        quoteRetryReasons.set(why, (quoteRetryReasons.get(why) ?? 0) + 1);
      }
    }
  };
  const quoted = quoteWithRetries().then(
    (q) => {
      if (q.amount !== terms.amount || q.payTo !== terms.payToText || q.sellerId !== terms.sellerId || q.chainId !== terms.chainId) return 'bench_quote_changed';
      return undefined;
    },
    (e: Error) => `bench_quote_failed: ${e.message.slice(0, 60)}`,
  );
  // Submissions of one agent go in nonce order: this one after the previous one was answered
  // (pipelined: after it was sent).
  let sent = (): void => undefined;
  const sending = new Promise<void>((res) => (sent = res));
  const submit = agent.submitted.then(async () => {
    const bad = agent.stopped ? 'bench_agent_stopped' : await quoted;
    if (bad) return bad;
    r.submitAt = performance.now();
    setImmediate(sent); // the POST below is written to its socket by then
    // A payment whose answer was lost (timeout) may have been accepted: the same bytes go again,
    // as the SDK does; mempool_duplicate (in the mempool) and, after a lost answer, tx_bad_nonce
    // (this very nonce was mined meanwhile) mean it was accepted. Then settle finds it or says not.
    for (let attempt = 1; ; attempt++) {
      let a: Answer;
      try {
        a = await request('POST', `${url}/api/v1/tx`, { tx: p.hex }, {}, SUBMIT_TIMEOUT_MS);
      } catch (e) {
        r.submitRetries++;
        if (attempt >= SUBMIT_ATTEMPTS) return `tx: ${(e as Error).message.slice(0, 60)}`;
        continue;
      }
      const code = codeOf(a);
      if (a.status === 200 || a.status === 201 || a.status === 202) return a.json.txId === p.txId ? undefined : 'bench_wrong_tx_id';
      if (code === 'mempool_duplicate' || (attempt > 1 && code === 'tx_bad_nonce')) return undefined;
      return `tx: ${code}`;
    }
  }).catch((e: Error) => `tx: ${e.message.slice(0, 60)}`);
  void submit.finally(sent);
  agent.submitted = agent.pipeline ? sending : submit;
  const refused = await submit;
  if (refused) {
    // This nonce is not in the mempool: the agent's later payments would wait behind the gap forever.
    agent.stopped ??= refused;
    r.error = refused;
    return r;
  }
  r.accepted = true;
  r.acceptedAt = performance.now();
  for (;;) {
    let a: Answer;
    try {
      a = await request('POST', `${endpoint}?wait=${waitSeconds}`, { request: p.zone, payment: { txId: p.txId, salt: p.salt } }, {}, (waitSeconds + 30) * 1000);
    } catch (e) {
      r.error = `settle: ${(e as Error).message.slice(0, 60)}`;
      return r;
    }
    if (a.status === 202) {
      r.pendingAnswers++;
      if (performance.now() - r.submitAt > SETTLE_GIVE_UP_MS) {
        r.error = 'bench_not_mined_in_time';
        return r;
      }
      continue; // still not mined after the long-poll: ask again at once
    }
    if (a.status === 200) {
      const receipt = a.json.receipt as { txId?: string; serviceId?: string; height?: number } | undefined;
      if (receipt?.txId !== p.txId || receipt.serviceId !== SERVICE || typeof receipt.height !== 'number' || a.json.result === undefined) {
        r.error = 'bench_bad_receipt';
        return r;
      }
      r.resultAt = performance.now();
      r.height = receipt.height;
      return r;
    }
    if (a.json.refunded === true) r.refunded = true;
    r.error = `settle: ${codeOf(a)}`;
    return r;
  }
}
