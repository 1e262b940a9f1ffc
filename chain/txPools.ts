/**
 * What the mempool holds, apart from how it admits (chain/mempool.ts): the **ready pool** (each
 * sender's run from its confirmed nonce, no gap), the **queue** (nonces beyond a gap) and the
 * **eviction heap** (senders by package score, chain/indexedHeap.ts), with the bookkeeping that
 * keeps their invariants and byte counts: promotion when a gap fills, rebasing on a new confirmed
 * nonce, eviction over the byte cap, expiry, removal of what a block mined. Synchronous: a change
 * here never spans an await. A ready entry that leaves is reported to `onRemoved` (the mempool's
 * 'removed' event); the policy's pure checks are in chain/mempoolPolicy.ts.
 */
import { StateOverlay, type StateView } from '../consensus/state.js';
import { NodeError } from '../consensus/errors.js';
import { fromHex, toHex } from '../consensus/hash.js';
import type { Block } from '../consensus/block.js';
import type { HybridPublicKey } from '../consensus/keys.js';
import type { ChainParams } from '../consensus/params.js';
import { IndexedHeap } from './indexedHeap.js';
import { applyEntry, MempoolErrorCode, mempoolFullError, packageScore, pickCandidates } from './mempoolPolicy.js';
import type { Entry, SenderTxs } from './mempoolPolicy.js';
import type { MempoolEntry } from './types.js';

/** The caps and ages the pools keep (the mempool's options). */
export interface PoolLimits {
  readonly maxBytes: number;
  readonly maxQueued: number;
  readonly maxQueuedBytes: number;
  readonly expirySeconds: number;
  readonly queueExpirySeconds: number;
}

/** The ready pool, the queue and the eviction heap (see module comment). */
export class TxPools {
  /** Ready entries by id. */
  readonly byId = new Map<string, Entry>();
  /** Queued entries by id. */
  readonly queuedById = new Map<string, Entry>();
  readonly senders = new Map<string, SenderTxs>();
  /** Senders with ready entries, lowest package score first. */
  readonly packages = new IndexedHeap<SenderTxs>((a, b) => a.score < b.score);
  /** Bytes of the ready entries, and of the queued ones. */
  totalBytes = 0;
  queuedBytes = 0;

  constructor(
    private readonly opts: PoolLimits,
    private readonly params: ChainParams,
    private readonly onRemoved: (e: Entry, reason: string) => void,
  ) {}

  /** Whether the transaction is pending, ready or queued. */
  has(idHex: string): boolean {
    return this.byId.has(idHex) || this.queuedById.has(idHex);
  }

  /** A public key carried by one of the sender's pending (ready or queued) transactions. */
  pendingKey(sender: string): HybridPublicKey | undefined {
    const s = this.senders.get(sender);
    if (!s) return undefined;
    for (const e of s.ready.values()) if (e.tx.publicKey) return e.tx.publicKey;
    for (const e of s.queued.values()) if (e.tx.publicKey) return e.tx.publicKey;
    return undefined;
  }

  /** Ready transactions for a block: highest fee rate first, each sender's nonces in order. */
  candidates(maxBytes: number, maxCount: number): MempoolEntry[] {
    return pickCandidates(this.senders.values(), maxBytes, maxCount);
  }

  /** Queues `entry` (in place of `replaced`), displacing the lower fee rates `queueVictims` names. */
  putQueued(s: SenderTxs, entry: Entry, replaced?: Entry): void {
    if (replaced) this.dropQueued(s, replaced);
    for (const v of this.queueVictims(entry.size, entry.feeRate)) this.dropQueued(this.senders.get(v.sender)!, v);
    s.queued.set(entry.tx.nonce, entry);
    this.queuedById.set(entry.id, entry);
    this.queuedBytes += entry.size;
  }

  /**
   * Puts `entry` in the sender's ready run (in place of `replaced`), promotes what follows it on
   * `state` (the state after the run) and evicts over the cap. Returns the promoted entries.
   */
  putReady(s: SenderTxs, entry: Entry, state: StateOverlay, height: number, replaced?: Entry): Entry[] {
    if (replaced) this.dropReady(s, replaced, 'replaced');
    s.ready.set(entry.tx.nonce, entry);
    this.byId.set(entry.id, entry);
    this.totalBytes += entry.size;
    const promoted = this.promote(s, state, height);
    this.touch(s);
    this.evictOverCap({ s, from: entry.tx.nonce });
    return promoted;
  }

  /**
   * After the tip changed, one sender on the new tip's `view`: brought to its confirmed nonce, its
   * ready run applied again (the first transaction that no longer applies goes, with the later
   * ones), then what the new blocks let follow promoted. Returns the promoted entries.
   */
  recheck(sender: string, s: SenderTxs, view: StateView, height: number): Entry[] {
    const acc = new StateOverlay(view).getAccount(fromHex(sender));
    this.rebase(s, acc.nonce);
    if (this.senders.get(sender) !== s) return [];
    const state = new StateOverlay(view);
    for (let n = s.confirmed; s.ready.has(n); n++) {
      const trial = new StateOverlay(state);
      try {
        applyEntry(trial, s.ready.get(n)!, height, this.params);
      } catch {
        this.dropReadyFrom(s, n, 'invalid');
        break;
      }
      for (const [k, v] of trial.changes()) state.set(k, v);
    }
    const promoted = s.queued.size > 0 ? this.promote(s, state, height) : [];
    if (this.senders.get(sender) === s) this.touch(s);
    return promoted;
  }

