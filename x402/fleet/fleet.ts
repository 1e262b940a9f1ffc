/**
 * The fleet's heartbeats: every node on a PostgreSQL ledger writes one row of
 * `fleet_nodes` (migration 2 of x402/ledger/pgLedger.ts) every `beatMs` (2 s) — its node id (stable per
 * data directory, `<data-dir>/node-id`), HTTP URL, version, network, chain tip, whether it holds
 * the signer lease — with `seen_at` set by the database's clock. A row not rewritten for
 * `goneMs` (10 s), or marked stopped by a node that shut down, is a node gone.
 *
 * From the rows (and the signer lease's advisory lock, which names its holder through the
 * session's application_name) every reader builds the same view, `FleetView`: the live nodes,
 * each one's tip and lag behind the fleet's best tip, the lease holder and the ledger's size.
 * `native-node fleet status`, `/api/v1/status` (`fleet`) and `/metrics` (`native_fleet_*`) show it.
 *
 * A node whose chain tip is more than `farBehindBlocks` (10, the p2p sync's threshold) behind the
 * best tip of the live nodes of its network stops selling (503 `node_syncing`) until it catches
 * up, as a node far behind its peers does: a fleet node cut off from the network would otherwise
 * settle against a stale chain while its siblings see the real one.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

/** How often a node writes its row, ms. */
export const FLEET_BEAT_MS = 2000;
/** A row older than this is a node gone, ms (five missed beats). */
export const FLEET_GONE_MS = 10_000;
/** How often a node reads the ledger's size (row counts are a scan of each table), ms. */
export const FLEET_SIZE_MS = 30_000;
/** Rows of nodes gone for longer than this are deleted, ms. */
export const FLEET_FORGET_MS = 24 * 3600_000;
/** Prefix of the signer lease session's application_name; the node id follows (x402/fleet/signerLease.ts). */
export const LEASE_APPLICATION_PREFIX = 'native-node signer lease ';
/** The ledger's tables, whose rows and bytes the view counts. */
export const LEDGER_TABLES = ['payments', 'ledger_marks', 'fleet_nodes', 'provider_payouts', 'payee_txs', 'inbox_jobs', 'inbox_agents', 'inbox_stats', 'inbox_signatures', 'ledger_schema'] as const;
/** Name of the file holding a data directory's node id. */
export const NODE_ID_FILE = 'node-id';

/** One statement (PgLedger.query, or a pg client's query). */
export type FleetQuery = <R extends Record<string, unknown>>(text: string, values?: unknown[]) => Promise<{ rows: R[] }>;

/** What a node says of itself in each heartbeat. */
export interface FleetSelf {
  readonly url: string | undefined;
  readonly version: string;
  readonly network: string;
  readonly height: number;
  readonly tip: string;
  readonly leaseHolder: boolean;
}

/** A node of the view. */
export interface FleetNode {
  readonly nodeId: string;
  readonly url: string | null;
  readonly version: string;
  readonly network: string;
  readonly height: number;
  readonly tip: string;
  /** Blocks behind the best tip of the live nodes of its network. */
  readonly lag: number;
  /** Holds the signer lease (from the advisory lock when it can be read, else the node's own heartbeat). */
  readonly leaseHolder: boolean;
  readonly startedAt: string;
  readonly seenAt: string;
  /** Seconds since its last heartbeat (by the database's clock). */
  readonly ageSeconds: number;
}

/** A node gone: silent for longer than the timeout, or stopped. */
export interface FleetGoneNode {
  readonly nodeId: string;
  readonly url: string | null;
  readonly height: number;
  readonly seenAt: string;
  readonly ageSeconds: number;
  readonly reason: 'stopped' | 'silent';
}

/** The ledger's size: rows and bytes (`pg_total_relation_size`: table, indexes, TOAST) per table. */
export interface LedgerSize {
  readonly tables: Readonly<Record<string, { readonly rows: number; readonly bytes: number }>>;
  /** Bytes of the ledger's tables together. */
  readonly bytes: number;
  /** Bytes of the whole database (`pg_database_size`). */
  readonly databaseBytes: number;
  /** When it was read (ISO). */
  readonly at: string;
}

