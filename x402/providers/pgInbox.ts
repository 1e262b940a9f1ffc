/**
 * The provider inbox of a fleet (`--ledger postgres://…`): the same jobs, rules and
 * refusals as the LevelDB inbox (x402/providers/levelInbox.ts; one interface in inbox.ts, one test suite), kept in the
 * ledger's database (migration 4 of x402/ledger/pgLedger.ts) so a provider agent polls ANY one node of
 * the fleet:
 *
 *   inbox_jobs       (id, service_id, agent, node_id, status, request, input, created_at,
 *                     deadline, taken_at, answered_at, result, error)   one row per paid job;
 *                     node_id is the node whose paid call waits for it (its fleet heartbeat id)
 *   inbox_agents     (agent, last_poll, offline_at)   polls, written at most every POLL_PERSIST_MS
 *                     per agent and node; offline_at: the agent let a job expire
 *   inbox_stats      (service_id, calls, failures, latencies)   the last 101 latencies, ms
 *   inbox_signatures (key, ts)   signatures used (key: hex sha256 of the signature's bytes), kept
 *                                until they fail the clock check anyway
 *
 * Every step is one statement, so nothing is half-written and the row decides every race:
 *   - `run` inserts the job (and NOTIFYs `native_inbox_new` with the agent, which wakes long
 *     polls at every node) and waits for the row to end;
 *   - `take` is `UPDATE … WHERE id IN (SELECT … FOR UPDATE SKIP LOCKED) RETURNING …`: two nodes
 *     never hand out one job;
 *   - `answer` (at any node) is an UPDATE that ends only a queued or taken job not past its
 *     deadline, counts the stats and NOTIFYs `native_inbox_end` with the job id;
 *   - the waiting node's timeout is an UPDATE to expired under the same condition: answer and
 *     timeout are decided by the row, exactly once; the caller gets the result only if the answer
 *     won. The waiting node decides `DECIDE_MARGIN_MS` (at most a quarter of the timeout) before
 *     the paid-call core's own timer fires, so an answer the row accepted reaches the caller;
 *   - the waiting node learns of an end by LISTEN on a dedicated connection (reconnected), and by
 *     a slow re-read of the jobs it waits for (`fallbackMs`), so a lost notification loses nothing.
 * Jobs of a node that is gone (no heartbeat for 10 s, stopped, or restarted since the job: the
 * rule of PgLedger.orphanedClaims) are expired at its own restart and by the signer lease holder's
 * sweep (`expireOrphaned`); a late answer then gets 409 `inbox_job_expired`, and the payment is
 * refunded by the ledger's orphaned-claims sweep.
 *
 * Online status, grace and stats are read by the live registry synchronously: each node keeps
 * them in memory, updated by its own writes at once and re-read from the tables every
 * `refreshMs`. The start-up grace is the fleet's: agents that polled within their online window of
 * the fleet's last moment alive (the latest poll recorded, or the latest clean stop of a node).
 *
 * Unreachable database: the statement fails with `ledger_unavailable` (503, PgLedger.query) and
 * wrote nothing; a run whose job could not be queued fails (the caller is refunded).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { toHex } from '../../consensus/hash.js';
import type { SignatureVerifier } from '../../chain/types.js';
import { ServiceError } from '../../services/types.js';
import { FLEET_GONE_MS } from '../fleet/fleet.js';
import {
  InboxError,
  InboxErrorCode,
  POLL_PERSIST_MS,
  authenticateInboxRequest,
  checkAnswer,
  defaultInboxOptions,
  medianOf,
  runErrorOf,
  tooLargeError,
  type Inbox,
  type InboxJob,
  type InboxKeys,
  type InboxOptions,
  type ProviderStats,
  type ProviderStatsView,
  type SeenSignatures,
  type SignedRequest,
} from './inbox.js';
import { INBOX_CLOCK_SKEW_MS } from './inboxAuth.js';
import { expireStatement, INBOX_END_CHANNEL, JOB_COLUMNS, jobOf, OPEN, type JobRow } from './pgInboxRows.js';

/** One statement on the ledger's database (PgLedger.query: a connection failure is `ledger_unavailable`). */
export type InboxQuery = <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => Promise<pg.QueryResult<R>>;

