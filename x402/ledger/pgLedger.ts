/**
 * The settlement ledger in PostgreSQL (`--ledger postgres://…`): the same state machine as the
 * LevelDB ledger (x402/ledger/ledger.ts, one interface, one test suite), shared by every node of a
 * fleet selling under one payee.
 *
 * Schema (versioned migrations, applied at start under an advisory lock so nodes starting
 * together migrate once; a database migrated by a newer node is refused; the owner role migrates,
 * the nodes may run under a role with row privileges only, checked at start: x402/ledger/pgPrivileges.ts):
 *
 *   ledger_schema (version, description, applied_at)   the migrations applied
 *   ledger_marks  (name, value json, updated_at)       the watchers' marks; `seller` holds the
 *                                                      fleet's one seller id, inserted once by the
 *                                                      first node (ON CONFLICT DO NOTHING); so is
 *                                                      `auth-secret`, the key of the fleet's HTTP
 *                                                      Payment and sign-in challenges
 *   fleet_nodes   (node_id, url, version, network,     the fleet's heartbeats (migration 2,
 *                  tip_height, tip_hash, lease_holder, x402/fleet/fleet.ts)
 *                  started_at, seen_at, stopped_at)
 *   provider_payouts (payment_id, status, entry,       the payouts provider calls owe (migration 3,
 *                  created_at, updated_at)             x402/providers/pgPayoutStore.ts)
 *   inbox_jobs, inbox_agents, inbox_stats,             the fleet's provider inbox (migration 4,
 *   inbox_signatures                                   x402/providers/pgInbox.ts)
 *   payee_txs     (payee, nonce, purpose, tx_id, raw,  the payee's nonces, each taken by one
 *                  signed_by, signed_at, replaced)     refund or payout with its signed bytes
 *                                                      (migration 6, x402/native/pgPayeeTxLog.ts)
 *   payments      (id text COLLATE "C" primary key,    one row per payment; the columns the
 *                  rail, status, service_id,           queries need, the result and receipt as
 *                  request_hash, caller, amount,       `json` (kept byte for byte), the signed
 *                  claimed_at, updated_at, refused,    refund written ahead of its submission as
 *                  claimed_by, result, receipt, doc,   `bytea` (migration 5, the record's
 *                  refund_tx)                          `refundTx`), every other field of the
 *                                                      record in `doc` (jsonb)
 *
 * Once-only rules are the database's: a claim is `INSERT … ON CONFLICT (id) DO NOTHING`, which
 * exactly one node wins; every transition is one `UPDATE … WHERE id = $1 AND status = ANY(<the
 * statuses it may leave>)`, so the result is written by the statement that ends the claim and a
 * transition that lost a race writes nothing (`ledger_conflict`).
 *
 * Unreachable database: an operation fails with `ledger_unavailable` (NodeError) and `available()`
 * turns false (a check every 2 s finds it on an idle node too) until a probe (every second) gets an answer; nothing is half-written, each write
 * being a single statement. The totals (`volume`, `counts`) are computed by the database, since
 * other nodes write too, and served from memory for up to `totalsTtlMs` (refreshed in the
 * background when read after that).
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import pg from 'pg';
import { NodeError } from '../../consensus/errors.js';
import {
  LedgerErrorCode,
  refundTxPatch,
  TRANSITION_FROM,
  transitionConflict,
  type ClaimResult,
  type LedgerOptions,
  type PaymentRecord,
  type PaymentStatus,
  type RefundTxWrite,
  type ServiceVolume,
  type SettlementLedger,
  type UsdcReconcileState,
} from './ledger.js';
import { applyMigrations, checkRuntimePrivileges, runtimeGrantStatements, type LedgerMigration } from './pgPrivileges.js';

/** The schema's migrations, in order; a migration is never edited once released, only followed by a new one. */
export const MIGRATIONS: readonly LedgerMigration[] = [
  {
    version: 1,
    description: 'payments and marks',
    sql: `
      CREATE TABLE ledger_marks (
        name text COLLATE "C" PRIMARY KEY,
        value json NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE payments (
        id text COLLATE "C" PRIMARY KEY,
        rail text NOT NULL CHECK (rail IN ('native', 'usdc')),
        status text NOT NULL CHECK (status IN ('claimed', 'settled', 'refund_pending', 'refunded', 'failed', 'settle_pending', 'expired_unsettled')),
        service_id text NOT NULL,
        request_hash text NOT NULL,
        caller text NOT NULL,
        amount numeric(78, 0) NOT NULL CHECK (amount >= 0),
        claimed_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        refused boolean NOT NULL DEFAULT false,
        claimed_by text,
        result json,
        receipt json,
        doc jsonb NOT NULL DEFAULT '{}'
      );
      CREATE INDEX payments_open ON payments (status) WHERE status IN ('claimed', 'refund_pending', 'settle_pending');
      CREATE INDEX payments_settled ON payments (service_id, rail) WHERE status = 'settled';
    `,
  },
  {
    version: 2,
    description: 'fleet heartbeats',
    // One row per node of the fleet (x402/fleet/fleet.ts): rewritten every few seconds, `seen_at` by
    // the database's clock so nodes' clocks do not matter; a row older than the timeout is a node gone.
    sql: `
      CREATE TABLE fleet_nodes (
        node_id text COLLATE "C" PRIMARY KEY,
        url text,
        version text NOT NULL,
        network text NOT NULL,
        tip_height bigint NOT NULL,
        tip_hash text NOT NULL,
        lease_holder boolean NOT NULL DEFAULT false,
        started_at timestamptz NOT NULL,
        seen_at timestamptz NOT NULL DEFAULT now(),
        stopped_at timestamptz
      );
    `,
  },
  {
    version: 3,
    description: 'provider payouts',
    // The payouts provider calls owe (x402/providers/pgPayoutStore.ts): any node of the fleet writes one, the
    // signer lease's holder sends it; shared so a new holder neither forgets nor pays one twice.
    sql: `
      CREATE TABLE provider_payouts (
        payment_id text COLLATE "C" PRIMARY KEY,
        status text NOT NULL CHECK (status IN ('owed', 'submitted', 'paid', 'cancelled')),
        entry jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX provider_payouts_open ON provider_payouts (created_at) WHERE status IN ('owed', 'submitted');
    `,
  },
  {
    version: 4,
    description: 'provider inbox',
    // The provider inbox of a fleet (x402/providers/pgInbox.ts): jobs any node queues and any node hands out
    // and answers, the agents' last polls, the per-service stats and the signatures seen (replays).
    // Times are Unix ms by the nodes' clocks, as payments.claimed_at.
    sql: `
      CREATE TABLE inbox_jobs (
        id text COLLATE "C" PRIMARY KEY,
        service_id text NOT NULL,
        agent text COLLATE "C" NOT NULL,
        node_id text NOT NULL,
        status text NOT NULL CHECK (status IN ('queued', 'taken', 'done', 'failed', 'expired')),
        request text,
        input json,
        created_at bigint NOT NULL,
        deadline bigint NOT NULL,
        taken_at bigint,
        answered_at bigint,
        result json,
        error jsonb
      );
      CREATE INDEX inbox_jobs_queued ON inbox_jobs (agent, created_at) WHERE status = 'queued';
      CREATE INDEX inbox_jobs_open ON inbox_jobs (node_id) WHERE status IN ('queued', 'taken');
      CREATE INDEX inbox_jobs_created ON inbox_jobs (created_at);
      CREATE TABLE inbox_agents (
        agent text COLLATE "C" PRIMARY KEY,
        last_poll bigint NOT NULL DEFAULT 0,
        offline_at bigint NOT NULL DEFAULT 0
      );
      CREATE TABLE inbox_stats (
        service_id text COLLATE "C" PRIMARY KEY,
        calls bigint NOT NULL DEFAULT 0,
        failures bigint NOT NULL DEFAULT 0,
        latencies bigint[] NOT NULL DEFAULT '{}'
      );
      CREATE TABLE inbox_signatures (
        key text COLLATE "C" PRIMARY KEY,
        ts bigint NOT NULL
      );
      CREATE INDEX inbox_signatures_ts ON inbox_signatures (ts);
    `,
  },
  {
    version: 5,
    description: 'refund transactions written ahead',
    // The signed refund's bytes (PaymentRecord.refundTx, x402/native/refunds.ts), written with its id
    // before it is submitted: a new lease holder re-sends that very transaction instead of signing
    // a second one. A column of its own: ~7 kB of binary, out of the jsonb `doc`; NULL once mined.
    sql: `
      ALTER TABLE payments ADD COLUMN refund_tx bytea;
    `,
  },
  {
    version: 6,
    description: 'payee nonce slots',
    // One row per nonce of the payee key a payee transaction (refund, provider payout) took, with
    // its signed bytes, written before it leaves the signer (x402/native/pgPayeeTxLog.ts): the primary key
    // gives a nonce to one purpose, whichever node of the fleet signs.
    sql: `
      CREATE TABLE payee_txs (
        payee text COLLATE "C" NOT NULL,
        nonce bigint NOT NULL,
        purpose text COLLATE "C" NOT NULL,
        tx_id text COLLATE "C" NOT NULL,
        raw bytea NOT NULL,
        signed_by text,
        signed_at timestamptz NOT NULL DEFAULT now(),
        replaced text[] NOT NULL DEFAULT '{}',
        PRIMARY KEY (payee, nonce)
      );
      CREATE INDEX payee_txs_purpose ON payee_txs (payee, purpose, nonce);
    `,
  },
];