/** The fleet as one reader sees it (see module comment). */
export interface FleetView {
  /** Live nodes, by node id. */
  readonly nodes: readonly FleetNode[];
  readonly live: number;
  readonly gone: readonly FleetGoneNode[];
  /** The highest tip of the live nodes (null without any). */
  readonly bestHeight: number | null;
  readonly bestTip: string | null;
  /** Node id of the signer lease's holder (null: nobody holds it; `unknown`: a session this view cannot name holds it). */
  readonly leaseHolder: string | null;
  /** Where the holder was read from: the advisory lock itself, or the nodes' heartbeats. */
  readonly leaseSource: 'lock' | 'heartbeat';
  readonly ledger: LedgerSize | undefined;
  readonly farBehindBlocks: number;
  readonly heartbeatSeconds: number;
  readonly goneAfterSeconds: number;
  /** When the rows were read (ISO). */
  readonly readAt: string;
}

interface NodeRow extends Record<string, unknown> {
  node_id: string;
  url: string | null;
  version: string;
  network: string;
  tip_height: string;
  tip_hash: string;
  lease_holder: boolean;
  started_at: Date;
  seen_at: Date;
  age_ms: string;
  stopped: boolean;
}

/** This data directory's node id: read from `<dataDir>/node-id`, created (random) the first time. */
export function fleetNodeId(dataDir: string): string {
  const file = join(dataDir, NODE_ID_FILE);
  if (existsSync(file)) {
    const id = readFileSync(file, 'utf8').trim();
    if (/^[A-Za-z0-9._-]{1,48}$/.test(id)) return id;
  }
  const id = `n-${randomBytes(6).toString('hex')}`;
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(file, `${id}\n`, { mode: 0o644 });
  return id;
}

/** How a row's `seen_at` is read as Unix ms, the same way everywhere (a ledger restored from a backup is found by comparing them). */
export const SEEN_AT_MS = 'floor(extract(epoch FROM seen_at) * 1000)::bigint::text';

/** Writes (or rewrites) a node's row; `seen_at` is the database's now(). Answers it, Unix ms (`SEEN_AT_MS`). */
export async function writeHeartbeat(q: FleetQuery, nodeId: string, self: FleetSelf, startedAtMs: number): Promise<number> {
  const { rows } = await q<{ at: string }>(
    `INSERT INTO fleet_nodes (node_id, url, version, network, tip_height, tip_hash, lease_holder, started_at, seen_at, stopped_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, to_timestamp($8::double precision / 1000), now(), NULL)
     ON CONFLICT (node_id) DO UPDATE SET url = EXCLUDED.url, version = EXCLUDED.version, network = EXCLUDED.network, tip_height = EXCLUDED.tip_height,
       tip_hash = EXCLUDED.tip_hash, lease_holder = EXCLUDED.lease_holder, started_at = EXCLUDED.started_at, seen_at = now(), stopped_at = NULL
     RETURNING ${SEEN_AT_MS} AS at`,
    [nodeId, self.url ?? null, self.version, self.network, self.height, self.tip, self.leaseHolder, startedAtMs],
  );
  return Number(rows[0]?.at ?? 0);
}

/** Marks a node's row stopped (a clean shutdown: it is gone at once, not after the timeout). */
export async function markStopped(q: FleetQuery, nodeId: string): Promise<void> {
  await q(`UPDATE fleet_nodes SET stopped_at = now(), lease_holder = false WHERE node_id = $1`, [nodeId]);
}

/** Deletes the rows of nodes gone for longer than `FLEET_FORGET_MS`. */
export async function forgetGone(q: FleetQuery): Promise<void> {
  await q(`DELETE FROM fleet_nodes WHERE seen_at < now() - make_interval(secs => $1)`, [FLEET_FORGET_MS / 1000]);
}

/** The node id of the signer lease's holder, read from the advisory lock (undefined: nobody holds it; 'unknown': a session not named by a node). */
export async function leaseHolderFromLock(q: FleetQuery, leaseKey: number): Promise<string | undefined> {
  // A one-bigint advisory key shows in pg_locks as classid (high 32 bits), objid (low 32 bits), objsubid 1.
  const { rows } = await q<{ app: string | null }>(
    `SELECT a.application_name AS app FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND l.classid = $1 AND l.objid = $2 AND l.objsubid = 1`,
    [Math.floor(leaseKey / 2 ** 32), leaseKey % 2 ** 32],
  );
  if (rows.length === 0) return undefined;
  const app = rows[0]!.app ?? '';
  return app.startsWith(LEASE_APPLICATION_PREFIX) ? app.slice(LEASE_APPLICATION_PREFIX.length) : 'unknown';
}

