/**
 * The mempool: signed transactions valid on top of the best tip, waiting for a block.
 *
 * Two parts, as geth's pending/queued split and Bitcoin Core's orphan pool:
 * - the **ready pool**: each sender's run of transactions from its confirmed nonce on, with no
 *   gap. The run is checked by applying it in nonce order to the tip state, so a transaction
 *   enters only if its sender can pay its fee and value from the confirmed balance minus
 *   everything its earlier pending transactions spend (only a sender's own transactions debit its
 *   account, so other senders' pending transactions can only add to what it has). A byte cap
 *   (`maxBytes`) evicts by package: each sender's run is ranked by the lowest descendant fee rate
 *   over its suffixes (Core's descendant score: max(own rate, rate of it with its later nonces)),
 *   kept in a heap of senders, so an admission costs O(log senders) besides its own sender's
 *   run; a transaction that does not beat the lowest package is refused `mempool_full` with the
 *   fee rate that would enter.
 * - the **queue**: transactions beyond a gap (future nonces), at most `maxFuturePerSender` past
 *   the sender's next ready nonce, `maxQueued` and `maxQueuedBytes` in all, dropped after
 *   `queueExpirySeconds`. A queued transaction must be affordable as if the gap spent nothing:
 *   applied (nonce forced) after the sender's ready run and its earlier queued transactions, on
 *   the tip state; a sender that cannot pay is refused `mempool_unpayable` (a zero-balance key
 *   can never queue anything). The queue has its own budget and never evicts a ready
 *   transaction; when full, a queued transaction displaces only lower fee rates of the queue.
 *   Queued transactions are neither relayed nor mined; when the gap fills (the missing nonce
 *   arrives or is mined) they move to the ready pool, checked for funds again on the state then.
 *
 * Also: signatures through the verifier (off-thread, cached, checked while a transaction waits
 * in the admission queue, so admissions do not wait for the pool one by one); replacement of a
 * (sender, nonce) by a fee rate at least `replaceBumpPct`% higher; expiry; removal of mined
 * transactions on connect, re-admission of disconnected ones after a reorganisation.
 *
 * Where: this file is the admission (the queue of arrivals, admitted in batches on one state
 * read; the signature checks; following the chain); chain/txPools.ts keeps the ready pool, the
 * queue and the eviction heap; chain/mempoolPolicy.ts holds the options, error codes and pure checks.
 */
import { EventEmitter } from 'node:events';
import { StateOverlay } from '../consensus/state.js';
import { txTouchedKeys } from '../consensus/apply.js';
import { encodeTx, type Tx } from '../consensus/tx.js';
import { isNodeError, NodeError, TxErrorCode, ValidationError } from '../consensus/errors.js';
import { toHex } from '../consensus/hash.js';
import type { Block } from '../consensus/block.js';
import type { HybridPublicKey } from '../consensus/keys.js';
import type { ChainParams } from '../consensus/params.js';
import type { Chain } from './chain.js';
import { checkAffordable, checkReadyFunds, decodeForAdmission, defaultMempoolOptions, KNOWN_KEYS_MAX, MAX_TIP_RETRIES, MempoolErrorCode, runState } from './mempoolPolicy.js';
import { TxPools } from './txPools.js';
import type { AddResult, Arrival, DecodedTx, Entry, MempoolOptions, SharedView, SignatureJob } from './mempoolPolicy.js';

export { defaultMempoolOptions, MempoolErrorCode, type AddResult, type MempoolOptions } from './mempoolPolicy.js';
import { silentLogger, type ChainEntry, type Logger, type MempoolEntry, type MempoolReader, type MempoolStats, type SignatureVerifier } from './types.js';

/** The mempool (see module comment). */
export class Mempool extends EventEmitter implements MempoolReader {
  /** The ready pool, the queue and the eviction heap. */
  private readonly pools: TxPools;
  private queue: Promise<unknown> = Promise.resolve();
  /** Transactions that arrived since the admission queue last took them. */
  private arrivals: Arrival[] = [];
  private readonly opts: Required<Omit<MempoolOptions, 'logger' | 'now'>>;
  private readonly now: () => number;
  private readonly log: Logger;
  private timer?: NodeJS.Timeout;
  private disconnected: Block[] = [];
  private readonly onConnect = (_e: ChainEntry, block: Block) => this.pools.removeMined(block);
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
    const d = defaultMempoolOptions;
    this.opts = {
      maxBytes: opts.maxBytes ?? d.maxBytes,
      maxFuturePerSender: opts.maxFuturePerSender ?? d.maxFuturePerSender,
      maxQueued: opts.maxQueued ?? d.maxQueued,
      maxQueuedBytes: opts.maxQueuedBytes ?? d.maxQueuedBytes,
      queueExpirySeconds: opts.queueExpirySeconds ?? d.queueExpirySeconds,
      expirySeconds: opts.expirySeconds ?? d.expirySeconds,
      replaceBumpPct: opts.replaceBumpPct ?? d.replaceBumpPct,
    };
    this.pools = new TxPools(this.opts, params, (e, reason) => this.emit('removed', e, reason));
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