/** Channel of new jobs (payload: the agent). */
export const INBOX_NEW_CHANNEL = 'native_inbox_new';
export { INBOX_END_CHANNEL } from './pgInboxRows.js';
/** The waiting node decides a job this long before its run's timeout (at most a quarter of it), ms. */
export const DECIDE_MARGIN_MS = 1000;
/** Ended jobs are deleted after this long, ms (their rows tell "answered" from "unknown" until then). */
export const INBOX_JOB_KEEP_MS = 7 * 24 * 3600_000;
/** Name of the mark holding the latest clean stop of a node (the fleet's start-up grace). */
const STOPPED_MARK = 'inbox_stopped';

/** Options of the PostgreSQL inbox: the inbox's own and how often it re-reads the shared state. */
export interface PgInboxOptions extends InboxOptions {
  /** How often the agents' polls and the stats are re-read, ms. */
  readonly refreshMs?: number;
  /** How often the jobs waited for are re-read (a lost notification) and a long poll looks again, ms. */
  readonly fallbackMs?: number;
}

/** What the PostgreSQL inbox needs. */
export interface PgInboxModules {
  /** Statements on the ledger's pool. */
  readonly query: InboxQuery;
  /** The ledger's URL: the LISTEN connection is its own. */
  readonly url: string;
  /** This node's id in the fleet (its heartbeat's). */
  readonly nodeId: string;
  /** The id inbox signatures must name: the ledger's seller id, the fleet's one. */
  readonly sellerId: string;
  readonly verifier: SignatureVerifier;
  readonly keys: InboxKeys;
  readonly hrp: string;
}

interface Waiter {
  readonly agent: string;
  readonly serviceId: string;
  readonly timeoutMs: number;
  deciding: boolean;
  timer?: NodeJS.Timeout;
  resolve(value: unknown): void;
  reject(e: Error): void;
}

/** The PostgreSQL inbox (see module comment). */
export class PgInbox implements Inbox {
  /** Bumped when an agent goes on- or offline or a stat changes (document cache keys). */
  version = 0;
  private readonly q: InboxQuery;
  private readonly opts: InboxOptions;
  private readonly now: () => number;
  private readonly refreshMs: number;
  private readonly fallbackMs: number;
  private readonly waiters = new Map<string, Waiter>();
  private readonly pollers = new Map<string, Set<() => void>>();
  /** Each agent's last poll as this node knows it (its own polls, and the table's). */
  private readonly polls = new Map<string, number>();
  /** Each agent's latest "let a job expire" this node knows of: polls up to it do not count. */
  private readonly offlineAt = new Map<string, number>();
  /** Last poll written to the table by this node, per agent. */
  private readonly persistedPoll = new Map<string, number>();
  private stats = new Map<string, ProviderStats>();
  /** Local stats writes: a re-read overlapping one is not applied (it may predate it). */
  private statWrites = 0;
  /** Signatures this node saw (the early look; the table decides). */
  private readonly seenLocal = new Map<string, number>();
  private readonly graced = new Set<string>();
  private graceUntil = 0;
  private listener: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  private fallbackTimer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private stopping = false;

  constructor(
    private readonly m: PgInboxModules,
    opts: Partial<PgInboxOptions> = {},
  ) {
    this.q = m.query;
    this.opts = { ...defaultInboxOptions, ...opts };
    this.now = opts.now ?? Date.now;
    this.refreshMs = opts.refreshMs ?? 1000;
    this.fallbackMs = opts.fallbackMs ?? 2000;
  }