/** Rows and bytes of the ledger's tables (`count(*)` each: a scan; read it seldom). */
export async function readLedgerSize(q: FleetQuery): Promise<LedgerSize> {
  const sizes = await q<{ name: string; bytes: string }>(
    `SELECT c.relname AS name, pg_total_relation_size(c.oid)::text AS bytes FROM pg_class c
     WHERE c.relkind = 'r' AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema()) AND c.relname = ANY($1::text[])`,
    [LEDGER_TABLES],
  );
  const present = sizes.rows.map((r) => r.name);
  const counts = present.length ? await q<Record<string, string>>(`SELECT ${present.map((t) => `(SELECT count(*) FROM ${t})::text AS ${t}`).join(', ')}`) : { rows: [{}] };
  const db = await q<{ bytes: string }>(`SELECT pg_database_size(current_database())::text AS bytes`);
  const tables: Record<string, { rows: number; bytes: number }> = {};
  let bytes = 0;
  for (const r of sizes.rows) {
    tables[r.name] = { rows: Number(counts.rows[0]![r.name] ?? 0), bytes: Number(r.bytes) };
    bytes += Number(r.bytes);
  }
  return { tables, bytes, databaseBytes: Number(db.rows[0]!.bytes), at: new Date().toISOString() };
}

/** Reads the rows and builds the view (the holder from the lock, else from the heartbeats). */
export async function readFleet(q: FleetQuery, opts: { leaseKey: number; goneMs?: number; farBehindBlocks: number; beatMs?: number; size?: LedgerSize }): Promise<FleetView> {
  const { rows } = await q<NodeRow>(
    `SELECT node_id, url, version, network, tip_height::text AS tip_height, tip_hash, lease_holder, started_at, seen_at,
            (extract(epoch FROM now() - seen_at) * 1000)::bigint::text AS age_ms, stopped_at IS NOT NULL AS stopped
     FROM fleet_nodes ORDER BY node_id`,
  );
  let holder: string | undefined | null = null;
  try {
    holder = await leaseHolderFromLock(q, opts.leaseKey);
  } catch {
    holder = null; // pg_locks unreadable: the heartbeats say
  }
  return buildFleetView(rows, holder, opts);
}

/**
 * The view of `rows` (pure). `lockHolder`: the holder read from the lock (undefined: nobody holds
 * it), or null when the lock could not be read (the heartbeats' `lease_holder` then).
 */
export function buildFleetView(rows: readonly NodeRow[], lockHolder: string | undefined | null, opts: { goneMs?: number; farBehindBlocks: number; beatMs?: number; size?: LedgerSize }): FleetView {
  const goneMs = opts.goneMs ?? FLEET_GONE_MS;
  const liveRows = rows.filter((r) => !r.stopped && Number(r.age_ms) <= goneMs);
  const best = new Map<string, number>();
  for (const r of liveRows) best.set(r.network, Math.max(best.get(r.network) ?? -1, Number(r.tip_height)));
  const top = liveRows.reduce<NodeRow | undefined>((a, r) => (a === undefined || Number(r.tip_height) > Number(a.tip_height) ? r : a), undefined);
  const fromLock = lockHolder !== null;
  const leaseHolder = fromLock ? (lockHolder ?? null) : (liveRows.find((r) => r.lease_holder)?.node_id ?? null);
  const iso = (d: Date) => new Date(d).toISOString();
  return {
    nodes: liveRows.map((r) => ({
      nodeId: r.node_id,
      url: r.url,
      version: r.version,
      network: r.network,
      height: Number(r.tip_height),
      tip: r.tip_hash,
      lag: best.get(r.network)! - Number(r.tip_height),
      leaseHolder: fromLock ? r.node_id === lockHolder : r.lease_holder,
      startedAt: iso(r.started_at),
      seenAt: iso(r.seen_at),
      ageSeconds: Math.round(Number(r.age_ms) / 100) / 10,
    })),
    live: liveRows.length,
    gone: rows
      .filter((r) => !liveRows.includes(r))
      .map((r) => ({ nodeId: r.node_id, url: r.url, height: Number(r.tip_height), seenAt: iso(r.seen_at), ageSeconds: Math.round(Number(r.age_ms) / 1000), reason: r.stopped ? ('stopped' as const) : ('silent' as const) })),
    bestHeight: top ? Number(top.tip_height) : null,
    bestTip: top ? top.tip_hash : null,
    leaseHolder,
    leaseSource: fromLock ? 'lock' : 'heartbeat',
    ledger: opts.size,
    farBehindBlocks: opts.farBehindBlocks,
    heartbeatSeconds: (opts.beatMs ?? FLEET_BEAT_MS) / 1000,
    goneAfterSeconds: goneMs / 1000,
    readAt: new Date().toISOString(),
  };
}