/** Key of the advisory lock the migrations run under (any constant shared by every node). */
const MIGRATION_LOCK = 0x6e617469; // 'nati'
/** Records read per page by `records()`. */
const PAGE = 500;
/** How often an unavailable database is probed, ms. */
const PROBE_MS = 1000;
/** How often an available database is checked, ms. */
const HEALTH_MS = 2000;
const STATUSES: readonly PaymentStatus[] = ['claimed', 'settled', 'refund_pending', 'refunded', 'failed', 'settle_pending', 'expired_unsettled'];
/** Record fields kept in their own column; the rest go to `doc`. */
const COLUMN_FIELDS = new Set(['id', 'rail', 'status', 'serviceId', 'requestHash', 'caller', 'amount', 'claimedAt', 'updatedAt', 'refused', 'result', 'receipt', 'refundTx']);
const SELECT = `id, rail, status, service_id, request_hash, caller, amount::text AS amount, claimed_at::text AS claimed_at, updated_at::text AS updated_at, refused, result::text AS result, receipt::text AS receipt, encode(refund_tx, 'hex') AS refund_tx, doc::text AS doc`;

interface Row {
  id: string;
  rail: 'native' | 'usdc';
  status: PaymentStatus;
  service_id: string;
  request_hash: string;
  caller: string;
  amount: string;
  claimed_at: string;
  updated_at: string;
  refused: boolean;
  result: string | null;
  receipt: string | null;
  refund_tx: string | null;
  doc: string;
}