  /** Expires the jobs this node's previous run left open, reads the shared state, grants the fleet's start-up grace, and listens. */
  async start(): Promise<void> {
    this.stopping = false;
    await this.expire(`j.node_id = $4`, [this.m.nodeId], { code: 'node_restarted', message: 'the node restarted before the provider answered' }, false);
    await this.refresh();
    const { rows } = await this.q<{ alive: string | null }>(
      `SELECT greatest((SELECT max(last_poll) FROM inbox_agents), (SELECT (value::text)::bigint FROM ledger_marks WHERE name = '${STOPPED_MARK}'))::text AS alive`,
    );
    const alive = Number(rows[0]?.alive ?? 0);
    for (const [agent, t] of this.polls) if (alive - t <= this.opts.onlineWindowMs + POLL_PERSIST_MS) this.graced.add(agent);
    this.graceUntil = this.now() + (this.opts.startGraceMs ?? this.opts.onlineWindowMs);
    await this.listen();
    this.refreshTimer = setInterval(() => void this.refresh().catch(() => undefined), this.refreshMs);
    this.refreshTimer.unref();
    this.fallbackTimer = setInterval(() => void this.fallback().catch(() => undefined), this.fallbackMs);
    this.fallbackTimer.unref();
  }

  /**
   * Fails every job this node waits for (node stopping: the callers are refunded) unless its
   * answer won already, records the agents' polls and the stop time (the fleet's start-up grace),
   * and closes the LISTEN connection.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.refreshTimer);
    clearInterval(this.fallbackTimer);
    for (const set of this.pollers.values()) for (const wake of set) wake();
    try {
      if (this.waiters.size) {
        const error = { code: InboxErrorCode.PROVIDER_FAILED, message: 'the node is stopping' };
        const { rows } = await this.q<{ id: string; service_id: string }>(expireStatement(`j.id = ANY($4::text[])`), [JSON.stringify(error), this.now(), false, [...this.waiters.keys()]]);
        for (const r of rows) this.settle(r.id, undefined, new ServiceError(InboxErrorCode.PROVIDER_FAILED, `job ${r.id}: the node is stopping`));
        await this.conclude([...this.waiters.keys()]);
      }
      const polls = [...this.polls];
      if (polls.length) {
        await this.q(
          `INSERT INTO inbox_agents AS a (agent, last_poll) SELECT * FROM unnest($1::text[], $2::bigint[]) ON CONFLICT (agent) DO UPDATE SET last_poll = greatest(a.last_poll, EXCLUDED.last_poll)`,
          [polls.map(([a]) => a), polls.map(([, t]) => t)],
        );
      }
      await this.q(
        `INSERT INTO ledger_marks AS m (name, value, updated_at) VALUES ('${STOPPED_MARK}', $1::json, now())
         ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, updated_at = now() WHERE (m.value::text)::bigint < (EXCLUDED.value::text)::bigint`,
        [JSON.stringify(this.now())],
      );
    } catch {
      // The database is gone: the open rows are expired by this node's restart or the lease holder's sweep.
    }
    for (const [id, w] of [...this.waiters]) {
      this.waiters.delete(id);
      w.reject(new ServiceError(InboxErrorCode.PROVIDER_FAILED, `job ${id}: the node is stopping`));
    }
    await this.closeListener();
  }

  /** Stops the timers and the LISTEN connection without writing anything (tests: a process that died; its waits fail). */
  async close(): Promise<void> {
    this.stopping = true;
    clearInterval(this.refreshTimer);
    clearInterval(this.fallbackTimer);
    for (const set of this.pollers.values()) for (const wake of set) wake();
    for (const [id, w] of [...this.waiters]) {
      this.waiters.delete(id);
      clearTimeout(w.timer);
      w.reject(new ServiceError(InboxErrorCode.PROVIDER_FAILED, `job ${id}: the inbox is closed`));
    }
    await this.closeListener();
  }

  inGrace(agent: string): boolean {
    return this.graced.has(agent) && this.now() < this.graceUntil;
  }