/** How far a node at `height` of `network` is behind the live nodes of the view (0 when it is the best, or alone). */
export function lagBehind(view: FleetView, network: string, height: number, selfId?: string): { best: number; lag: number } {
  let best = height;
  for (const n of view.nodes) if (n.network === network && n.nodeId !== selfId) best = Math.max(best, n.height);
  return { best, lag: best - height };
}

/** What `/metrics` shows of the fleet (node/api/metrics.ts, `native_fleet_*`). */
export interface FleetMetrics {
  readonly live: number;
  readonly bestHeight: number | null;
  /** This node's lag. */
  readonly lag: number;
  readonly behind: boolean;
  /** This node holds the signer lease. */
  readonly leaseHolder: boolean;
  readonly ledgerBytes: number | null;
  readonly ledgerRows: Readonly<Record<string, number>>;
}

/** Options of the heartbeat. */
export interface FleetHeartbeatOptions {
  readonly leaseKey: number;
  /** Blocks behind the fleet's best tip from which the node stops selling. */
  readonly farBehindBlocks: number;
  readonly beatMs?: number;
  readonly goneMs?: number;
  readonly sizeMs?: number;
  readonly logger?: { warn(o: object, msg: string): void; info(o: object, msg: string): void };
  /** Each heartbeat written, with its `seen_at` (Unix ms): the node's ledger witness keeps it (x402/ledger/witness.ts). */
  readonly onBeat?: (seenAtMs: number) => void;
}

/**
 * A node's heartbeat (see module comment): `start()` writes its row at once and then every
 * `beatMs`, reading the fleet after each write; `stop()` marks the row stopped. A failed beat
 * (the database unreachable) is tried again at the next one; meanwhile the last view ages, and a
 * view older than the timeout no longer holds the node back (the ledger refuses sales then).
 * While the database cannot be reached, `status()` says so and names no holder, no node and no
 * tip: what it last read may no longer be true. The ledger's size and the deletion of rows long
 * gone are extras: when they fail (a role without DELETE, say) the view is read all the same.
 */
export class FleetHeartbeat {
  /** The HTTP URL the node announces (set once the API listens). */
  url: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private last: FleetView | undefined;
  private lastAt = 0;
  private size: LedgerSize | undefined;
  private sizeAt = 0;
  private forgotAt = 0;
  private failing = false;
  /** Why the last beat failed (the database's error), while it did. */
  private failure: string | undefined;
  private extrasFailing = false;
  private stopped = false;
  private readonly startedAt = Date.now();
  private readonly beatMs: number;
  private readonly goneMs: number;
  private readonly sizeMs: number;

  constructor(
    private readonly q: FleetQuery,
    readonly nodeId: string,
    private readonly self: () => Omit<FleetSelf, 'url'>,
    private readonly opts: FleetHeartbeatOptions,
  ) {
    this.beatMs = opts.beatMs ?? FLEET_BEAT_MS;
    this.goneMs = opts.goneMs ?? FLEET_GONE_MS;
    this.sizeMs = opts.sizeMs ?? FLEET_SIZE_MS;
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.beat();
    this.timer = setInterval(() => void this.beat(), this.beatMs);
    this.timer.unref();
  }

  /** One heartbeat now (the URL just became known, say); one at a time. */
  beat(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.running ??= this.beatOnce().finally(() => (this.running = undefined));
    return this.running;
  }

  private async beatOnce(): Promise<void> {
    try {
      const seenAt = await writeHeartbeat(this.q, this.nodeId, { ...this.self(), url: this.url }, this.startedAt);
      this.opts.onBeat?.(seenAt);
      await this.extras();
      this.last = await readFleet(this.q, { leaseKey: this.opts.leaseKey, goneMs: this.goneMs, farBehindBlocks: this.opts.farBehindBlocks, beatMs: this.beatMs, size: this.size });
      this.lastAt = Date.now();
      if (this.failing) this.opts.logger?.info({ nodeId: this.nodeId }, 'fleet heartbeat written again');
      this.failing = false;
      this.failure = undefined;
    } catch (e) {
      if (!this.failing) this.opts.logger?.warn({ nodeId: this.nodeId, err: (e as Error).message }, 'fleet heartbeat failed (retried every beat)');
      this.failing = true;
      this.failure = (e as Error).message;
    }
  }

