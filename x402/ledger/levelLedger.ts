/**
 * The settlement ledger in LevelDB (`<dataDir>/ledger`), one node's: the interface and its key
 * layout are in ledger.ts.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { Level } from 'level';
import { NodeError } from '../../consensus/errors.js';
import { LedgerErrorCode, TRANSITION_FROM, refundTxPatch, transitionConflict, type ClaimResult, type PaymentRecord, type PaymentStatus, type RefundTxWrite, type ServiceVolume, type SettlementLedger, type UsdcReconcileState } from './ledger.js';
import { PaymentIdFilter } from './idFilter.js';
import type { LedgerWitness } from './witness.js';

/** The key of write count `seq` (see module comment). */
const seqKey = (seq: number) => `s:${String(seq).padStart(16, '0')}`;

type Signature = { mldsa: string; ed25519: string };
type Put = { type: 'put'; key: string; value: string };
/** Batch signatures remembered (written by this process, or read) before the oldest is forgotten. */
const SIGNATURES_KEPT = 512;

/** The batch signature of a record's receipt, if it has one (`r:` in ledger.ts). */
function batchSignatureOf(rec: PaymentRecord): Signature | undefined {
  // A receipt of a batch carries its place in it (`batch`); a lone receipt's signature is its own and stays in the record.
  const h = (rec.receipt as { hybridReceipt?: { batch?: unknown; signature?: Partial<Signature> } } | undefined)?.hybridReceipt;
  const sig = h?.batch !== undefined ? h.signature : undefined;
  return typeof sig?.mldsa === 'string' && typeof sig.ed25519 === 'string' ? { mldsa: sig.mldsa, ed25519: sig.ed25519 } : undefined;
}

/** The record with its receipt's hybrid signature replaced by `sig`. */
function withSignature(rec: PaymentRecord, sig: Signature | { ref: string }): PaymentRecord {
  const receipt = rec.receipt as Record<string, unknown> & { hybridReceipt: Record<string, unknown> };
  return { ...rec, receipt: { ...receipt, hybridReceipt: { ...receipt.hybridReceipt, signature: sig } } };
}

/** The settlement ledger in LevelDB (see module comment). */
export class LevelLedger implements SettlementLedger {
  readonly kind = 'leveldb' as const;
  private readonly locks = new Set<string>();
  /** Records claimed by this process and not finished yet: their next write needs no read. */
  private readonly inflight = new Map<string, PaymentRecord>();
  private readonly volumes = new Map<string, ServiceVolume>();
  /** Records per status, both rails (for the status endpoint). */
  private readonly statusCounts: Record<PaymentStatus, number> = { claimed: 0, settled: 0, refund_pending: 0, refunded: 0, failed: 0, settle_pending: 0, expired_unsettled: 0 };
  /** Records refunded without a call (`refused`, native rail). */
  private refusedCount = 0;
  /**
   * Counts the records created by `claim`. A caller that read "no record" while the count was n
   * and claims while it is still n knows no record appeared in between: this process is the only
   * writer, and every record starts with a claim. The claim then skips its second read.
   */
  private claims = 0;
  /** Writes so far (`s:<seq>`; absent in ledgers of older versions: undefined until the witness is attached). */
  private seq: number | undefined;
  /** The witness files every write is mirrored to before it returns (x402/ledger/witness.ts). */
  private witness: LedgerWitness | undefined;
  /** Batch signatures by ref: written (no need to write again) or read (no need to read again). */
  private readonly signatures = new Map<string, Signature>();
  /** Every payment id with a record (and maybe a few more): a lookup of one it lacks reads nothing (idFilter.ts). */
  private readonly ids = new PaymentIdFilter();
  /** Writes waiting for this turn's batch (`write`). */
  private writes: { ops: Put[]; resolve: () => void; reject: (e: unknown) => void }[] = [];
  /** Reads waiting for this turn's `getMany` (`read`). */
  private reads: { key: string; resolve: (v: string | undefined) => void; reject: (e: unknown) => void }[] = [];

  private constructor(
    private readonly db: Level<string, string>,
    /** This ledger's id (16 hex characters): the seller id of the quotes (see module comment). */
    readonly sellerId: string,
  ) {}

  /** The ledger's write count (`s:<seq>`); undefined for a ledger written only by older versions. */
  sequence(): number | undefined {
    return this.seq;
  }

  /**
   * Mirrors every write from now on to `witness`, and brings it up to the ledger's count now. A
   * ledger behind `floor` (the count its witness had: a restored one, its gap recorded) continues
   * from there, so the witness never goes back and a newer copy restored later is still behind it.
   */
  async attachWitness(witness: LedgerWitness, floor = 0): Promise<void> {
    this.witness = witness;
    if (this.seq === undefined || this.seq < floor) {
      const from = this.seq;
      this.seq = Math.max(this.seq ?? 0, floor);
      await this.db.batch([{ type: 'put', key: seqKey(this.seq), value: '' }, ...(from === undefined ? [] : [{ type: 'del' as const, key: seqKey(from) }])]);
    }
    await witness.advance(this.seq);
  }