  /** Drops what is past its age (the minute timer). */
  private expire(): void {
    this.pools.expire(this.now());
  }

  /** Stops following the chain. */
  stop(): void {
    this.chain.off('connect', this.onConnect);
    this.chain.off('disconnect', this.onDisconnect);
    this.chain.off('tip', this.onTip);
    if (this.timer) clearInterval(this.timer);
  }

  /** Ready transactions (the queue is counted in `stats().queued`). */
  get count(): number {
    return this.pools.byId.size;
  }

  /** Entries older than this are dropped, seconds. */
  get expirySeconds(): number {
    return this.opts.expirySeconds;
  }

  /** Bytes of the ready transactions. */
  get bytes(): number {
    return this.pools.totalBytes;
  }

  /** Sizes and limits of both parts. */
  stats(): MempoolStats {
    const o = this.opts;
    return {
      count: this.pools.byId.size,
      bytes: this.pools.totalBytes,
      maxBytes: o.maxBytes,
      evictionFeeRate: this.pools.packages.peek()?.score ?? null,
      queued: { count: this.pools.queuedById.size, bytes: this.pools.queuedBytes, maxCount: o.maxQueued, maxBytes: o.maxQueuedBytes, maxPerSender: o.maxFuturePerSender, expirySeconds: o.queueExpirySeconds },
    };
  }

  /** Whether the transaction is pending, ready or queued. */
  has(idHex: string): boolean {
    return this.pools.has(idHex);
  }

  get(idHex: string): MempoolEntry | undefined {
    return this.pools.byId.get(idHex) ?? this.pools.queuedById.get(idHex);
  }

  /** Whether the transaction waits in the queue (beyond a nonce gap). */
  isQueued(idHex: string): boolean {
    return this.pools.queuedById.has(idHex);
  }

  pendingNonce(id: Uint8Array, confirmedNonce: bigint): bigint {
    const ready = this.pools.senders.get(toHex(id))?.ready;
    let n = confirmedNonce;
    while (ready?.has(n)) n++;
    return n;
  }

