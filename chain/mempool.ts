/**
 * The mempool: signed transactions valid on top of the best tip, waiting for a block.
 *
 * Rules: stateless consensus checks; signatures through the verifier (off-thread, cached,
 * checked while a transaction waits in the admission queue, so admissions do not wait for the
 * pool one by one);
 * per-sender nonce sequencing with up to `maxFuturePerSender` nonces beyond the next ready one;
 * each sender's ready chain is checked by applying it in nonce order to the tip state (only a
 * sender's own transactions debit its account, so other senders' pending transactions can
 * only add to what it has: a ready chain stays valid whatever else gets mined with it);
 * replacement of a (sender, nonce) by a fee rate at least `replaceBumpPct`% higher; a byte cap
 * that evicts the lowest fee rate (with the evicted sender's later nonces); expiry; removal of
 * mined transactions on connect, re-admission of disconnected ones after a reorganisation.
 */
import { EventEmitter } from 'node:events';
import { StateOverlay, accountKey, type StateView } from '../consensus/state.js';
import { applyTx, txTouchedKeys } from '../consensus/apply.js';
import { decodeTx, encodeTx, txId as computeTxId, txSighash, type Tx } from '../consensus/tx.js';
import { validateTx } from '../consensus/validate.js';
import { isNodeError, NodeError, TxErrorCode, ValidationError } from '../consensus/errors.js';
import { toHex } from '../consensus/hash.js';
import type { Block } from '../consensus/block.js';
import type { HybridPublicKey } from '../consensus/keys.js';
import type { ChainParams } from '../consensus/params.js';
import type { Chain } from './chain.js';
import { silentLogger, type ChainEntry, type Logger, type MempoolEntry, type MempoolReader, type SignatureVerifier } from './types.js';

/** Senders whose chain keys the mempool remembers for its early signature checks. */
const KNOWN_KEYS_MAX = 10_000;

/** One signature check as the verifier takes it. */
type SignatureJob = Parameters<SignatureVerifier['verifyBatch']>[0][number];

/** Error codes of mempool policy (consensus failures keep their tx_* codes). */
export const MempoolErrorCode = {
  DUPLICATE: 'mempool_duplicate',
  FULL: 'mempool_full',
  REPLACEMENT_UNDERPRICED: 'mempool_replacement_underpriced',
  NONCE_TOO_FAR: 'mempool_nonce_too_far',
  /** Blocks kept connecting while a transaction was checked (it may be sent again). */
  TIP_MOVING: 'mempool_tip_moving',
} as const;

/** Times an admission starts again because a block connected while it was being checked. */
const MAX_TIP_RETRIES = 5;

/** Options of the mempool. */
export interface MempoolOptions {
  /** Byte cap over the signed sizes of all entries. */
  maxBytes?: number;
  /** Nonces accepted beyond the sender's next ready one. */
  maxFuturePerSender?: number;
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
  expirySeconds: 3 * 3600,
  replaceBumpPct: 10,
} as const;

interface Entry extends MempoolEntry {
  readonly sender: string;
}


/** A transaction as admission checks it: decoded, within the stateless rules, with its id and (on demand, once) its sighash. */
interface DecodedTx {
  readonly tx: Tx;
  readonly id: string;
  readonly sighash: () => Uint8Array;
}

/** Decodes `bytes` and checks the stateless rules (throws CodecError / ValidationError with their codes). */
function decodeForAdmission(bytes: Uint8Array, params: ChainParams): DecodedTx {
  const tx = decodeTx(bytes);
  validateTx(tx, bytes.length, params);
  let sighash: Uint8Array | undefined;
  return { tx, id: toHex(computeTxId(bytes)), sighash: () => (sighash ??= txSighash(tx)) };
}

/** The mempool (see module comment). */
export class Mempool extends EventEmitter implements MempoolReader {
  private readonly byId = new Map<string, Entry>();
  private readonly bySender = new Map<string, Map<bigint, Entry>>();
  /** Confirmed (tip) nonce of each sender with pending entries, as last seen. */
  private readonly confirmedNonce = new Map<string, bigint>();
  private totalBytes = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly opts: Required<Omit<MempoolOptions, 'logger' | 'now'>>;
  private readonly now: () => number;
  private readonly log: Logger;
  private timer?: NodeJS.Timeout;
  private disconnected: Block[] = [];
  private readonly onConnect = (_e: ChainEntry, block: Block) => this.removeMined(block);
  private readonly onDisconnect = (_e: ChainEntry, block: Block) => this.disconnected.push(block);
  private readonly onTip = () => {
    void this.serial(() => this.afterTipChange());
  };