  /**
   * Writes `key` (and `extra`) and the next sequence number, then the witness (see module
   * comment). The writes asked for in one turn of the event loop go in one LevelDB batch (a group
   * commit): each resolves once that batch and the witness are written, all fail together.
   */
  private write(key: string, value: string, extra: readonly Put[] = []): Promise<void> {
    return new Promise((resolve, reject) => {
      this.writes.push({ ops: [...extra, { type: 'put', key, value }], resolve, reject });
      if (this.writes.length === 1) setImmediate(() => void this.commit());
    });
  }

  private async commit(): Promise<void> {
    const group = this.writes;
    if (group.length === 0) return; // committed by `close`
    this.writes = [];
    const from = this.seq ?? 0;
    const seq = from + group.length;
    this.seq = seq;
    try {
      // Batches may land out of order: each puts its own key, so the highest key is the count.
      await this.db.batch([...group.flatMap((w) => w.ops), { type: 'put', key: seqKey(seq), value: '' }, { type: 'del', key: seqKey(from) }]);
      await this.witness?.advance(seq);
    } catch (e) {
      for (const w of group) w.reject(e);
      return;
    }
    for (const w of group) w.resolve();
  }

  /** Reads `key`; the reads asked for in one turn of the event loop go to LevelDB as one `getMany`. */
  private read(key: string): Promise<string | undefined> {
    return new Promise((resolve, reject) => {
      this.reads.push({ key, resolve, reject });
      if (this.reads.length === 1) setImmediate(() => void this.readAll());
    });
  }

  private readAll(): Promise<void> {
    const group = this.reads;
    if (group.length === 0) return Promise.resolve(); // read by `close`
    this.reads = [];
    return this.db.getMany(group.map((r) => r.key)).then(
      (values) => group.forEach((r, i) => r.resolve(values[i])),
      (e: unknown) => group.forEach((r) => r.reject(e)),
    );
  }

  /** Writes a payment's record; a batched receipt's signature goes to its own key, once per batch (`r:` in ledger.ts). */
  private async writeRecord(rec: PaymentRecord): Promise<void> {
    const sig = batchSignatureOf(rec);
    if (!sig) return this.write(`p:${rec.id}`, JSON.stringify(rec));
    const ref = createHash('sha256').update(sig.mldsa).update(sig.ed25519).digest('hex').slice(0, 32);
    const written = this.signatures.has(ref);
    await this.write(`p:${rec.id}`, JSON.stringify(withSignature(rec, { ref })), written ? [] : [{ type: 'put', key: `r:${ref}`, value: JSON.stringify(sig) }]);
    this.remember(ref, sig);
  }

  private remember(ref: string, sig: Signature): void {
    this.signatures.delete(ref);
    this.signatures.set(ref, sig);
    if (this.signatures.size > SIGNATURES_KEPT) this.signatures.delete(this.signatures.keys().next().value!);
  }

  /** A stored record as written by `writeRecord`, its receipt's batch signature read back. */
  private async readRecord(raw: string): Promise<PaymentRecord> {
    const rec = JSON.parse(raw) as PaymentRecord;
    const ref = (rec.receipt as { hybridReceipt?: { signature?: { ref?: unknown } } } | undefined)?.hybridReceipt?.signature?.ref;
    if (typeof ref !== 'string') return rec;
    let sig = this.signatures.get(ref);
    if (!sig) {
      const stored = await this.read(`r:${ref}`);
      if (stored === undefined) throw new NodeError(LedgerErrorCode.CORRUPT, `the receipt of ${rec.id} names batch signature ${ref}, which the ledger does not hold`);
      sig = JSON.parse(stored) as Signature;
      this.remember(ref, sig);
    }
    return withSignature(rec, sig);
  }

