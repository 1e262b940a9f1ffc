/**
 * The mempool's parts outside its state: options and error codes, what it holds per sender, and
 * the admission policy's pure checks (does a sender's run, then a new transaction, apply on the
 * tip state; the package score eviction ranks by). chain/mempool.ts holds the pools and the
 * admission queue.
 */
import { StateOverlay, type StateChanges, type StateView } from '../consensus/state.js';
import { applyTx } from '../consensus/apply.js';
import { decodeTx, txId as computeTxId, txSighash, type Tx } from '../consensus/tx.js';
import { validateTx } from '../consensus/validate.js';
import { isNodeError, NodeError, TxErrorCode } from '../consensus/errors.js';
import { fromHex, toHex } from '../consensus/hash.js';
import type { HybridPublicKey } from '../consensus/keys.js';
import type { ChainParams } from '../consensus/params.js';
import type { HeapItem } from './indexedHeap.js';
import type { Logger, MempoolEntry, SignatureVerifier } from './types.js';

/** Senders whose chain keys the mempool remembers for its early signature checks. */
export const KNOWN_KEYS_MAX = 10_000;

/** One signature check as the verifier takes it. */
export type SignatureJob = Parameters<SignatureVerifier['verifyBatch']>[0][number];

/** Error codes of mempool policy (consensus failures keep their tx_* codes). */
export const MempoolErrorCode = {
  DUPLICATE: 'mempool_duplicate',
  /** The ready pool is at its byte cap and the transaction does not beat its lowest package; payload `minFeeRate` (to exceed), `minFee` (for this size). */
  FULL: 'mempool_full',
  REPLACEMENT_UNDERPRICED: 'mempool_replacement_underpriced',
  NONCE_TOO_FAR: 'mempool_nonce_too_far',
  /** A future-nonce transaction its sender cannot pay from the confirmed balance (after its pending ones): it can never be mined as things stand. */
  UNPAYABLE: 'mempool_unpayable',
  /** A relayed transaction dropped unchecked: its peer was banned while it waited (gossip). */
  ABANDONED: 'mempool_abandoned',
  /** The queue of future-nonce transactions is full of higher fee rates; payload `minFeeRate`. */
  QUEUE_FULL: 'mempool_queue_full',
  /** Blocks kept connecting while a transaction was checked (it may be sent again). */
  TIP_MOVING: 'mempool_tip_moving',
} as const;

/** Stand-in public key for the funds check of a queued transaction whose key is not known yet (the key rule is checked apart). */
export const NO_KEY: HybridPublicKey = { mldsa: new Uint8Array(0), ed25519: new Uint8Array(0) };

/** Times an admission starts again because a block connected while it was being checked. */
export const MAX_TIP_RETRIES = 5;

/** Options of the mempool. */
export interface MempoolOptions {
  /** Byte cap over the signed sizes of the ready pool's entries. */
  maxBytes?: number;
  /** Queued (future) nonces accepted beyond the sender's next ready one. */
  maxFuturePerSender?: number;
  /** Queued transactions in all. */
  maxQueued?: number;
  /** Byte cap of the queue (its own budget, beside `maxBytes`). */
  maxQueuedBytes?: number;
  /** Queued transactions older than this are dropped, seconds. */
  queueExpirySeconds?: number;
  /** Entries older than this are dropped. */
  expirySeconds?: number;
  /** Minimum fee-rate increase, in percent, to replace a pending (sender, nonce). */
  replaceBumpPct?: number;
  /** Clock in Unix ms (injected in tests). */
  now?: () => number;
  logger?: Logger;
}

/** Defaults of MempoolOptions. */
export const defaultMempoolOptions = {
  maxBytes: 64 * 1024 * 1024,
  maxFuturePerSender: 16,
  maxQueued: 1024,
  maxQueuedBytes: 8 * 1024 * 1024,
  queueExpirySeconds: 20 * 60,
  expirySeconds: 3 * 3600,
  replaceBumpPct: 10,
} as const;

/** What `add` answers: `queued` when the transaction waits beyond a nonce gap (not relayed, not mineable yet). */
export interface AddResult {
  readonly id: string;
  readonly status: 'accepted';
  readonly queued?: true;
}

export interface Entry extends MempoolEntry {
  readonly sender: string;
  /** State keys the transaction touches (decoded once). */
  readonly keys: readonly string[];
}

/**
 * One sender's pending transactions. Invariant: `ready` holds exactly the nonces
 * `confirmed … confirmed + ready.size − 1`; `queued` holds nonces beyond a gap after them.
 */