  constructor(
    private readonly chain: Chain,
    private readonly verifier: SignatureVerifier,
    private readonly params: ChainParams,
    opts: MempoolOptions = {},
  ) {
    super();
    this.opts = {
      maxBytes: opts.maxBytes ?? defaultMempoolOptions.maxBytes,
      maxFuturePerSender: opts.maxFuturePerSender ?? defaultMempoolOptions.maxFuturePerSender,
      expirySeconds: opts.expirySeconds ?? defaultMempoolOptions.expirySeconds,
      replaceBumpPct: opts.replaceBumpPct ?? defaultMempoolOptions.replaceBumpPct,
    };
    this.now = opts.now ?? Date.now;
    this.log = opts.logger ?? silentLogger;
  }

  /** Follows the chain and starts the expiry timer. */
  start(): void {
    this.chain.on('connect', this.onConnect);
    this.chain.on('disconnect', this.onDisconnect);
    this.chain.on('tip', this.onTip);
    this.timer = setInterval(() => void this.serial(async () => this.expire()), 60_000);
    this.timer.unref();
  }

  /** Stops following the chain. */
  stop(): void {
    this.chain.off('connect', this.onConnect);
    this.chain.off('disconnect', this.onDisconnect);
    this.chain.off('tip', this.onTip);
    if (this.timer) clearInterval(this.timer);
  }

  get count(): number {
    return this.byId.size;
  }

  /** Entries older than this are dropped, seconds. */
  get expirySeconds(): number {
    return this.opts.expirySeconds;
  }

  get bytes(): number {
    return this.totalBytes;
  }

  has(idHex: string): boolean {
    return this.byId.has(idHex);
  }

  get(idHex: string): MempoolEntry | undefined {
    return this.byId.get(idHex);
  }

  pendingNonce(id: Uint8Array, confirmedNonce: bigint): bigint {
    const pending = this.bySender.get(toHex(id));
    let n = confirmedNonce;
    while (pending?.has(n)) n++;
    return n;
  }

  list(limit = Infinity): MempoolEntry[] {
    return [...this.byId.values()].sort((a, b) => b.feeRate - a.feeRate).slice(0, limit);
  }