  isOnline(agent: string): boolean {
    const t = this.polls.get(agent);
    return t !== undefined && this.now() - t <= this.opts.onlineWindowMs;
  }

  lastPollAt(agent: string): number {
    return this.polls.get(agent) ?? 0;
  }

  statsOf(serviceId: string): ProviderStatsView {
    const s = this.stats.get(serviceId);
    return s ? { calls: s.calls, failures: s.failures, medianLatencyMs: medianOf(s.latencies) } : { calls: 0, failures: 0, medianLatencyMs: 0 };
  }

  /**
   * Queues the job (the row is the job), then waits for its end: the agent's answer at any node,
   * or this node's timeout (`timeoutMs` − the decision margin, or the signal), decided by the row.
   */
  async run(serviceId: string, agent: string, request: string | undefined, input: unknown, timeoutMs: number, signal: AbortSignal): Promise<unknown> {
    const id = toHex(randomBytes(16));
    const margin = Math.min(DECIDE_MARGIN_MS, Math.floor(timeoutMs / 4));
    const createdAt = this.now();
    try {
      await this.q(
        `WITH j AS (
           INSERT INTO inbox_jobs (id, service_id, agent, node_id, status, request, input, created_at, deadline)
           VALUES ($1, $2, $3, $4, 'queued', $5, $6::json, $7, $8) RETURNING agent
         ) SELECT pg_notify('${INBOX_NEW_CHANNEL}', agent) FROM j`,
        [id, serviceId, agent, this.m.nodeId, request ?? null, input === undefined ? null : JSON.stringify(input), createdAt, createdAt + timeoutMs - margin],
      );
    } catch (e) {
      // Nothing was queued: the run fails and the caller is refunded.
      throw new ServiceError(InboxErrorCode.PROVIDER_FAILED, `the provider inbox could not queue the job: ${(e as Error).message}`);
    }
    const result = new Promise<unknown>((resolve, reject) => this.waiters.set(id, { agent, serviceId, timeoutMs, deciding: false, resolve, reject }));
    const decide = () => void this.decide(id);
    const timer = setTimeout(decide, timeoutMs - margin);
    const w = this.waiters.get(id);
    if (w) w.timer = timer;
    if (signal.aborted) decide();
    else signal.addEventListener('abort', decide, { once: true });
    this.wake(agent);
    try {
      return await result;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', decide);
    }
  }

  /** The id inbox signatures must name: the fleet's seller id (every node of the fleet accepts its agents' signatures). */
  get nodeId(): string {
    return this.m.sellerId;
  }

  async authenticate(req: SignedRequest, opts: { requireAgent?: boolean } = {}): Promise<string> {
    return authenticateInboxRequest(req, opts, { hrp: this.m.hrp, nodeId: this.m.sellerId, now: this.now, keys: this.m.keys, verifier: this.m.verifier, seen: this.seen });
  }

  /** The table decides, by the signature's bytes: one used at any node of the fleet is a replay at every other. */
  private readonly seen: SeenSignatures = {
    has: (key) => this.seenLocal.has(key),
    add: async (key, timestamp) => {
      const r = await this.q(`INSERT INTO inbox_signatures (key, ts) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`, [key, timestamp]);
      if (this.seenLocal.size >= 1000) {
        const cutoff = this.now() - 2 * INBOX_CLOCK_SKEW_MS;
        for (const [k, t] of this.seenLocal) if (t < cutoff) this.seenLocal.delete(k);
      }
      this.seenLocal.set(key, timestamp);
      return r.rowCount === 1;
    },
  };

