/**
 * The settlement ledger: one record per payment (native: the agent_invoke tx id; USDC: the
 * authorization), in its own LevelDB database. A native payment moves
 * `claimed → settled` or `claimed → refund_pending → refunded`.
 *
 * Claiming is atomic within the process: `claim` checks and writes under an in-memory lock, so
 * however many requests race on one payment, exactly one gets the claim and executes. The
 * stored result and receipt answer a repeated settle with the same payment and request.
 *
 * A payment the node will never honour (x402/unhonored.ts: wrong amount, unknown or unavailable
 * service, never settled within the refund window) is claimed straight into `refund_pending`
 * with `refused: true` by `claimRefusal`, under the same lock as `claim`: a settle racing the
 * watcher either executes or is refunded, never both.
 *
 * Keys:  p:<payment id>  → JSON record (below)
 *        m:<name>        → JSON marks of the payment watchers (x402/unhonored.ts: its scan height,
 *                          the ledger's creation height and any gap of chain it never judged)
 *        m:seller        → {sellerId, createdAt}: this ledger's random id, written when it is
 *                          created; quotes name it and native payments commit to it
 *                          (x402/wire.ts requestCommitment), so a payment quoted against one
 *                          ledger is never honoured by another (two nodes sharing a payee)
 */
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { Level } from 'level';

/**
 * Where a payment is in its life. `failed` (USDC rail): the authorization was refused by the
 * facilitator, its service failed or its settlement did not go through; nothing was charged and
 * the authorization stays used (never accepted again).
 */
export type PaymentStatus = 'claimed' | 'settled' | 'refund_pending' | 'refunded' | 'failed' | 'settle_pending' | 'expired_unsettled';

/**
 * A USDC payment whose facilitator `/settle` timed out or failed ambiguously (`settle_pending`):
 * the service's result is stored, and the reconciler (x402/usdcReconcile.ts) reads Base until
 * the authorization is used (→ `settled`, receipt with the Transfer's tx hash) or its
 * `validBefore` has passed unused (→ `expired_unsettled`, nothing charged).
 */
export interface UsdcReconcileState {
  /** EIP-3009 authorizer (checksummed) and nonce (0x, 32 bytes). */
  readonly authorizer: string;
  readonly nonce: string;
  /** Unix seconds; the authorization can no longer be used in a block at or after it. */
  readonly validBefore: number;
  /** The receipt to complete with the tx hash once the authorization is found used. */
  readonly receipt: Record<string, unknown>;
  /** The x402 network name of the payment (`base` / `eip155:8453`), for the payment-response header. */
  readonly network: string;
  /** First block searched for the AuthorizationUsed log (set at the first check). */
  readonly fromBlock?: string;
  /** Checks made so far. */
  readonly checks?: number;
}

/** The payment rail of a record. */
export type Rail = 'native' | 'usdc';

/** One ledger record (JSON on disk; amounts as base-unit strings). */
export interface PaymentRecord {
  readonly id: string;
  readonly rail: Rail;
  readonly status: PaymentStatus;
  readonly serviceId: string;
  /** Hex sha256 of the request string the payment was claimed for. */
  readonly requestHash: string;
  /** Payer: bech32m address (native) or 0x address (USDC). */
  readonly caller: string;
  /** Base units (native) or USDC atomic units. */
  readonly amount: string;
  readonly claimedAt: number;
  readonly updatedAt: number;
  /** The service's output (settled). */
  readonly result?: unknown;
  /** The receipt returned to the caller (settled). */
  readonly receipt?: Record<string, unknown>;
  /** Why execution failed (refund_pending, refunded). */
  readonly error?: { code: string; message: string };
  /** Hex id of the refund transaction (refund_pending, refunded). */
  readonly refundTxId?: string;
  /** refund_pending without a refund tx: why the refund could not be sent yet (the payee's balance, …). */
  readonly refundStuck?: string;
  /**
   * Refunded without a call: the node will not honour this payment (`error.code` says why:
   * amount_mismatch, unknown_service, service_unavailable, settle_window_expired). A settle of
   * it answers `payment_refunded`, whatever service and request it names.
   */
  readonly refused?: true;
  /** USDC rail, settle_pending / expired_unsettled: what the reconciler needs (see UsdcReconcileState). */
  readonly reconcile?: UsdcReconcileState;
}

/** Totals of settled calls per service, for the catalog's proven* fields. */
export interface ServiceVolume {
  calls: number;
  callsUsdc: number;
  /** Base units. */
  volumeBase: bigint;
  /** USDC atomic units. */
  volumeUsdcAtomic: bigint;
}

/** Result of `claim`. */
export type ClaimResult = { readonly claimed: true; readonly record: PaymentRecord } | { readonly claimed: false; readonly record: PaymentRecord };

/** The settlement ledger (see module comment). */
export class SettlementLedger {
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

  private constructor(
    private readonly db: Level<string, string>,
    /** This ledger's id (16 hex characters): the seller id of the quotes (see module comment). */
    readonly sellerId: string,
  ) {}