export interface SenderTxs extends HeapItem {
  readonly sender: string;
  /** The sender's nonce on the tip, as last seen. */
  confirmed: bigint;
  readonly ready: Map<bigint, Entry>;
  readonly queued: Map<bigint, Entry>;
  /** Lowest descendant fee rate over the ready run's suffixes: what eviction ranks (Infinity when none). */
  score: number;
  /** First nonce of that suffix: eviction removes it and the later ready nonces. */
  evictFrom: bigint;
  /** The state after (a prefix of) the ready run at one tip, kept for the next admission (see `runState`). */
  runCache?: RunCache;
}

/** What a sender's run changed in the state of `tip`, applying `entries` from nonce `from`. */
export interface RunCache {
  readonly tip: string;
  readonly from: bigint;
  readonly entries: readonly Entry[];
  readonly changes: StateChanges;
}

/** A transaction as admission checks it: decoded, within the stateless rules, with its id and (on demand, once) its sighash. */
export interface DecodedTx {
  readonly tx: Tx;
  readonly id: string;
  readonly sighash: () => Uint8Array;
}

/** A transaction waiting in the admission queue, with its early signature check (see Mempool.add). */
export interface Arrival {
  readonly bytes: Uint8Array;
  readonly addedAt?: number;
  readonly abandon?: () => boolean;
  readonly pre?: DecodedTx;
  readonly signed: Promise<boolean | undefined>;
  readonly resolve: (r: AddResult) => void;
  readonly reject: (e: unknown) => void;
}

/** A state read at `tip` shared by the admissions waiting together; it holds `keys` only. */
export interface SharedView {
  readonly tip: string;
  readonly keys: ReadonlySet<string>;
  readonly view: StateView;
}

/** Decodes `bytes` and checks the stateless rules (throws CodecError / ValidationError with their codes). */
export function decodeForAdmission(bytes: Uint8Array, params: ChainParams): DecodedTx {
  const tx = decodeTx(bytes);
  validateTx(tx, bytes.length, params);
  let sighash: Uint8Array | undefined;
  return { tx, id: toHex(computeTxId(bytes)), sighash: () => (sighash ??= txSighash(tx)) };
}

/** The smallest integer fee whose rate over `size` bytes exceeds `rate`. */
export function feeAbove(rate: number, size: number): bigint {
  return BigInt(Math.floor(rate * size)) + 1n;
}

/**
 * The sender's package score after its ready run changed: walking the run from its last nonce
 * back, each suffix's descendant rate is max(own rate, fees / bytes of it and its later nonces);
 * the lowest is the score, and eviction removes from that suffix's first nonce.
 */
export function packageScore(s: SenderTxs): { score: number; evictFrom: bigint } {
  let fee = 0;
  let bytes = 0;
  let best = Infinity;
  let from = s.confirmed;
  for (let n = s.confirmed + BigInt(s.ready.size) - 1n; n >= s.confirmed; n--) {
    const e = s.ready.get(n)!;
    fee += Number(e.tx.fee);
    bytes += e.size;
    const score = Math.max(e.feeRate, fee / bytes);
    if (score < best) {
      best = score;
      from = n;
    }
  }
  return { score: best, evictFrom: from };
}

/**
 * A queued transaction must be affordable as if the nonce gap before it spent nothing: the
 * sender's ready run, then its earlier queued transactions (nonces forced; one that fails is
 * skipped, it will be dropped when the gap fills), then this one, applied on the tip state.
 * Throws `mempool_unpayable` when the sender's balance does not cover it.
 */
export function checkAffordable(view: StateView, s: SenderTxs | undefined, entry: Entry, height: number, params: ChainParams, tip: string): void {
  // A run that no longer applies (the tip moved) is trimmed by afterTipChange: judge on what did apply.
  const { state } = readyRunState(view, s, height, params, tip);
  const earlier = [...(s?.queued.values() ?? [])].filter((e) => e.tx.nonce < entry.tx.nonce).sort((a, b) => (a.tx.nonce < b.tx.nonce ? -1 : 1));
  for (const e of [...earlier, entry]) {
    const trial = new StateOverlay(state);
    const acc = trial.getAccount(e.tx.from);
    // Nonce forced past the gap; the key rule is checked apart (after this), so a stand-in key lets the funds decide.
    trial.setAccount(e.tx.from, { balance: acc.balance, nonce: e.tx.nonce, publicKey: acc.publicKey ?? e.tx.publicKey ?? NO_KEY });
    try {
      applyEntry(trial, e, height, params);
    } catch (err) {
      if (e !== entry) continue;
      if (isNodeError(err, TxErrorCode.INSUFFICIENT_FUNDS)) {
        const balance = new StateOverlay(view).getAccount(entry.tx.from).balance;
        throw new NodeError(MempoolErrorCode.UNPAYABLE, `the sender cannot pay this future-nonce transaction from its confirmed balance ${balance} after its pending ones (${err.message})`, { balance: balance.toString() });
      }
      throw err;
    }
    for (const [k, v] of trial.changes()) state.set(k, v);
  }
}