function recordOf(r: Row): PaymentRecord {
  return {
    id: r.id,
    rail: r.rail,
    status: r.status,
    serviceId: r.service_id,
    requestHash: r.request_hash,
    caller: r.caller,
    amount: r.amount,
    claimedAt: Number(r.claimed_at),
    updatedAt: Number(r.updated_at),
    ...(r.refused ? { refused: true as const } : {}),
    ...(r.result !== null ? { result: JSON.parse(r.result) as unknown } : {}),
    ...(r.receipt !== null ? { receipt: JSON.parse(r.receipt) as Record<string, unknown> } : {}),
    ...(r.refund_tx !== null ? { refundTx: r.refund_tx } : {}),
    ...(JSON.parse(r.doc) as Record<string, unknown>),
  } as PaymentRecord;
}

/** The fields of a record that live in `doc` (undefined ones dropped, as JSON does). */
function docOf(rec: PaymentRecord): Record<string, unknown> {
  const doc: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rec)) if (!COLUMN_FIELDS.has(k) && v !== undefined) doc[k] = v;
  return doc;
}

/** `JSON.stringify` for a json column: undefined is SQL NULL (the field is absent). */
const jsonOrNull = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));

/** A pool on the ledger's database; an idle connection cut by the server must not crash the process (the next query reports it). */
function newPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 5000, idleTimeoutMillis: 30_000, query_timeout: 15_000, application_name: 'native-node' });
  pool.on('error', () => undefined);
  return pool;
}

/** SQLSTATE classes that mean "the database is not there" rather than "this statement is wrong". */
export function isUnavailable(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code.startsWith('08') || code.startsWith('53') || code.startsWith('57P');
  // No SQLSTATE: a socket error (ECONNREFUSED, ECONNRESET, …), a connect or query timeout, a connection ended.
  return true;
}