  /** Ready entries, highest fee rate first. */
  list(limit = Infinity): MempoolEntry[] {
    return [...this.pools.byId.values()].sort((a, b) => b.feeRate - a.feeRate).slice(0, limit);
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
  add(bytes: Uint8Array, opts: { addedAt?: number; abandon?: () => boolean } = {}): Promise<AddResult> {
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
    const signed = pre ? this.preverify(pre, opts.abandon).catch(() => undefined) : Promise.resolve(undefined);
    return new Promise<AddResult>((resolve, reject) => {
      this.arrivals.push({ bytes, addedAt: opts.addedAt, abandon: opts.abandon, pre, signed, resolve, reject });
      if (this.arrivals.length === 1) void this.serial(() => this.admitArrivals());
    });
  }

  /**
   * Admits the transactions that arrived while the queue was busy, one by one in arrival order,
   * on one state read for all of them (read again when the tip moves): under load, the admissions
   * no longer wait for a database read each. Each gets the answer it would get alone: an admission
   * uses the shared read only when it holds every key the admission reads, else reads its own.
   */
  private async admitArrivals(): Promise<void> {
    const batch = this.arrivals;
    this.arrivals = [];
    let shared: SharedView | undefined;
    for (const [i, a] of batch.entries()) {
      try {
        // The relaying peer was banned while this waited its turn (gossip): its transaction is dropped unchecked.
        if (a.abandon?.()) throw new NodeError(MempoolErrorCode.ABANDONED, 'dropped: its relay was banned before it was checked');
        const signed = await a.signed;
        if (a.pre && batch.length > 1 && shared?.tip !== this.chain.tip.hashHex) shared = await this.readShared(batch.slice(i));
        a.resolve(await this.addNow(a.bytes, a.addedAt, signed, 0, a.pre, shared));
      } catch (e) {
        a.reject(e);
      }
    }
  }

  /** One state read covering every key the admissions of `rest` read (their own and their senders' pending transactions'). */
  private async readShared(rest: readonly Arrival[]): Promise<SharedView> {
    const tip = this.chain.tip.hashHex;
    const keys = new Set<string>();
    const senders = new Set<string>();
    for (const a of rest) {
      if (!a.pre) continue;
      for (const k of txTouchedKeys(a.pre.tx)) keys.add(k);
      senders.add(toHex(a.pre.tx.from));
    }
    for (const sender of senders) for (const k of this.pools.senderKeys(sender)) keys.add(k);
    return { tip, keys, view: await this.chain.getStateView([...keys]) };
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
  private async preverify(pre: DecodedTx, abandon?: () => boolean): Promise<boolean | undefined> {
    const { tx, id } = pre;
    // A transaction already pending is refused as a duplicate without a signature check.
    if (this.has(id)) return undefined;
    const sender = toHex(tx.from);
    let pub = tx.publicKey ?? this.knownKeys.get(sender) ?? this.pools.pendingKey(sender);
    // Funds before the signature (as in addNow): a sender whose confirmed balance does not cover
    // this fee is refused by the admission without a check, so none is started for it here. A
    // sender with ready transactions here had the funds for them when they were admitted: its next
    // check starts without reading its account again (an agent's payments in a row).
    if (!pub || !this.pools.senders.get(sender)?.ready.size) {
      const account = await this.chain.getAccount(tx.from);
      if (account.balance < tx.fee) return undefined;
      if (!pub) {
        pub = account.publicKey;
        if (pub) this.rememberKey(sender, pub);
      }
    }
    if (!pub || abandon?.()) return undefined;
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

  private async addNow(bytes: Uint8Array, addedAt?: number, signed?: boolean, attempt = 0, decoded?: DecodedTx, shared?: SharedView): Promise<AddResult> {
    // A transaction with the bytes of a pending one passes the stateless rules as that one did, so
    // checking them before the duplicate check changes no answer.
    const pre = decoded ?? decodeForAdmission(bytes, this.params);
    const { tx, id } = pre;
    if (this.has(id)) throw new NodeError(MempoolErrorCode.DUPLICATE, `transaction ${id} is already in the mempool`);
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
    const txKeys = txTouchedKeys(tx);
    const reads = [...txKeys, ...this.pools.senderKeys(sender)];
    const view = shared?.tip === tip && reads.every((k) => shared.keys.has(k)) ? shared.view : await this.chain.getStateView(reads);
    if (this.chain.tip.hashHex !== tip) return again();
    const acc = new StateOverlay(view).getAccount(tx.from);
    if (tx.nonce < acc.nonce) {
      throw new ValidationError(TxErrorCode.BAD_NONCE, `nonce ${tx.nonce} already used; next is ${acc.nonce}`, { payload: { expected: acc.nonce.toString() } });
    }
    const known = this.pools.senders.get(sender);
    if (known && known.confirmed !== acc.nonce) this.pools.rebase(known, acc.nonce);
    const readyEnd = acc.nonce + BigInt(this.pools.senders.get(sender)?.ready.size ?? 0);
    if (tx.nonce > readyEnd + BigInt(this.opts.maxFuturePerSender)) {
      throw new NodeError(MempoolErrorCode.NONCE_TOO_FAR, `nonce ${tx.nonce} is more than ${this.opts.maxFuturePerSender} ahead of the next ready nonce ${readyEnd}`);
    }
    const size = bytes.length;
    const feeRate = Number(tx.fee) / size;
    const current = this.pools.senders.get(sender);
    const replaced = current?.ready.get(tx.nonce) ?? current?.queued.get(tx.nonce);
    if (replaced && feeRate < replaced.feeRate * (1 + this.opts.replaceBumpPct / 100)) {
      throw new NodeError(MempoolErrorCode.REPLACEMENT_UNDERPRICED, `replacing a pending nonce needs a fee rate ${this.opts.replaceBumpPct}% above ${replaced.feeRate.toFixed(3)}`);
    }
    const ready = tx.nonce <= readyEnd;
    // Policy refusals that need no signature come first (Core checks the pool's minimum fee before the scripts).
    if (ready && !replaced) this.pools.checkRoom(size, feeRate);
    if (!ready) this.pools.queueVictims(size, feeRate, replaced);
    const pub = tx.publicKey ?? acc.publicKey ?? this.pools.pendingKey(sender);
    const entry: Entry = { tx, id, bytes, size, feeRate, addedAt: Math.min(addedAt ?? Infinity, this.now()), sender, keys: txKeys };
    // Funds before keys and signature, as Core looks up inputs before running scripts: a flood of
    // unpayable future nonces costs no signature check, and is refused as unpayable with or without keys.
    if (!ready) checkAffordable(view, this.pools.senders.get(sender), entry, this.chain.tip.height + 1, this.params, tip);
    // A ready one too (appended after the sender's run): refused for its funds before any
    // signature check, with the error the admission's trial below would give; anything else the
    // trial finds is reported there, after the signature, as before.
    else if (!replaced) checkReadyFunds(view, current, entry, this.chain.tip.height + 1, this.params, tip);
    if (!pub) throw new ValidationError(TxErrorCode.MISSING_KEYS, "the account's first transaction must carry its public keys");
    // A signature found bad before queueing is not checked a second time.
    if (signed === false) throw new ValidationError(TxErrorCode.BAD_SIGNATURE, 'signature does not verify');
    await this.checkSignature(id, tx, pub, pre.sighash());
    if (this.chain.tip.hashHex !== tip) return again();

    const s = this.pools.senderAt(sender, acc.nonce);
    if (!ready) {
      this.pools.putQueued(s, entry, replaced);
      this.log.debug({ id, sender, nonce: tx.nonce.toString(), feeRate }, 'tx queued');
      return { id, status: 'accepted', queued: true };
    }
    // The sender's ready run, this transaction included, must apply in order on the tip state.
    const trial = new Map(s.ready);
    trial.set(tx.nonce, entry);
    let state: StateOverlay;
    try {
      state = runState(view, s, trial, acc.nonce, this.chain.tip.height + 1, this.params, tip);
    } catch (e) {
      if (s.ready.size === 0 && s.queued.size === 0) this.pools.senders.delete(sender);
      throw e;
    }
    const promoted = this.pools.putReady(s, entry, state, this.chain.tip.height + 1, replaced);
    if (!this.pools.byId.has(id)) throw this.pools.fullError(size, feeRate);
    this.log.debug({ id, sender, nonce: tx.nonce.toString(), feeRate, promoted: promoted.length }, 'tx accepted');
    this.emit('added', entry);
    for (const p of promoted) if (this.pools.byId.has(p.id)) this.emit('added', p);
    return { id, status: 'accepted' };
  }

  private async checkSignature(id: string, tx: Tx, pub: HybridPublicKey, sighash: Uint8Array): Promise<void> {
    const [ok] = await this.verifier.verifyBatch([{ id, pub, msg: sighash, sig: tx.signature }]);
    if (!ok) throw new ValidationError(TxErrorCode.BAD_SIGNATURE, 'signature does not verify');
  }

  /**
   * After the tip changed: re-admit transactions of disconnected blocks, then re-check the
   * ready run of every sender (balances and nonces may have moved) and promote queued
   * transactions whose gap the new blocks filled.
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
    const added: Entry[] = [];
    // One read for every sender (not one each: the admissions wait behind this pass).
    const view = await this.chain.getStateView([...this.pools.senders.keys()].flatMap((sender) => this.pools.senderKeys(sender)));
    const height = this.chain.tip.height + 1;
    for (const [sender, s] of [...this.pools.senders]) if (this.pools.senders.get(sender) === s) added.push(...this.pools.recheck(sender, s, view, height));
    this.pools.evictOverCap();
    for (const e of added) if (this.pools.byId.has(e.id)) this.emit('added', e);
    if (blocks.length) this.log.info({ readmitted: blocks.reduce((n, b) => n + b.txs.length, 0), count: this.count }, 'mempool updated after reorganization');
  }

  /** Ready transactions for a block: highest fee rate first, each sender's nonces in order. */
  blockCandidates(maxBytes: number, maxCount: number): MempoolEntry[] {
    return this.pools.candidates(maxBytes, maxCount);
  }
}

/** Creates a mempool following `chain` (call `start()`). */
export function createMempool(chain: Chain, verifier: SignatureVerifier, params: ChainParams, opts?: MempoolOptions): Mempool {
  return new Mempool(chain, verifier, params, opts);
}