/** Throws the trial's `tx_insufficient_funds` when the sender's ready run then `entry` cannot pay (keys aside: a stand-in lets the funds decide). */
export function checkReadyFunds(view: StateView, s: SenderTxs | undefined, entry: Entry, height: number, params: ChainParams, tip: string): void {
  const { state, whole } = readyRunState(view, s, height, params, tip);
  if (!whole) return; // the run no longer applies (the tip moved): the admission's own trial judges
  const acc = state.getAccount(entry.tx.from);
  state.setAccount(entry.tx.from, { ...acc, publicKey: acc.publicKey ?? entry.tx.publicKey ?? NO_KEY });
  try {
    applyEntry(state, entry, height, params);
  } catch (err) {
    if (isNodeError(err, TxErrorCode.INSUFFICIENT_FUNDS)) throw err;
  }
}

/** The tip state after the sender's ready run, and whether all of it applied. */
export function readyRunState(view: StateView, s: SenderTxs | undefined, height: number, params: ChainParams, tip: string): { state: StateOverlay; whole: boolean } {
  if (!s) return { state: new StateOverlay(view), whole: true };
  try {
    return { state: runState(view, s, s.ready, s.confirmed, height, params, tip), whole: true };
  } catch {
    // The run no longer applies whole (the tip moved): the state after what did apply.
    const state = new StateOverlay(view);
    try {
      for (let n = s.confirmed; s.ready.has(n); n++) applyEntry(state, s.ready.get(n)!, height, params);
    } catch {
      // stops at the first that fails
    }
    return { state, whole: false };
  }
}

/** Applies one pending transaction to `state` as the next block would. */
export function applyEntry(state: StateOverlay, e: Entry, height: number, params: ChainParams): void {
  applyTx(state, e.tx, fromHex(e.id), height, params);
}

/**
 * Applies a sender's ready run (`run`: nonces from `from` upward, no gap) to the state of `tip`
 * (`view`); throws at the first failure, else returns the state after it. The changes of the
 * longest run applied at this tip are kept on the sender: when they are a prefix of `run` (same
 * entries, same tip), only the rest is applied. Without it each admission of a sender with n
 * pending transactions applied all n again (twice: the funds check, then the trial).
 */
export function runState(view: StateView, s: SenderTxs, run: ReadonlyMap<bigint, Entry>, from: bigint, height: number, params: ChainParams, tip: string): StateOverlay {
  const state = new StateOverlay(view);
  const c = s.runCache;
  const reuse = c !== undefined && c.tip === tip && c.from === from && c.entries.every((e, i) => run.get(from + BigInt(i)) === e);
  const applied = reuse ? [...c.entries] : [];
  if (reuse) for (const [k, v] of c.changes) state.set(k, v);
  for (let n = from + BigInt(applied.length); run.has(n); n++) {
    const e = run.get(n)!;
    applyEntry(state, e, height, params);
    applied.push(e);
  }
  if (!reuse || applied.length > c.entries.length) s.runCache = { tip, from, entries: applied, changes: state.changes() };
  return state;
}

/** Ready transactions for a block from the senders' runs: highest fee rate first, each sender's nonces in order. */
export function pickCandidates(senders: Iterable<SenderTxs>, maxBytes: number, maxCount: number): MempoolEntry[] {
  const heads: Entry[][] = [];
  for (const s of senders) {
    const run: Entry[] = [];
    for (let n = s.confirmed; s.ready.has(n); n++) run.push(s.ready.get(n)!);
    if (run.length) heads.push(run);
  }
  const out: MempoolEntry[] = [];
  let bytes = 0;
  const idx = heads.map(() => 0);
  for (;;) {
    let best = -1;
    for (let i = 0; i < heads.length; i++) {
      const e = heads[i][idx[i]];
      if (e && (best < 0 || e.feeRate > heads[best][idx[best]].feeRate)) best = i;
    }
    if (best < 0 || out.length >= maxCount) break;
    const e = heads[best][idx[best]];
    if (bytes + e.size > maxBytes) {
      heads[best] = []; // this sender's later nonces cannot go in without this one
      continue;
    }
    out.push(e);
    bytes += e.size;
    idx[best]++;
  }
  return out;
}

/** `mempool_full` for a transaction of `size` bytes at `feeRate` when the lowest package scores `floor`. */
export function mempoolFullError(floor: number, size: number, feeRate: number): NodeError {
  return new NodeError(MempoolErrorCode.FULL, `mempool is full: fee rate ${feeRate.toFixed(3)} does not exceed the lowest package's ${floor.toFixed(3)} (base units per byte); a fee of ${feeAbove(floor, size)} would enter`, {
    minFeeRate: floor,
    minFee: feeAbove(floor, size).toString(),
  });
}