/** The PostgreSQL ledger (see module comment). */
export class PgLedger implements SettlementLedger {
  readonly kind = 'postgres' as const;
  private up = true;
  private lastError: string | undefined;
  private probe: NodeJS.Timeout | undefined;
  /** Checks the connection while nothing else does, so an idle node notices an outage before its next paid call. */
  private readonly health: NodeJS.Timeout;
  private closed = false;
  private statusCounts: Record<PaymentStatus, number> = { claimed: 0, settled: 0, refund_pending: 0, refunded: 0, failed: 0, settle_pending: 0, expired_unsettled: 0 };
  private refusedCount = 0;
  private volumes = new Map<string, ServiceVolume>();
  private totalsAt = 0;
  /** Status-changing writes of this node: one during a refresh leaves the totals stale. */
  private writes = 0;
  private refreshing: Promise<void> | undefined;
  private readonly totalsTtlMs: number;

  private constructor(
    private readonly pool: pg.Pool,
    readonly sellerId: string,
    /** This node's name in the fleet (claims record it in `claimed_by`). */
    readonly nodeId: string,
    opts: LedgerOptions,
  ) {
    this.totalsTtlMs = opts.totalsTtlMs ?? 2000;
    this.health = setInterval(() => {
      if (this.up && !this.closed) this.q('SELECT 1').catch(() => undefined);
    }, HEALTH_MS);
    this.health.unref();
  }

  /** Connects, applies the missing migrations, reads (or creates, once per database) the seller id and loads the totals. */
  static async open(url: string, opts: LedgerOptions = {}): Promise<PgLedger> {
    const pool = newPool(url);
    try {
      await applyMigrations(pool, MIGRATIONS, MIGRATION_LOCK);
      // Before anything is written: a role without a grant the node needs is a start-up error, not a failing sweep later.
      await checkRuntimePrivileges((text, values) => pool.query(text, values));
      const seller = JSON.stringify({ sellerId: randomBytes(8).toString('hex'), createdAt: Date.now() });
      await pool.query(`INSERT INTO ledger_marks (name, value) VALUES ('seller', $1::json) ON CONFLICT (name) DO NOTHING`, [seller]);
      const { rows } = await pool.query<{ value: string }>(`SELECT value::text AS value FROM ledger_marks WHERE name = 'seller'`);
      const sellerId = (JSON.parse(rows[0]!.value) as { sellerId: string }).sellerId;
      const ledger = new PgLedger(pool, sellerId, opts.nodeId ?? `${hostname()}:${process.pid}`, opts);
      await ledger.refreshTotals();
      return ledger;
    } catch (e) {
      await pool.end().catch(() => undefined);
      if (e instanceof NodeError) throw e;
      if (isUnavailable(e)) throw new NodeError(LedgerErrorCode.UNAVAILABLE, `the ledger database cannot be reached: ${(e as Error).message}`);
      throw e;
    }
  }

  /**
   * Applies the missing migrations (the owner role's job, x402/ledger/pgPrivileges.ts) and, with
   * `grantTo`, grants that role what a running node needs; writes no payment data.
   */
  static async migrate(url: string, opts: { grantTo?: string } = {}): Promise<{ from: number; to: number; grants: string[] }> {
    const pool = newPool(url);
    try {
      const done = await applyMigrations(pool, MIGRATIONS, MIGRATION_LOCK);
      const schema = (await pool.query<{ s: string }>('SELECT current_schema() AS s')).rows[0]!.s;
      const grants = opts.grantTo === undefined ? [] : runtimeGrantStatements(opts.grantTo, schema);
      for (const g of grants) await pool.query(g);
      return { ...done, grants };
    } catch (e) {
      if (isUnavailable(e) && !(e instanceof NodeError)) throw new NodeError(LedgerErrorCode.UNAVAILABLE, `the ledger database cannot be reached: ${(e as Error).message}`);
      throw e;
    } finally {
      await pool.end().catch(() => undefined);
    }
  }

  /** False while the database cannot be reached (probed every second meanwhile). */
  available(): boolean {
    return this.up;
  }

  /** Why the database was last found unreachable (undefined while it answers). */
  unavailableReason(): string | undefined {
    return this.up ? undefined : this.lastError;
  }