  /** State keys the sender's pending transactions touch. */
  senderKeys(sender: string): string[] {
    const s = this.senders.get(sender);
    if (!s) return [];
    // Each key once: a sender's payments touch the same few keys, a run of n of them n times.
    const keys = new Set<string>();
    for (const e of s.ready.values()) for (const k of e.keys) keys.add(k);
    for (const e of s.queued.values()) for (const k of e.keys) keys.add(k);
    return [...keys];
  }

  /** The sender's record, created at its confirmed nonce `confirmed` when it has none. */
  senderAt(sender: string, confirmed: bigint): SenderTxs {
    const known = this.senders.get(sender);
    if (known) return known;
    const s: SenderTxs = { sender, confirmed, ready: new Map(), queued: new Map(), score: Infinity, evictFrom: confirmed, heapIndex: -1 };
    this.senders.set(sender, s);
    return s;
  }

  /** Refuses a new ready transaction of `size` bytes that would have to evict a package paying at least its fee rate. */
  checkRoom(size: number, feeRate: number): void {
    if (this.totalBytes + size <= this.opts.maxBytes) return;
    const lowest = this.packages.peek();
    if (!lowest || feeRate <= lowest.score || size > this.opts.maxBytes) throw this.fullError(size, feeRate);
  }

  fullError(size: number, feeRate: number): NodeError {
    return mempoolFullError(this.packages.peek()?.score ?? 0, size, feeRate);
  }

  /**
   * The queued entries a new queued transaction of `size` bytes and `feeRate` would displace to
   * fit the queue's caps (lowest fee rates first, `freed` excluded as it leaves anyway); throws
   * `mempool_queue_full` when that would displace a rate at least its own. Linear in the queue,
   * which is small and bounded (`maxQueued`).
   */
  queueVictims(size: number, feeRate: number, freed?: Entry): Entry[] {
    let count = this.queuedById.size + 1 - (freed ? 1 : 0);
    let bytes = this.queuedBytes + size - (freed?.size ?? 0);
    if (count <= this.opts.maxQueued && bytes <= this.opts.maxQueuedBytes) return [];
    const victims: Entry[] = [];
    const byRate = [...this.queuedById.values()].filter((e) => e !== freed).sort((a, b) => a.feeRate - b.feeRate);
    for (const v of byRate) {
      if (count <= this.opts.maxQueued && bytes <= this.opts.maxQueuedBytes) break;
      if (v.feeRate >= feeRate) break;
      victims.push(v);
      count--;
      bytes -= v.size;
    }
    if (count > this.opts.maxQueued || bytes > this.opts.maxQueuedBytes) {
      const floor = byRate[victims.length]?.feeRate ?? 0;
      throw new NodeError(MempoolErrorCode.QUEUE_FULL, `the queue of future-nonce transactions is full: fee rate ${feeRate.toFixed(3)} does not exceed ${floor.toFixed(3)}; send the missing nonces first`, { minFeeRate: floor });
    }
    return victims;
  }

  /**
   * Moves the sender's queued transactions that continue its ready run into the ready pool, each
   * applied on `state` (the state after the run) first: the first that fails is dropped and the
   * rest stay queued. Returns the promoted entries (the caller emits 'added' once they survived eviction).
   */
  promote(s: SenderTxs, state: StateOverlay, height: number): Entry[] {
    const promoted: Entry[] = [];
    for (let n = s.confirmed + BigInt(s.ready.size); s.queued.has(n); n++) {
      const e = s.queued.get(n)!;
      const trial = new StateOverlay(state);
      try {
        applyEntry(trial, e, height, this.params);
      } catch {
        this.dropQueued(s, e);
        break;
      }
      for (const [k, v] of trial.changes()) state.set(k, v);
      s.queued.delete(n);
      this.queuedById.delete(e.id);
      this.queuedBytes -= e.size;
      s.ready.set(n, e);
      this.byId.set(e.id, e);
      this.totalBytes += e.size;
      promoted.push(e);
    }
    return promoted;
  }

  /**
   * Brings a sender to its confirmed nonce `nonce` on the tip: drops what is below it; when the
   * ready run no longer starts there (the nonce went back in a reorganisation), the run waits in
   * the queue until the missing nonces come back. Promotion needs the state: the callers do it.
   */
  rebase(s: SenderTxs, nonce: bigint): void {
    for (const e of [...s.ready.values()]) if (e.tx.nonce < nonce) this.dropReady(s, e, 'stale');
    for (const e of [...s.queued.values()]) if (e.tx.nonce < nonce) this.dropQueued(s, e);
    s.confirmed = nonce;
    if (s.ready.size > 0 && !s.ready.has(nonce)) {
      for (const e of [...s.ready.values()]) {
        this.dropReady(s, e, 'demoted');
        s.queued.set(e.tx.nonce, e);
        this.queuedById.set(e.id, e);
        this.queuedBytes += e.size;
      }
    }
    this.touch(s);
  }