  /** Waits until queued mempool work (admissions, reorg handling) is done. */
  async idle(): Promise<void> {
    await this.queue;
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Admits a signed transaction; throws ValidationError / CodecError / NodeError with a stable code.
   * `addedAt`: when it first entered (a transaction restored from the mempool file keeps its age).
   */
  add(bytes: Uint8Array, opts: { addedAt?: number } = {}): Promise<{ id: string; status: 'accepted' }> {
    if (bytes.length > this.params.limits.maxTxBytes) {
      return Promise.reject(new ValidationError(TxErrorCode.TOO_LARGE, `tx is ${bytes.length} bytes, limit ${this.params.limits.maxTxBytes}`));
    }
    // Decoded once: the early check and the admission share it. Bytes that do not decode or break
    // a stateless rule get no early check, and the admission reports why.
    let pre: DecodedTx | undefined;
    try {
      pre = decodeForAdmission(bytes, this.params);
    } catch {
      pre = undefined;
    }
    // The check starts now; the admission keeps its place in the queue (arrival order) and waits for it there.
    const signed = pre ? this.preverify(pre).catch(() => undefined) : Promise.resolve(undefined);
    return this.serial(async () => this.addNow(bytes, opts.addedAt, await signed, 0, pre));
  }

  /**
   * Checks the signature while the transaction waits in the admission queue, so many transactions
   * are verified on the pool at once while admissions stay serial and in arrival order: a
   * positive answer is cached under the tx id and `addNow`'s own check (which decides) then
   * answers from that cache. Only with a key that belongs to the sender (carried and hashing to
   * it, published on chain, or carried by a pending transaction of the sender that was admitted
   * with it); anything else is left to `addNow`, which reports every failure with its code.
   * Resolves to the answer (a sender has one key: its address is the key's hash), or undefined
   * when it did not check.
   */
  private async preverify(pre: DecodedTx): Promise<boolean | undefined> {
    const { tx, id } = pre;
    // A transaction already pending is refused as a duplicate without a signature check.
    if (this.byId.has(id)) return undefined;
    const sender = toHex(tx.from);
    let pub = tx.publicKey ?? this.knownKeys.get(sender) ?? [...(this.bySender.get(sender)?.values() ?? [])].find((e) => e.tx.publicKey)?.tx.publicKey;
    if (!pub) {
      pub = (await this.chain.getAccount(tx.from)).publicKey;
      if (pub) this.rememberKey(sender, pub);
    }
    if (!pub) return undefined;
    return this.verifySoon({ id, pub, msg: pre.sighash(), sig: tx.signature });
  }

  /** Public keys of recent senders read from the chain (an address is its key's hash: a key never changes). */
  private readonly knownKeys = new Map<string, HybridPublicKey>();

  private rememberKey(sender: string, pub: HybridPublicKey): void {
    if (this.knownKeys.size >= KNOWN_KEYS_MAX) this.knownKeys.delete(this.knownKeys.keys().next().value!);
    this.knownKeys.set(sender, pub);
  }

  /** Checks queued in this turn of the event loop: they go to the verifier as one batch (one message per worker, not one per transaction). */
  private soon: { job: SignatureJob; resolve: (ok: boolean | undefined) => void }[] = [];

  private verifySoon(job: SignatureJob): Promise<boolean | undefined> {
    return new Promise((resolve) => {
      if (this.soon.length === 0) {
        setImmediate(() => {
          const batch = this.soon;
          this.soon = [];
          this.verifier.verifyBatch(batch.map((b) => b.job)).then(
            (oks) => batch.forEach((b, i) => b.resolve(oks[i])),
            () => batch.forEach((b) => b.resolve(undefined)),
          );
        });
      }
      this.soon.push({ job, resolve });
    });
  }

  private async addNow(bytes: Uint8Array, addedAt?: number, signed?: boolean, attempt = 0, decoded?: DecodedTx): Promise<{ id: string; status: 'accepted' }> {
    // A transaction with the bytes of a pending one passes the stateless rules as that one did, so
    // checking them before the duplicate check changes no answer.
    const pre = decoded ?? decodeForAdmission(bytes, this.params);
    const { tx, id } = pre;
    if (this.byId.has(id)) throw new NodeError(MempoolErrorCode.DUPLICATE, `transaction ${id} is already in the mempool`);
    const sender = toHex(tx.from);
    // A block connecting during an await below mines some of the sender's pending transactions
    // (its 'connect' removes them at once) while the state read here is the old tip's: checked
    // against that mix, a valid next nonce looked like a gap (mempool_nonce_too_far) and the
    // sender's confirmed nonce went back. Such an admission starts again on the new tip.
    const tip = this.chain.tip.hashHex;
    const again = () => {
      if (attempt >= MAX_TIP_RETRIES) throw new NodeError(MempoolErrorCode.TIP_MOVING, 'the chain tip kept changing while the transaction was checked; send it again');
      return this.addNow(bytes, addedAt, signed, attempt + 1, pre);
    };
    const pending = this.bySender.get(sender) ?? new Map<bigint, Entry>();
    const chainKeys = [...pending.values()].flatMap((e) => txTouchedKeys(e.tx));
    const view = await this.chain.getStateView([...txTouchedKeys(tx), ...chainKeys]);
    if (this.chain.tip.hashHex !== tip) return again();
    const acc = new StateOverlay(view).getAccount(tx.from);
    if (tx.nonce < acc.nonce) {
      throw new ValidationError(TxErrorCode.BAD_NONCE, `nonce ${tx.nonce} already used; next is ${acc.nonce}`, { payload: { expected: acc.nonce.toString() } });
    }
    const ready = this.pendingNonce(tx.from, acc.nonce);
    if (tx.nonce > ready + BigInt(this.opts.maxFuturePerSender)) {
      throw new NodeError(MempoolErrorCode.NONCE_TOO_FAR, `nonce ${tx.nonce} is more than ${this.opts.maxFuturePerSender} ahead of the next ready nonce ${ready}`);
    }
    const feeRate = Number(tx.fee) / bytes.length;
    const replaced = pending.get(tx.nonce);
    if (replaced && feeRate < replaced.feeRate * (1 + this.opts.replaceBumpPct / 100)) {
      throw new NodeError(MempoolErrorCode.REPLACEMENT_UNDERPRICED, `replacing a pending nonce needs a fee rate ${this.opts.replaceBumpPct}% above ${replaced.feeRate.toFixed(3)}`);
    }
    const pub = tx.publicKey ?? acc.publicKey ?? [...pending.values()].find((e) => e.tx.publicKey)?.tx.publicKey;
    if (!pub) throw new ValidationError(TxErrorCode.MISSING_KEYS, "the account's first transaction must carry its public keys");
    // A signature found bad before queueing is not checked a second time.
    if (signed === false) throw new ValidationError(TxErrorCode.BAD_SIGNATURE, 'signature does not verify');
    await this.checkSignature(id, tx, pub, pre.sighash());
    if (this.chain.tip.hashHex !== tip) return again();

    const entry: Entry = { tx, id, bytes, size: bytes.length, feeRate, addedAt: Math.min(addedAt ?? Infinity, this.now()), sender };
    const trial = new Map(pending);
    trial.set(tx.nonce, entry);
    // The sender's ready chain, this transaction included, must apply in order on the tip state.
    if (tx.nonce < this.contiguousEnd(trial, acc.nonce)) this.simulate(view, trial, acc.nonce, true);

    if (replaced) this.removeEntry(replaced, 'replaced');
    pending.set(tx.nonce, entry);
    this.bySender.set(sender, pending);
    this.confirmedNonce.set(sender, acc.nonce);
    this.byId.set(id, entry);
    this.totalBytes += entry.size;
    this.evictOverCap();
    if (!this.byId.has(id)) throw new NodeError(MempoolErrorCode.FULL, `mempool is full and fee rate ${feeRate.toFixed(3)} is too low to enter`);
    this.log.debug({ id, sender, nonce: tx.nonce.toString(), feeRate }, 'tx accepted');
    this.emit('added', entry);
    return { id, status: 'accepted' };
  }

  private async checkSignature(id: string, tx: Tx, pub: HybridPublicKey, sighash: Uint8Array): Promise<void> {
    const [ok] = await this.verifier.verifyBatch([{ id, pub, msg: sighash, sig: tx.signature }]);
    if (!ok) throw new ValidationError(TxErrorCode.BAD_SIGNATURE, 'signature does not verify');
  }

  private contiguousEnd(pending: Map<bigint, Entry>, from: bigint): bigint {
    let n = from;
    while (pending.has(n)) n++;
    return n;
  }

  /**
   * Applies a sender's ready chain (nonces from `from` upward) to the tip state. With `strict`
   * the first failure throws; otherwise it returns the nonce of the first failing entry.
   */
  private simulate(view: StateView, pending: Map<bigint, Entry>, from: bigint, strict: boolean): bigint | undefined {
    const state = new StateOverlay(view);
    for (let n = from; pending.has(n); n++) {
      const e = pending.get(n)!;
      try {
        applyTx(state, e.tx, Buffer.from(e.id, 'hex'), this.chain.tip.height + 1, this.params);
      } catch (err) {
        if (strict) throw err;
        return n;
      }
    }
    return undefined;
  }

  private removeEntry(e: Entry, reason: string): void {
    if (!this.byId.delete(e.id)) return;
    this.totalBytes -= e.size;
    const pending = this.bySender.get(e.sender);
    pending?.delete(e.tx.nonce);
    if (pending && pending.size === 0) {
      this.bySender.delete(e.sender);
      this.confirmedNonce.delete(e.sender);
    }
    this.emit('removed', e, reason);
  }

  /** Removes an entry and the same sender's later nonces (they can no longer be ready). */
  private removeWithDescendants(e: Entry, reason: string): void {
    const pending = this.bySender.get(e.sender);
    const later = pending ? [...pending.values()].filter((x) => x.tx.nonce >= e.tx.nonce) : [e];
    for (const x of later) this.removeEntry(x, reason);
  }

  private evictOverCap(): void {
    while (this.totalBytes > this.opts.maxBytes && this.byId.size > 0) {
      let worst: Entry | undefined;
      for (const e of this.byId.values()) if (!worst || e.feeRate < worst.feeRate) worst = e;
      this.removeWithDescendants(worst!, 'evicted');
    }
  }

  private expire(): void {
    const cutoff = this.now() - this.opts.expirySeconds * 1000;
    for (const e of [...this.byId.values()]) if (e.addedAt < cutoff && this.byId.has(e.id)) this.removeWithDescendants(e, 'expired');
  }

  /** Synchronous on 'connect': drop what the block mined and every lower nonce of its senders. */
  private removeMined(block: Block): void {
    const maxNonce = new Map<string, bigint>();
    for (const tx of block.txs) {
      const s = toHex(tx.from);
      if ((maxNonce.get(s) ?? -1n) < tx.nonce) maxNonce.set(s, tx.nonce);
    }
    for (const [s, n] of maxNonce) {
      for (const e of [...(this.bySender.get(s)?.values() ?? [])]) if (e.tx.nonce <= n) this.removeEntry(e, 'mined');
      if (this.bySender.has(s)) this.confirmedNonce.set(s, n + 1n);
    }
  }

  /**
   * After the tip changed: re-admit transactions of disconnected blocks, then re-check the
   * ready chain of every sender (balances and nonces may have moved).
   */
  private async afterTipChange(): Promise<void> {
    // Disconnections arrive tip first; re-admit in chain order so nonces (and key publication) stay sequenced.
    const blocks = this.disconnected.reverse();
    this.disconnected = [];
    readmit: for (const [i, b] of blocks.entries()) {
      for (const [j, tx] of b.txs.entries()) {
        try {
          await this.addNow(encodeTx(tx));
        } catch (e) {
          if (isNodeError(e) && e.code === MempoolErrorCode.TIP_MOVING) {
            // The tip kept moving (its 'tip' events queued the next pass): that pass re-admits the
            // rest, in chain order and before blocks disconnected since.
            this.disconnected.push(...[{ ...b, txs: b.txs.slice(j) }, ...blocks.slice(i + 1)].reverse());
            break readmit;
          }
          // Mined again on the new branch, or no longer valid: nothing to keep.
        }
      }
    }
    for (const [sender, pending] of [...this.bySender]) {
      const keys = [...pending.values()].flatMap((e) => txTouchedKeys(e.tx));
      const view = await this.chain.getStateView(keys);
      const acc = new StateOverlay(view).getAccount(Buffer.from(sender, 'hex'));
      for (const e of [...pending.values()]) if (e.tx.nonce < acc.nonce) this.removeEntry(e, 'stale');
      if (!this.bySender.has(sender)) continue;
      this.confirmedNonce.set(sender, acc.nonce);
      const failed = this.simulate(view, pending, acc.nonce, false);
      if (failed !== undefined) this.removeWithDescendants(pending.get(failed)!, 'invalid');
    }
    if (blocks.length) this.log.info({ readmitted: blocks.reduce((s, b) => s + b.txs.length, 0), count: this.count }, 'mempool updated after reorganization');
  }

  /** Ready transactions for a block: highest fee rate first, each sender's nonces in order. */
  blockCandidates(maxBytes: number, maxCount: number): MempoolEntry[] {
    const heads: Entry[][] = [];
    for (const [sender, pending] of this.bySender) {
      // Only the contiguous run from the confirmed nonce is ready; later nonces wait for the gap.
      const run: Entry[] = [];
      for (let n = this.confirmedNonce.get(sender) ?? -1n; pending.has(n); n++) run.push(pending.get(n)!);
      heads.push(run);
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
}

/** Creates a mempool following `chain` (call `start()`). */
export function createMempool(chain: Chain, verifier: SignatureVerifier, params: ChainParams, opts?: MempoolOptions): Mempool {
  return new Mempool(chain, verifier, params, opts);
}