  /** Opens (or creates) the ledger database in `dir` and loads the per-service totals. */
  static async open(dir: string): Promise<LevelLedger> {
    await mkdir(dir, { recursive: true });
    const db = new Level<string, string>(dir, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
    await db.open();
    let seller = await db.get('m:seller');
    if (seller === undefined) {
      seller = JSON.stringify({ sellerId: randomBytes(8).toString('hex'), createdAt: Date.now() });
      await db.put('m:seller', seller);
    }
    const ledger = new LevelLedger(db, (JSON.parse(seller) as { sellerId: string }).sellerId);
    for await (const key of db.keys({ gte: 's:', lt: 's;', reverse: true, limit: 1 })) ledger.seq = Number(key.slice(2));
    for await (const rec of ledger.records()) {
      ledger.ids.add(rec.id);
      if (rec.status === 'settled') ledger.count(rec);
      ledger.tally(undefined, rec.status, rec.refused);
    }
    return ledger;
  }

  private tally(from: PaymentStatus | undefined, to: PaymentStatus, refused?: boolean): void {
    if (from !== undefined) this.statusCounts[from]--;
    this.statusCounts[to]++;
    if (from === undefined && refused) this.refusedCount++;
  }

  /** How many records are in each status, and how many were refused (refunded without a call). */
  counts(): Readonly<Record<PaymentStatus, number>> & { readonly refused: number } {
    return { ...this.statusCounts, refused: this.refusedCount };
  }

  /** One process writes this database: the totals are always current. */
  async refreshTotals(): Promise<void> {}

  /** A local database: available while open. */
  available(): boolean {
    return true;
  }

  private count(rec: PaymentRecord): void {
    const v = this.volumes.get(rec.serviceId) ?? { calls: 0, callsUsdc: 0, volumeBase: 0n, volumeUsdcAtomic: 0n };
    if (rec.rail === 'native') {
      v.calls++;
      v.volumeBase += BigInt(rec.amount);
    } else {
      v.callsUsdc++;
      v.volumeUsdcAtomic += BigInt(rec.amount);
    }
    this.volumes.set(rec.serviceId, v);
  }

  /** The record of a payment, if any. */
  async get(id: string): Promise<PaymentRecord | undefined> {
    if (!this.ids.mightHave(id)) return undefined;
    const raw = await this.read(`p:${id}`);
    return raw === undefined ? undefined : this.readRecord(raw);
  }

  /** Which of `ids` have a record, in one read (the payment watcher checks a whole block's invokes at once). */
  async hasMany(ids: readonly string[]): Promise<boolean[]> {
    const maybe = ids.filter((id) => this.ids.mightHave(id));
    if (maybe.length === 0) return ids.map(() => false);
    const raws = await this.db.getMany(maybe.map((id) => `p:${id}`));
    const found = new Set(maybe.filter((_, i) => raws[i] !== undefined));
    return ids.map((id) => found.has(id));
  }

  /**
   * The record of a payment, with a token to pass to `claim` when there is none: the claim then
   * needs no second read unless another payment was claimed in between.
   */
  async lookup(id: string): Promise<{ record: PaymentRecord | undefined; absentToken: number }> {
    const absentToken = this.claims;
    return { record: await this.get(id), absentToken };
  }

  /**
   * Claims a payment for one execution. Returns `{claimed: true}` to exactly one caller per id;
   * every other caller (concurrent or later) gets `{claimed: false}` with the existing record.
   * `absentToken`: from a `lookup` that found no record.
   */
  async claim(rec: Omit<PaymentRecord, 'status' | 'claimedAt' | 'updatedAt'>, now = Date.now(), absentToken?: number): Promise<ClaimResult> {
    return this.create({ ...rec, status: 'claimed', claimedAt: now, updatedAt: now }, absentToken);
  }

  /**
   * Claims a payment the node will not honour straight into `refund_pending` (`refused`), under
   * the same lock as `claim`: exactly one of a settle's claim and this one wins. The caller then
   * sends the refund (RefundManager.refund); a crash in between leaves a `refund_pending` record,
   * which the refund manager finishes at start.
   */
  async claimRefusal(rec: Omit<PaymentRecord, 'status' | 'claimedAt' | 'updatedAt' | 'refused' | 'error'>, error: { code: string; message: string }, now = Date.now()): Promise<ClaimResult> {
    return this.create({ ...rec, status: 'refund_pending', refused: true, error, claimedAt: now, updatedAt: now });
  }

  private async create(record: PaymentRecord, absentToken?: number): Promise<ClaimResult> {
    if (this.locks.has(record.id)) {
      const existing = await this.get(record.id);
      return { claimed: false, record: existing ?? { ...record, status: 'claimed' } };
    }
    this.locks.add(record.id);
    try {
      const existing = absentToken === this.claims ? undefined : await this.get(record.id);
      if (existing) return { claimed: false, record: existing };
      this.ids.add(record.id); // before the write: the filter never lacks an id the database has
      await this.writeRecord(record);
      // Counted once the record is readable: a lookup that began before this point carries an
      // older token (and reads again), one that begins after it finds the record.
      this.claims++;
      this.tally(undefined, record.status, record.refused);
      if (record.status === 'claimed') this.inflight.set(record.id, record);
      return { claimed: true, record };
    } finally {
      this.locks.delete(record.id);
    }
  }

  private async update(id: string, from: readonly PaymentStatus[], to: string, patch: Partial<PaymentRecord>, now = Date.now()): Promise<PaymentRecord> {
    const cur = this.inflight.get(id) ?? (await this.get(id));
    if (!cur || !from.includes(cur.status)) throw transitionConflict(id, cur?.status, to);
    const next = { ...cur, ...patch, updatedAt: now } as PaymentRecord;
    await this.writeRecord(next);
    this.tally(cur.status, next.status);
    if (next.status === 'claimed') this.inflight.set(id, next);
    else this.inflight.delete(id);
    return next;
  }

  /** claimed → settled, storing the result and receipt. */
  async settle(id: string, result: unknown, receipt: Record<string, unknown>): Promise<PaymentRecord> {
    const rec = await this.update(id, TRANSITION_FROM.settle, 'settle', { status: 'settled', result, receipt });
    this.count(rec);
    return rec;
  }

  /** claimed → refund_pending; `refund`: the refund tx written ahead of its submission, or none in flight and why. */
  async refundPending(id: string, error: { code: string; message: string }, refund?: RefundTxWrite): Promise<PaymentRecord> {
    return this.update(id, TRANSITION_FROM.refundPending, 'refundPending', { status: 'refund_pending', error, ...refundTxPatch(refund) });
  }

  /** claimed → failed (USDC rail: not charged, no result; the authorization stays used). */
  async fail(id: string, error: { code: string; message: string }): Promise<PaymentRecord> {
    return this.update(id, TRANSITION_FROM.fail, 'fail', { status: 'failed', error });
  }

  /** claimed → settle_pending (USDC): the result is kept until Base says whether the authorization was used. */
  async settlePending(id: string, result: unknown, reconcile: UsdcReconcileState, error: { code: string; message: string }): Promise<PaymentRecord> {
    return this.update(id, TRANSITION_FROM.settlePending, 'settlePending', { status: 'settle_pending', result, reconcile, error });
  }

  /** settle_pending: the reconciler's progress (first block searched, checks made). */
  async reconcileProgress(id: string, reconcile: UsdcReconcileState): Promise<PaymentRecord> {
    return this.update(id, TRANSITION_FROM.reconcileProgress, 'reconcileProgress', { reconcile });
  }

  /** settle_pending → settled with the receipt found on chain (the stored result is kept). */
  async settleReconciled(id: string, receipt: Record<string, unknown>): Promise<PaymentRecord> {
    const rec = await this.update(id, TRANSITION_FROM.settleReconciled, 'settleReconciled', { status: 'settled', receipt, error: undefined });
    this.count(rec);
    return rec;
  }

  /** settle_pending → expired_unsettled: never used before validBefore; the result is dropped, nothing charged. */
  async expireUnsettled(id: string, error: { code: string; message: string }): Promise<PaymentRecord> {
    return this.update(id, TRANSITION_FROM.expireUnsettled, 'expireUnsettled', { status: 'expired_unsettled', result: undefined, error });
  }

  /** refund_pending → refunded; the refund's bytes are no longer needed (a reorg reopening it takes them from the block). */
  async refunded(id: string, refundTxId: string): Promise<PaymentRecord> {
    return this.update(id, TRANSITION_FROM.refunded, 'refunded', { status: 'refunded', refundTxId, refundTx: undefined });
  }

  /** Every record (a full scan: for start-up recovery and audits). */
  async *records(): AsyncGenerator<PaymentRecord> {
    for await (const [, v] of this.db.iterator({ gte: 'p:', lt: 'p;' })) yield await this.readRecord(v);
  }

  /** A watcher's mark (see module comment), undefined when never written. */
  async getMark<T>(name: string): Promise<T | undefined> {
    const raw = await this.db.get(`m:${name}`);
    return raw === undefined ? undefined : (JSON.parse(raw) as T);
  }

  /** Writes a watcher's mark. */
  async putMark(name: string, value: unknown): Promise<void> {
    await this.write(`m:${name}`, JSON.stringify(value));
  }

  /** The mark `name`, written as `value` first when there is none (this process is the ledger's only writer). */
  async initMark<T>(name: string, value: T): Promise<T> {
    const stored = await this.getMark<T>(name);
    if (stored !== undefined) return stored;
    await this.putMark(name, value);
    return value;
  }

  /** Settled totals of one service. */
  volume(serviceId: string): ServiceVolume {
    return this.volumes.get(serviceId) ?? { calls: 0, callsUsdc: 0, volumeBase: 0n, volumeUsdcAtomic: 0n };
  }

  async close(): Promise<void> {
    // What was asked before close goes to the database first.
    await Promise.all([this.commit(), this.readAll()]);
    await this.db.close();
  }
}