  /** Removes one ready entry (callers keep the run contiguous, or call `touch` after). */
  dropReady(s: SenderTxs, e: Entry, reason: string): void {
    if (s.ready.get(e.tx.nonce) !== e) return;
    s.ready.delete(e.tx.nonce);
    this.byId.delete(e.id);
    this.totalBytes -= e.size;
    this.onRemoved(e, reason);
  }

  dropQueued(s: SenderTxs, e: Entry): void {
    if (s.queued.get(e.tx.nonce) !== e) return;
    s.queued.delete(e.tx.nonce);
    this.queuedById.delete(e.id);
    this.queuedBytes -= e.size;
    if (s.ready.size === 0 && s.queued.size === 0) this.forget(s);
  }

  /** Removes a ready entry and the sender's later ready nonces (they can no longer apply). */
  dropReadyFrom(s: SenderTxs, from: bigint, reason: string): void {
    const end = s.confirmed + BigInt(s.ready.size);
    for (let n = end - 1n; n >= from; n--) {
      const e = s.ready.get(n);
      if (e) this.dropReady(s, e, reason);
    }
    this.touch(s);
  }

  /**
   * Recomputes the sender's package score after its ready run changed and restores the heap:
   * walking the run from its last nonce back, each suffix's descendant rate is
   * max(own rate, fees / bytes of it and its later nonces); the lowest is the score.
   */
  touch(s: SenderTxs): void {
    if (s.ready.size === 0) {
      this.packages.delete(s);
      s.score = Infinity;
      if (s.queued.size === 0) this.forget(s);
      return;
    }
    const { score, evictFrom } = packageScore(s);
    s.score = score;
    s.evictFrom = evictFrom;
    this.packages.update(s);
  }

  forget(s: SenderTxs): void {
    this.packages.delete(s);
    if (this.senders.get(s.sender) === s) this.senders.delete(s.sender);
  }

  /**
   * While over the byte cap: evicts the lowest package (O(log senders) to find it). `admitting`:
   * the sender whose transaction at nonce `from` was just put in. When its own package is the
   * lowest, the eviction starts at that transaction, never before it: the new transaction (and
   * what it let follow) leaves, refused as mempool_full, and the sender's earlier transactions
   * stay, where evicting the package from its start would have taken them too for nothing.
   */
  evictOverCap(admitting?: { s: SenderTxs; from: bigint }): void {
    while (this.totalBytes > this.opts.maxBytes) {
      const lowest = this.packages.peek();
      if (!lowest) break;
      if (lowest === admitting?.s && lowest.evictFrom < admitting.from) {
        this.dropReadyFrom(lowest, admitting.from, 'evicted');
        break;
      }
      this.dropReadyFrom(lowest, lowest.evictFrom, 'evicted');
    }
  }

  /** Drops ready entries older than `expirySeconds` (with the sender's later nonces) and queued ones older than `queueExpirySeconds`. */
  expire(now: number): void {
    const cutoff = now - this.opts.expirySeconds * 1000;
    for (const e of [...this.byId.values()]) {
      const s = this.senders.get(e.sender);
      if (e.addedAt < cutoff && s && this.byId.has(e.id)) this.dropReadyFrom(s, e.tx.nonce, 'expired');
    }
    const queueCutoff = now - this.opts.queueExpirySeconds * 1000;
    for (const e of [...this.queuedById.values()]) {
      const s = this.senders.get(e.sender);
      if (e.addedAt < queueCutoff && s) this.dropQueued(s, e);
    }
  }

  /** Synchronous on 'connect': drop what the block mined and every lower nonce of its senders. */
  removeMined(block: Block): void {
    const maxNonce = new Map<string, bigint>();
    for (const tx of block.txs) {
      const s = toHex(tx.from);
      if ((maxNonce.get(s) ?? -1n) < tx.nonce) maxNonce.set(s, tx.nonce);
    }
    for (const [sender, n] of maxNonce) {
      const s = this.senders.get(sender);
      if (!s) continue;
      for (const e of [...s.ready.values()]) if (e.tx.nonce <= n) this.dropReady(s, e, 'mined');
      for (const e of [...s.queued.values()]) if (e.tx.nonce <= n) this.dropQueued(s, e);
      // What remains of the run starts at n + 1 (the nonces it had were contiguous); a run that
      // emptied leaves queued nonces that may now follow the confirmed one: the mempool's pass after the tip change promotes them.
      if (s.confirmed <= n) s.confirmed = n + 1n;
      if (s.ready.size > 0 && !s.ready.has(s.confirmed)) this.rebase(s, s.confirmed);
      else this.touch(s);
    }
  }
}