  async take(agent: string, waitMs: number, serviceId?: string): Promise<InboxJob[]> {
    await this.touch(agent);
    let jobs = await this.takeQueued(agent, serviceId);
    if (!jobs.length && waitMs > 0) {
      const until = Date.now() + Math.min(waitMs, this.opts.maxWaitMs);
      // A notification wakes the wait; without one (lost, or the LISTEN connection down) it looks again every fallbackMs.
      for (let left = until - Date.now(); !jobs.length && left > 0 && !this.stopping; left = until - Date.now()) {
        await this.waitForJob(agent, Math.min(left, this.fallbackMs));
        if (this.stopping) break;
        jobs = await this.takeQueued(agent, serviceId);
      }
      await this.touch(agent);
    }
    return jobs;
  }

  /**
   * The agent's answer (see ProviderInbox.answer): one conditional UPDATE ends the job when it is
   * open and in time; otherwise the row says why not (404, 409 answered, 409 expired).
   */
  async answer(agent: string, jobId: string, answer: unknown, size: number): Promise<InboxJob> {
    if (!/^[0-9a-f]{32}$/.test(jobId)) throw new InboxError(InboxErrorCode.JOB_NOT_FOUND, `no job ${jobId} for this agent`);
    const tooLarge = size > this.opts.maxResultBytes;
    let checked;
    try {
      checked = tooLarge ? undefined : checkAnswer(answer);
    } catch (e) {
      // A job that cannot be answered says so first, as the LevelDB inbox does.
      throw (await this.refusal(agent, jobId)) ?? e;
    }
    const error = tooLarge ? tooLargeError(this.opts.maxResultBytes) : checked?.kind === 'failure' ? { code: InboxErrorCode.PROVIDER_FAILED, message: checked.message } : undefined;
    const result = checked?.kind === 'result' ? checked.result : undefined;
    const now = this.now();
    this.statWrites++;
    const { rows } = await this.q<JobRow & { calls: string; failures: string; latencies: string }>(
      `WITH j AS (
         UPDATE inbox_jobs SET status = $3, result = $4::json, error = $5::jsonb, answered_at = $6
         WHERE id = $1 AND agent = $2 AND ${OPEN} AND deadline > $6 RETURNING ${JOB_COLUMNS}
       ), s AS (
         INSERT INTO inbox_stats AS st (service_id, calls, failures, latencies)
         SELECT service_id, CASE WHEN status = 'done' THEN 1 ELSE 0 END, CASE WHEN status = 'done' THEN 0 ELSE 1 END,
                CASE WHEN status = 'done' THEN ARRAY[answered_at::bigint - created_at::bigint] ELSE '{}'::bigint[] END FROM j
         ON CONFLICT (service_id) DO UPDATE SET calls = st.calls + EXCLUDED.calls, failures = st.failures + EXCLUDED.failures,
           latencies = (st.latencies || EXCLUDED.latencies)[greatest(1, cardinality(st.latencies) + cardinality(EXCLUDED.latencies) - 100):]
         RETURNING calls::text AS calls, failures::text AS failures, array_to_json(latencies)::text AS latencies
       ), n AS (
         SELECT pg_notify('${INBOX_END_CHANNEL}', id) FROM j
       )
       SELECT j.*, s.calls, s.failures, s.latencies FROM j, s WHERE (SELECT count(*) FROM n) >= 0`,
      [jobId, agent, error ? 'failed' : 'done', error ? null : JSON.stringify(result ?? null), error ? JSON.stringify(error) : null, now],
    );
    const row = rows[0];
    if (!row) throw (await this.refusal(agent, jobId)) ?? new InboxError(InboxErrorCode.JOB_EXPIRED, `job ${jobId} expired; the caller was refunded`);
    this.stats.set(row.service_id, { calls: Number(row.calls), failures: Number(row.failures), latencies: JSON.parse(row.latencies) as number[] });
    this.version++;
    await this.touch(agent);
    // The waiting node learns it by notification; when it is this one, at once.
    if (error) this.settle(jobId, undefined, runErrorOf(error));
    else this.settle(jobId, { value: result ?? null });
    if (tooLarge) throw new InboxError(InboxErrorCode.RESULT_TOO_LARGE, `result larger than ${this.opts.maxResultBytes} bytes: the job failed and the caller is refunded`);
    return jobOf(row);
  }

