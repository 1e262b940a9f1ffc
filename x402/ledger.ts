/**
 * The settlement ledger: one record per payment (native: the agent_invoke tx id; USDC: the
 * authorization), in its own LevelDB database. A native payment moves
 * `claimed → settled` or `claimed → refund_pending → refunded`.
 *
 * Claiming is atomic within the process: `claim` checks and writes under an in-memory lock, so
 * however many requests race on one payment, exactly one gets the claim and executes. The
 * stored result and receipt answer a repeated settle with the same payment and request.
 *
 * Keys:  p:<payment id>  → JSON record (below)
 */
import { mkdir } from 'node:fs/promises';
import { Level } from 'level';

/**
 * Where a payment is in its life. `failed` (USDC rail): the authorization was refused by the
 * facilitator, its service failed or its settlement did not go through; nothing was charged and
 * the authorization stays used (never accepted again).
 */
export type PaymentStatus = 'claimed' | 'settled' | 'refund_pending' | 'refunded' | 'failed';

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
  /**
   * Counts the records created by `claim`. A caller that read "no record" while the count was n
   * and claims while it is still n knows no record appeared in between: this process is the only
   * writer, and every record starts with a claim. The claim then skips its second read.
   */
  private claims = 0;

  private constructor(private readonly db: Level<string, string>) {}

  /** Opens (or creates) the ledger database in `dir` and loads the per-service totals. */
  static async open(dir: string): Promise<SettlementLedger> {
    await mkdir(dir, { recursive: true });
    const db = new Level<string, string>(dir, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
    await db.open();
    const ledger = new SettlementLedger(db);
    for await (const rec of ledger.records()) if (rec.status === 'settled') ledger.count(rec);
    return ledger;
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
    if (this.locks.has(rec.id)) {
      const existing = await this.get(rec.id);
      return { claimed: false, record: existing ?? { ...rec, status: 'claimed', claimedAt: now, updatedAt: now } };
    }
    this.locks.add(rec.id);
    try {
      const existing = absentToken === this.claims ? undefined : await this.get(rec.id);
      if (existing) return { claimed: false, record: existing };
      const record: PaymentRecord = { ...rec, status: 'claimed', claimedAt: now, updatedAt: now };
      await this.db.put(`p:${rec.id}`, JSON.stringify(record));
      // Counted once the record is readable: a lookup that began before this point carries an
      // older token (and reads again), one that begins after it finds the record.
      this.claims++;
      this.inflight.set(rec.id, record);
      return { claimed: true, record };
    } finally {
      this.locks.delete(rec.id);
    }
  }

  private async update(id: string, patch: Partial<PaymentRecord>, now = Date.now()): Promise<PaymentRecord> {
    const cur = this.inflight.get(id) ?? (await this.get(id));
    if (!cur) throw new Error(`ledger has no payment ${id}`);
    const next = { ...cur, ...patch, updatedAt: now } as PaymentRecord;
    await this.db.put(`p:${id}`, JSON.stringify(next));
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

  /** claimed → refund_pending (or a new refund tx id for a pending refund). */
  async refundPending(id: string, error: { code: string; message: string }, refundTxId?: string): Promise<PaymentRecord> {
    return this.update(id, { status: 'refund_pending', error, ...(refundTxId ? { refundTxId } : {}) });
  }

  /** claimed → failed (USDC rail: not charged, no result; the authorization stays used). */
  async fail(id: string, error: { code: string; message: string }): Promise<PaymentRecord> {
    return this.update(id, { status: 'failed', error });
  }

  /** refund_pending → refunded. */
  async refunded(id: string, refundTxId: string): Promise<PaymentRecord> {
    return this.update(id, { status: 'refunded', refundTxId });
  }

  /** Every record (a full scan: for start-up recovery and audits). */
  async *records(): AsyncGenerator<PaymentRecord> {
    for await (const [, v] of this.db.iterator({ gte: 'p:', lt: 'p;' })) yield JSON.parse(v) as PaymentRecord;
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