  /** Opens (or creates) the ledger database in `dir` and loads the per-service totals. */
  static async open(dir: string): Promise<SettlementLedger> {
    await mkdir(dir, { recursive: true });
    const db = new Level<string, string>(dir, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
    await db.open();
    let seller = await db.get('m:seller');
    if (seller === undefined) {
      seller = JSON.stringify({ sellerId: randomBytes(8).toString('hex'), createdAt: Date.now() });
      await db.put('m:seller', seller);
    }
    const ledger = new SettlementLedger(db, (JSON.parse(seller) as { sellerId: string }).sellerId);
    for await (const rec of ledger.records()) {
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
    const raw = await this.db.get(`p:${id}`);
    return raw === undefined ? undefined : (JSON.parse(raw) as PaymentRecord);
  }

  /** Which of `ids` have a record, in one read (the payment watcher checks a whole block's invokes at once). */
  async hasMany(ids: readonly string[]): Promise<boolean[]> {
    if (ids.length === 0) return [];
    const raws = await this.db.getMany(ids.map((id) => `p:${id}`));
    return raws.map((raw) => raw !== undefined);
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
      await this.db.put(`p:${record.id}`, JSON.stringify(record));
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

  private async update(id: string, patch: Partial<PaymentRecord>, now = Date.now()): Promise<PaymentRecord> {
    const cur = this.inflight.get(id) ?? (await this.get(id));
    if (!cur) throw new Error(`ledger has no payment ${id}`);
    const next = { ...cur, ...patch, updatedAt: now } as PaymentRecord;
    await this.db.put(`p:${id}`, JSON.stringify(next));
    this.tally(cur.status, next.status);
    if (next.status === 'claimed') this.inflight.set(id, next);
    else this.inflight.delete(id);
    return next;
  }

  /** claimed → settled, storing the result and receipt. */
  async settle(id: string, result: unknown, receipt: Record<string, unknown>): Promise<PaymentRecord> {
    const rec = await this.update(id, { status: 'settled', result, receipt });
    this.count(rec);
    return rec;
  }

  /**
   * claimed → refund_pending (or a new refund tx id for a pending refund; '' for none, with
   * `stuck`: why it could not be sent).
   */
  async refundPending(id: string, error: { code: string; message: string }, refundTxId?: string, stuck?: string): Promise<PaymentRecord> {
    // '' forgets a refund tx id that never left (see RefundManager.send).
    return this.update(id, { status: 'refund_pending', error, ...(refundTxId ? { refundTxId, refundStuck: undefined } : refundTxId === '' ? { refundTxId: undefined, refundStuck: stuck } : {}) });
  }

  /** claimed → failed (USDC rail: not charged, no result; the authorization stays used). */
  async fail(id: string, error: { code: string; message: string }): Promise<PaymentRecord> {
    return this.update(id, { status: 'failed', error });
  }

  /** claimed → settle_pending (USDC): the result is kept until Base says whether the authorization was used. */
  async settlePending(id: string, result: unknown, reconcile: UsdcReconcileState, error: { code: string; message: string }): Promise<PaymentRecord> {
    return this.update(id, { status: 'settle_pending', result, reconcile, error });
  }

  /** settle_pending: the reconciler's progress (first block searched, checks made). */
  async reconcileProgress(id: string, reconcile: UsdcReconcileState): Promise<PaymentRecord> {
    return this.update(id, { reconcile });
  }

  /** settle_pending → settled with the receipt found on chain (the stored result is kept). */
  async settleReconciled(id: string, receipt: Record<string, unknown>): Promise<PaymentRecord> {
    const rec = await this.update(id, { status: 'settled', receipt, error: undefined });
    this.count(rec);
    return rec;
  }

  /** settle_pending → expired_unsettled: never used before validBefore; the result is dropped, nothing charged. */
  async expireUnsettled(id: string, error: { code: string; message: string }): Promise<PaymentRecord> {
    return this.update(id, { status: 'expired_unsettled', result: undefined, error });
  }

  /** refund_pending → refunded. */
  async refunded(id: string, refundTxId: string): Promise<PaymentRecord> {
    return this.update(id, { status: 'refunded', refundTxId });
  }

  /** Every record (a full scan: for start-up recovery and audits). */
  async *records(): AsyncGenerator<PaymentRecord> {
    for await (const [, v] of this.db.iterator({ gte: 'p:', lt: 'p;' })) yield JSON.parse(v) as PaymentRecord;
  }

  /** A watcher's mark (see module comment), undefined when never written. */
  async getMark<T>(name: string): Promise<T | undefined> {
    const raw = await this.db.get(`m:${name}`);
    return raw === undefined ? undefined : (JSON.parse(raw) as T);
  }

  /** Writes a watcher's mark. */
  async putMark(name: string, value: unknown): Promise<void> {
    await this.db.put(`m:${name}`, JSON.stringify(value));
  }

  /** Settled totals of one service. */
  volume(serviceId: string): ServiceVolume {
    return this.volumes.get(serviceId) ?? { calls: 0, callsUsdc: 0, volumeBase: 0n, volumeUsdcAtomic: 0n };
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}

/** Opens the ledger (see `SettlementLedger.open`). */
export function openLedger(dir: string): Promise<SettlementLedger> {
  return SettlementLedger.open(dir);
}