  /**
   * The signer lease holder's sweep: expires the open jobs of nodes gone from the fleet (the
   * rule of PgLedger.orphanedClaims: no heartbeat for `goneMs`, stopped, no row, or restarted
   * since the job) and jobs left open long past their deadline; deletes old ended jobs and
   * signatures. Returns the jobs expired.
   */
  async expireOrphaned(goneMs = FLEET_GONE_MS): Promise<number> {
    const now = this.now();
    const expired = await this.expire(
      `j.deadline < $5 OR NOT EXISTS (SELECT 1 FROM fleet_nodes f WHERE f.node_id = j.node_id AND f.stopped_at IS NULL
         AND f.seen_at > now() - make_interval(secs => $4) AND f.started_at <= to_timestamp(j.created_at::double precision / 1000))`,
      [goneMs / 1000, now - 60_000],
      { code: 'node_restarted', message: 'the node serving this call stopped before the provider answered' },
      false,
    );
    await this.q(`DELETE FROM inbox_jobs WHERE created_at < $1 AND NOT (${OPEN})`, [now - INBOX_JOB_KEEP_MS]);
    await this.q(`DELETE FROM inbox_signatures WHERE ts < $1`, [now - 2 * INBOX_CLOCK_SKEW_MS]);
    return expired;
  }

  // ---- internals ----

  /** Expires the open jobs matching `where` (see expireStatement), counting their failures here too. */
  private async expire(where: string, params: unknown[], error: { code: string; message: string }, offline: boolean): Promise<number> {
    this.statWrites++;
    const { rows } = await this.q<{ id: string; service_id: string; agent: string }>(expireStatement(where), [JSON.stringify(error), this.now(), offline, ...params]);
    for (const r of rows) {
      const s = this.stats.get(r.service_id) ?? { calls: 0, failures: 0, latencies: [] };
      this.stats.set(r.service_id, { ...s, failures: s.failures + 1 });
    }
    if (rows.length) this.version++;
    return rows.length;
  }

  /** The run's timeout: expire the job if it is still open; if the answer won, its row decides. */
  private async decide(id: string): Promise<void> {
    const w = this.waiters.get(id);
    if (!w || w.deciding) return;
    w.deciding = true;
    const timeout = new ServiceError(InboxErrorCode.PROVIDER_TIMEOUT, `the provider did not answer within ${w.timeoutMs} ms`);
    try {
      const now = this.now();
      const n = await this.expire(`j.id = $4`, [id], { code: InboxErrorCode.PROVIDER_TIMEOUT, message: timeout.message }, true);
      if (n === 1) {
        // An agent that let a job expire is offline until it polls again (its grace is over).
        this.markOffline(w.agent, now);
        this.settle(id, undefined, timeout);
        return;
      }
      await this.conclude([id], true);
    } catch {
      // The database cannot say: the run fails (refunded); the open row is expired by the sweep or this node's restart.
    }
    this.settle(id, undefined, timeout);
  }

  /**
   * Ends the waits of `ids` whose rows ended (done: the result; failed or expired: the stored
   * error). A wait whose timeout is being decided is left to `decide` (`deciding`: its own call):
   * the notification of its own expiry can arrive before its UPDATE's answer, and the caller must
   * not hear of the timeout before the agent is marked offline.
   */
  private async conclude(ids: readonly string[], deciding = false): Promise<void> {
    ids = ids.filter((id) => deciding || !this.waiters.get(id)?.deciding);
    if (!ids.length) return;
    const { rows } = await this.q<{ id: string; status: InboxJob['status']; result: string | null; error: string | null }>(
      `SELECT id, status, result::text AS result, error::text AS error FROM inbox_jobs WHERE id = ANY($1::text[]) AND NOT (${OPEN})`,
      [ids],
    );
    for (const r of rows) {
      if (r.status === 'done') this.settle(r.id, { value: r.result === null ? null : (JSON.parse(r.result) as unknown) });
      else this.settle(r.id, undefined, runErrorOf(r.error ? (JSON.parse(r.error) as { code: string; message: string }) : { code: InboxErrorCode.PROVIDER_FAILED, message: 'the job ended without an answer' }));
    }
  }