  /** One statement; a connection failure becomes `ledger_unavailable` and starts the probe. */
  private async q<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      const r = await this.pool.query<R>(text, values);
      this.up = true;
      return r;
    } catch (e) {
      if (!isUnavailable(e)) throw e;
      this.down(e as Error);
      throw new NodeError(LedgerErrorCode.UNAVAILABLE, `the ledger database cannot be reached: ${(e as Error).message}`);
    }
  }

  private down(e: Error): void {
    this.up = false;
    this.lastError = e.message;
    if (this.probe || this.closed) return;
    this.probe = setInterval(() => {
      this.pool.query('SELECT 1').then(
        () => {
          this.up = true;
          this.lastError = undefined;
          clearInterval(this.probe);
          this.probe = undefined;
        },
        () => undefined,
      );
    }, PROBE_MS);
    this.probe.unref();
  }

  /**
   * One statement on the ledger's other tables (the fleet's heartbeats, x402/fleet/fleet.ts), with the
   * same availability rule as the ledger's own: a connection failure is `ledger_unavailable`.
   */
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    return this.q<R>(text, values);
  }

  async get(id: string): Promise<PaymentRecord | undefined> {
    const { rows } = await this.q<Row>(`SELECT ${SELECT} FROM payments WHERE id = $1`, [id]);
    return rows[0] && recordOf(rows[0]);
  }

  async hasMany(ids: readonly string[]): Promise<boolean[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.q<{ id: string }>(`SELECT id FROM payments WHERE id = ANY($1::text[])`, [ids]);
    const found = new Set(rows.map((r) => r.id));
    return ids.map((id) => found.has(id));
  }

  /** The token is unused here: the claim's INSERT decides, whoever wrote in between. */
  async lookup(id: string): Promise<{ record: PaymentRecord | undefined; absentToken: number }> {
    return { record: await this.get(id), absentToken: 0 };
  }

  async claim(rec: Omit<PaymentRecord, 'status' | 'claimedAt' | 'updatedAt'>, now = Date.now()): Promise<ClaimResult> {
    return this.create({ ...rec, status: 'claimed', claimedAt: now, updatedAt: now });
  }

  async claimRefusal(rec: Omit<PaymentRecord, 'status' | 'claimedAt' | 'updatedAt' | 'refused' | 'error'>, error: { code: string; message: string }, now = Date.now()): Promise<ClaimResult> {
    return this.create({ ...rec, status: 'refund_pending', refused: true, error, claimedAt: now, updatedAt: now });
  }

  private async create(record: PaymentRecord): Promise<ClaimResult> {
    const won = await this.q(
      `INSERT INTO payments (id, rail, status, service_id, request_hash, caller, amount, claimed_at, updated_at, refused, claimed_by, result, receipt, doc)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::json, $13::json, $14::jsonb)
       ON CONFLICT (id) DO NOTHING`,
      [record.id, record.rail, record.status, record.serviceId, record.requestHash, record.caller, record.amount, record.claimedAt, record.updatedAt, record.refused === true, this.nodeId, jsonOrNull(record.result), jsonOrNull(record.receipt), JSON.stringify(docOf(record))],
    );
    if (won.rowCount === 1) {
      this.stale();
      return { claimed: true, record };
    }
    const existing = await this.get(record.id);
    if (!existing) throw transitionConflict(record.id, undefined, 'claim');
    return { claimed: false, record: existing };
  }

  /**
   * One transition in one statement: the columns and `doc` fields of `patch` (undefined removes
   * a field) written only while the record is in one of `from`.
   */
  private async update(id: string, from: readonly PaymentStatus[], to: string, patch: Partial<PaymentRecord>, now = Date.now()): Promise<PaymentRecord> {
    const values: unknown[] = [id, from, now];
    const sets = ['updated_at = $3'];
    const docSet: Record<string, unknown> = {};
    const docUnset: string[] = [];
    for (const [k, v] of Object.entries(patch)) {
      if (k === 'status') {
        values.push(v);
        sets.push(`status = $${values.length}`);
      } else if (k === 'result' || k === 'receipt') {
        values.push(jsonOrNull(v));
        sets.push(`${k} = $${values.length}::json`);
      } else if (k === 'refundTx') {
        values.push(v ?? null);
        sets.push(`refund_tx = decode($${values.length}::text, 'hex')`);
      } else if (COLUMN_FIELDS.has(k)) {
        throw new Error(`ledger field ${k} is not changed after the claim`);
      } else if (v === undefined) {
        docUnset.push(k);
      } else {
        docSet[k] = v;
      }
    }
    values.push(docUnset, JSON.stringify(docSet));
    sets.push(`doc = (doc - $${values.length - 1}::text[]) || $${values.length}::jsonb`);
    const { rows } = await this.q<Row>(`UPDATE payments SET ${sets.join(', ')} WHERE id = $1 AND status = ANY($2::text[]) RETURNING ${SELECT}`, values);
    if (!rows[0]) {
      const cur = await this.q<{ status: PaymentStatus }>(`SELECT status FROM payments WHERE id = $1`, [id]);
      throw transitionConflict(id, cur.rows[0]?.status, to);
    }
    if (patch.status !== undefined) this.stale();
    return recordOf(rows[0]);
  }

  settle(id: string, result: unknown, receipt: Record<string, unknown>): Promise<PaymentRecord> {
    return this.update(id, TRANSITION_FROM.settle, 'settle', { status: 'settled', result, receipt });
  }

  refundPending(id: string, error: { code: string; message: string }, refund?: RefundTxWrite): Promise<PaymentRecord> {
    return this.update(id, TRANSITION_FROM.refundPending, 'refundPending', { status: 'refund_pending', error, ...refundTxPatch(refund) });
  }

  fail(id: string, error: { code: string; message: string }): Promise<PaymentRecord> {
    return this.update(id, TRANSITION_FROM.fail, 'fail', { status: 'failed', error });
  }

  settlePending(id: string, result: unknown, reconcile: UsdcReconcileState, error: { code: string; message: string }): Promise<PaymentRecord> {
    return this.update(id, TRANSITION_FROM.settlePending, 'settlePending', { status: 'settle_pending', result, reconcile, error });
  }

  reconcileProgress(id: string, reconcile: UsdcReconcileState): Promise<PaymentRecord> {
    return this.update(id, TRANSITION_FROM.reconcileProgress, 'reconcileProgress', { reconcile });
  }

  settleReconciled(id: string, receipt: Record<string, unknown>): Promise<PaymentRecord> {
    return this.update(id, TRANSITION_FROM.settleReconciled, 'settleReconciled', { status: 'settled', receipt, error: undefined });
  }

  expireUnsettled(id: string, error: { code: string; message: string }): Promise<PaymentRecord> {
    return this.update(id, TRANSITION_FROM.expireUnsettled, 'expireUnsettled', { status: 'expired_unsettled', result: undefined, error });
  }

  refunded(id: string, refundTxId: string): Promise<PaymentRecord> {
    return this.update(id, TRANSITION_FROM.refunded, 'refunded', { status: 'refunded', refundTxId, refundTx: undefined });
  }

  /** Every record by id, a page at a time (keyset pagination: no long transaction, no cursor held). */
  async *records(): AsyncGenerator<PaymentRecord> {
    let after = '';
    for (;;) {
      const { rows } = await this.q<Row>(`SELECT ${SELECT} FROM payments WHERE id > $1 ORDER BY id LIMIT ${PAGE}`, [after]);
      for (const r of rows) yield recordOf(r);
      if (rows.length < PAGE) return;
      after = rows[rows.length - 1]!.id;
    }
  }

  /**
   * Refunds owed and not sent by anyone (refund_pending without a refund tx): written by fleet
   * nodes that do not hold the signer lease, for the holder to send (x402/fleet/signerLease.ts).
   */
  async unsentRefunds(limit = 200): Promise<PaymentRecord[]> {
    const { rows } = await this.q<Row>(`SELECT ${SELECT} FROM payments WHERE status = 'refund_pending' AND rail = 'native' AND NOT (doc ? 'refundTxId') ORDER BY updated_at LIMIT ${limit}`);
    return rows.map(recordOf);
  }

  /**
   * Claims (both rails) left by nodes that will not finish them: the claiming node's heartbeat is
   * older than `goneMs`, it stopped, it has no row, or it restarted since the claim (its row's
   * `started_at` is later than `claimed_at`, both by that node's own clock). The lease holder
   * refunds (native) or fails (USDC) them, as a restarted single node does with its own.
   * `status` 'settle_pending': USDC results kept ahead of a /settle call whose node is gone, for
   * the holder's reconciler to settle from Base.
   */
  async orphanedClaims(goneMs: number, limit = 200, status: 'claimed' | 'settle_pending' = 'claimed'): Promise<PaymentRecord[]> {
    const { rows } = await this.q<Row>(
      `SELECT ${SELECT} FROM payments p WHERE p.status = '${status}' AND NOT EXISTS (
         SELECT 1 FROM fleet_nodes f WHERE f.node_id = p.claimed_by AND f.stopped_at IS NULL
           AND f.seen_at > now() - make_interval(secs => $1) AND f.started_at <= to_timestamp(p.claimed_at::double precision / 1000))
       ORDER BY p.claimed_at LIMIT ${limit}`,
      [goneMs / 1000],
    );
    return rows.map(recordOf);
  }

  /** This node's fleet heartbeat as the database holds it (x402/fleet/fleet.ts `SEEN_AT_MS`), Unix ms; undefined without a row. */
  async fleetSeenAt(): Promise<number | undefined> {
    const { rows } = await this.q<{ at: string }>(`SELECT floor(extract(epoch FROM seen_at) * 1000)::bigint::text AS at FROM fleet_nodes WHERE node_id = $1`, [this.nodeId]);
    return rows[0] ? Number(rows[0].at) : undefined;
  }

  async getMark<T>(name: string): Promise<T | undefined> {
    const { rows } = await this.q<{ value: string }>(`SELECT value::text AS value FROM ledger_marks WHERE name = $1`, [name]);
    return rows[0] ? (JSON.parse(rows[0].value) as T) : undefined;
  }

  async putMark(name: string, value: unknown): Promise<void> {
    await this.q(`INSERT INTO ledger_marks (name, value, updated_at) VALUES ($1, $2::json, now()) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`, [name, JSON.stringify(value)]);
  }

  /** The mark `name`, inserted as `value` unless a node of the fleet inserted it first. */
  async initMark<T>(name: string, value: T): Promise<T> {
    await this.q(`INSERT INTO ledger_marks (name, value) VALUES ($1, $2::json) ON CONFLICT (name) DO NOTHING`, [name, JSON.stringify(value)]);
    return (await this.getMark<T>(name))!;
  }

  private stale(): void {
    this.writes++;
    this.totalsAt = 0;
  }

  /** Starts a background refresh of the totals when they are older than the TTL. */
  private touchTotals(): void {
    if (this.closed || this.refreshing || Date.now() - this.totalsAt < this.totalsTtlMs) return;
    this.refreshTotals().catch(() => undefined);
  }

  volume(serviceId: string): ServiceVolume {
    this.touchTotals();
    const v = this.volumes.get(serviceId);
    return v ? { ...v } : { calls: 0, callsUsdc: 0, volumeBase: 0n, volumeUsdcAtomic: 0n };
  }

  counts(): Readonly<Record<PaymentStatus, number>> & { readonly refused: number } {
    this.touchTotals();
    return { ...this.statusCounts, refused: this.refusedCount };
  }

  /** Reads the totals from the database now (two GROUP BY queries; one at a time). */
  refreshTotals(): Promise<void> {
    this.refreshing ??= (async () => {
      const started = Date.now();
      const writes = this.writes;
      try {
        const [byStatus, bySeller] = await Promise.all([
          this.q<{ status: PaymentStatus; n: number; refused: number }>(`SELECT status, count(*)::int AS n, (count(*) FILTER (WHERE refused))::int AS refused FROM payments GROUP BY status`),
          this.q<{ service_id: string; rail: 'native' | 'usdc'; n: number; total: string }>(`SELECT service_id, rail, count(*)::int AS n, sum(amount)::text AS total FROM payments WHERE status = 'settled' GROUP BY service_id, rail`),
        ]);
        const counts = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<PaymentStatus, number>;
        let refused = 0;
        for (const r of byStatus.rows) {
          counts[r.status] = r.n;
          refused += r.refused;
        }
        const volumes = new Map<string, ServiceVolume>();
        for (const r of bySeller.rows) {
          const v = volumes.get(r.service_id) ?? { calls: 0, callsUsdc: 0, volumeBase: 0n, volumeUsdcAtomic: 0n };
          if (r.rail === 'native') {
            v.calls = r.n;
            v.volumeBase = BigInt(r.total);
          } else {
            v.callsUsdc = r.n;
            v.volumeUsdcAtomic = BigInt(r.total);
          }
          volumes.set(r.service_id, v);
        }
        this.statusCounts = counts;
        this.refusedCount = refused;
        this.volumes = volumes;
        // A write of this node during the queries may be missing from them: stale again.
        this.totalsAt = this.writes === writes ? started : 0;
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.health);
    clearInterval(this.probe);
    this.probe = undefined;
    await this.refreshing?.catch(() => undefined);
    await this.pool.end();
  }
}