  /** The ledger's size (every `sizeMs`) and the deletion of rows long gone (hourly): a failure is logged, never a failed beat. */
  private async extras(): Promise<void> {
    const now = Date.now();
    try {
      if (now - this.sizeAt >= this.sizeMs) {
        this.sizeAt = now;
        this.size = await readLedgerSize(this.q);
      }
      if (now - this.forgotAt >= 3600_000) {
        this.forgotAt = now;
        await forgetGone(this.q);
      }
      this.extrasFailing = false;
    } catch (e) {
      if (!this.extrasFailing) this.opts.logger?.warn({ nodeId: this.nodeId, err: (e as Error).message }, 'fleet ledger size or clean-up failed (tried again later)');
      this.extrasFailing = true;
    }
  }

  /** Why the ledger's database could not be reached at the last beat (its error), undefined while it could. */
  unreachable(): string | undefined {
    return this.failing ? this.failure : undefined;
  }

  /** The last view read, while it is younger than the timeout. */
  view(): FleetView | undefined {
    return this.last && Date.now() - this.lastAt <= this.goneMs ? this.last : undefined;
  }

  /** This node's lag behind the live nodes of its network, with its tip now (undefined without a recent view). */
  lag(): { height: number; best: number; lag: number } | undefined {
    const v = this.view();
    if (!v) return undefined;
    const s = this.self();
    return { height: s.height, ...lagBehind(v, s.network, s.height, this.nodeId) };
  }

  /** Why this node must not sell (its tip far behind the fleet's best), or undefined. */
  behind(): string | undefined {
    const l = this.lag();
    if (!l || l.lag <= this.opts.farBehindBlocks) return undefined;
    return `this node's chain (height ${l.height}) is ${l.lag} blocks behind its fleet's best tip (${l.best}); it sells again once it catches up: retry shortly or use another node`;
  }

  /**
   * The `fleet` object of `/api/v1/status`: the view, and this node's id, lag and whether it
   * sells; `ledgerReachable` false (with `ledgerError`) while the database cannot be reached, and
   * then nothing of the last view (no holder, no nodes: they may have changed since).
   */
  status(): Record<string, unknown> {
    const unreachable = this.unreachable();
    const v = unreachable === undefined ? this.view() : undefined;
    const l = unreachable === undefined ? this.lag() : undefined;
    return {
      nodeId: this.nodeId,
      ledgerReachable: unreachable === undefined,
      ...(unreachable === undefined ? {} : { ledgerError: `the ledger's database cannot be reached: ${unreachable}` }),
      lag: l?.lag ?? null,
      behind: unreachable === undefined && this.behind() !== undefined,
      ...(v ?? { nodes: [], live: 0, gone: [], bestHeight: null, bestTip: null, leaseHolder: null, leaseSource: null, ledger: this.size, farBehindBlocks: this.opts.farBehindBlocks, heartbeatSeconds: this.beatMs / 1000, goneAfterSeconds: this.goneMs / 1000, readAt: null }),
    };
  }

  /**
   * The figures of `/metrics`: whether this node holds the lease is its own knowledge and always
   * there; the fleet's figures come from a recent view (0 and empty without one, or while the
   * database cannot be reached).
   */
  metrics(): FleetMetrics {
    const v = this.unreachable() === undefined ? this.view() : undefined;
    const l = v && this.lag();
    return {
      live: v?.live ?? 0,
      bestHeight: v?.bestHeight ?? null,
      lag: l?.lag ?? 0,
      behind: v !== undefined && this.behind() !== undefined,
      leaseHolder: this.self().leaseHolder,
      ledgerBytes: v?.ledger?.bytes ?? null,
      ledgerRows: Object.fromEntries(Object.entries(v?.ledger?.tables ?? {}).map(([t, s]) => [t, s.rows])),
    };
  }

  /** Stops beating and marks the row stopped (best effort: a node that cannot reach the database is gone after the timeout anyway). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.stopped = true;
    await this.running;
    await markStopped(this.q, this.nodeId).catch(() => undefined);
  }
}