  private settle(id: string, ok: { value: unknown } | undefined, error?: Error): void {
    const w = this.waiters.get(id);
    if (!w) return;
    this.waiters.delete(id);
    if (ok) w.resolve(ok.value);
    else w.reject(error!);
  }

  /** Why `jobId` cannot be answered by `agent` (undefined: it is open and in time). */
  private async refusal(agent: string, jobId: string): Promise<InboxError | undefined> {
    const { rows } = await this.q<{ agent: string; status: InboxJob['status']; deadline: string }>(`SELECT agent, status, deadline::text AS deadline FROM inbox_jobs WHERE id = $1`, [jobId]);
    const r = rows[0];
    if (!r || r.agent !== agent) return new InboxError(InboxErrorCode.JOB_NOT_FOUND, `no job ${jobId} for this agent`);
    await this.touch(agent);
    if (r.status === 'done' || r.status === 'failed') return new InboxError(InboxErrorCode.ALREADY_ANSWERED, `job ${jobId} was answered already`);
    if (r.status === 'expired' || Number(r.deadline) <= this.now()) return new InboxError(InboxErrorCode.JOB_EXPIRED, `job ${jobId} expired; the caller was refunded`);
    return undefined;
  }

  /** Hands out the agent's queued jobs in one statement (two nodes never hand out one job). */
  private async takeQueued(agent: string, serviceId?: string): Promise<InboxJob[]> {
    const now = this.now();
    const values: unknown[] = [agent, now, this.opts.maxTake];
    if (serviceId !== undefined) values.push(serviceId);
    const { rows } = await this.q<JobRow>(
      `UPDATE inbox_jobs SET status = 'taken', taken_at = $2 WHERE id IN (
         SELECT id FROM inbox_jobs WHERE agent = $1 AND status = 'queued' AND deadline > $2 ${serviceId !== undefined ? 'AND service_id = $4' : ''}
         ORDER BY created_at LIMIT $3 FOR UPDATE SKIP LOCKED
       ) RETURNING ${JOB_COLUMNS}`,
      values,
    );
    return rows.map(jobOf).sort((a, b) => a.createdAt - b.createdAt);
  }

  /** Records a poll: in memory at once, in the table at most every POLL_PERSIST_MS (at once when the agent was offline). */
  private async touch(agent: string): Promise<void> {
    const wasOnline = this.isOnline(agent);
    const now = this.now();
    this.polls.set(agent, now);
    if (!wasOnline) this.version++;
    if (wasOnline && now - (this.persistedPoll.get(agent) ?? 0) < POLL_PERSIST_MS) return;
    this.persistedPoll.set(agent, now);
    await this.q(`INSERT INTO inbox_agents AS a (agent, last_poll) VALUES ($1, $2) ON CONFLICT (agent) DO UPDATE SET last_poll = greatest(a.last_poll, EXCLUDED.last_poll)`, [agent, now]);
  }

  private markOffline(agent: string, at: number): void {
    this.offlineAt.set(agent, Math.max(at, this.offlineAt.get(agent) ?? 0));
    this.polls.delete(agent);
    this.graced.delete(agent);
    this.version++;
  }

  /** Re-reads the agents' polls and the stats (one at a time). */
  private refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      try {
        const writes = this.statWrites;
        const [agents, stats] = await Promise.all([
          this.q<{ agent: string; last_poll: string; offline_at: string }>(`SELECT agent, last_poll::text AS last_poll, offline_at::text AS offline_at FROM inbox_agents`),
          this.q<{ service_id: string; calls: string; failures: string; latencies: string }>(`SELECT service_id, calls::text AS calls, failures::text AS failures, array_to_json(latencies)::text AS latencies FROM inbox_stats`),
        ]);
        for (const r of agents.rows) {
          const wasOnline = this.isOnline(r.agent);
          const offline = Number(r.offline_at);
          // The agent let a job expire at another node: polls up to then no longer count.
          if (offline > (this.offlineAt.get(r.agent) ?? 0)) {
            this.offlineAt.set(r.agent, offline);
            if ((this.polls.get(r.agent) ?? 0) <= offline) this.polls.delete(r.agent);
            this.graced.delete(r.agent);
          }
          const last = Number(r.last_poll);
          if (last > (this.offlineAt.get(r.agent) ?? 0) && last > (this.polls.get(r.agent) ?? 0)) this.polls.set(r.agent, last);
          if (wasOnline !== this.isOnline(r.agent)) this.version++;
        }
        // A stats write of this node during the read may be missing from it: the next read applies.
        if (writes === this.statWrites) {
          const next = new Map<string, ProviderStats>();
          for (const r of stats.rows) next.set(r.service_id, { calls: Number(r.calls), failures: Number(r.failures), latencies: JSON.parse(r.latencies) as number[] });
          if (JSON.stringify([...next]) !== JSON.stringify([...this.stats])) this.version++;
          this.stats = next;
        }
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  /** The slow path: re-reads the jobs waited for (a notification may be lost) and reconnects the LISTEN connection. */
  private async fallback(): Promise<void> {
    if (this.stopping) return;
    if (!this.listener) await this.listen();
    await this.conclude([...this.waiters.keys()]);
  }

  private waitForJob(agent: string, ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const set = this.pollers.get(agent) ?? new Set();
      const wake = () => {
        clearTimeout(timer);
        set.delete(wake);
        if (!set.size) this.pollers.delete(agent);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      set.add(wake);
      this.pollers.set(agent, set);
    });
  }

  private wake(agent: string): void {
    for (const wake of [...(this.pollers.get(agent) ?? [])]) wake();
  }

  /** Opens the LISTEN connection (one at a time); a failure leaves it to the next fallback round. */
  private listen(): Promise<void> {
    if (this.stopping || this.listener) return Promise.resolve();
    this.connecting ??= (async () => {
      const c = new pg.Client({ connectionString: this.m.url, connectionTimeoutMillis: 3000, keepAlive: true, application_name: `native-node inbox ${this.m.nodeId}`.slice(0, 63) });
      c.on('notification', (n) => this.onNotification(n.channel, n.payload ?? ''));
      c.on('error', () => void this.dropListener(c));
      c.on('end', () => void this.dropListener(c));
      try {
        await c.connect();
        await c.query(`LISTEN ${INBOX_NEW_CHANNEL}; LISTEN ${INBOX_END_CHANNEL}`);
        if (this.stopping) {
          await c.end().catch(() => undefined);
          return;
        }
        this.listener = c;
        // Ends and jobs notified while it was down: looked at once.
        for (const agent of this.pollers.keys()) this.wake(agent);
        await this.conclude([...this.waiters.keys()]).catch(() => undefined);
      } catch {
        await c.end().catch(() => undefined);
      } finally {
        this.connecting = undefined;
      }
    })();
    return this.connecting;
  }

  private async dropListener(c: pg.Client): Promise<void> {
    if (this.listener === c) this.listener = undefined;
    await c.end().catch(() => undefined);
  }

  private async closeListener(): Promise<void> {
    await this.connecting;
    const c = this.listener;
    this.listener = undefined;
    if (c) await c.end().catch(() => undefined);
  }

  private onNotification(channel: string, payload: string): void {
    if (channel === INBOX_NEW_CHANNEL) this.wake(payload);
    else if (channel === INBOX_END_CHANNEL && this.waiters.has(payload)) void this.conclude([payload]).catch(() => undefined);
  }
}
