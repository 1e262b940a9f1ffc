/**
 * The provider inbox of one node, in its LevelDB providers database (`<data-dir>/providers`): the
 * jobs, rules and refusals of x402/providers/inbox.ts, which has the interface and the state
 * machine. A fleet on a PostgreSQL ledger uses x402/providers/pgInbox.ts instead (`openInbox`,
 * x402/providers/open.ts, chooses).
 *
 * Jobs and per-service stats are kept in LevelDB (`j:<jobId>`, `s:<serviceId>`) so /agents and
 * the catalog keep their numbers across restarts; a job left open by a crash is expired at start
 * (its payment is refunded by the refund manager's start-up pass).
 *
 * Start-up grace (see inbox.ts): each agent's last poll is kept too (`p:<owner>`, written at most
 * every POLL_PERSIST_MS), and the time the node stopped (`m:stopped`); the node's last known
 * moment alive is its clean stop, or else the latest poll it recorded (a crash).
 *
 * Signatures used (`u:<hex sha256 of the signature's bytes>` → its timestamp) are written before
 * the request they open goes on, so one captured before a restart is still a replay after it;
 * kept until they could no longer pass the clock check (2 × INBOX_CLOCK_SKEW_MS), pruned at start
 * and as the set grows.
 */
import { randomBytes } from 'node:crypto';
import type { Level } from 'level';
import { toHex } from '../../consensus/hash.js';
import type { SignatureVerifier } from '../../chain/types.js';
import { ServiceError } from '../../services/types.js';
import { INBOX_CLOCK_SKEW_MS } from './inboxAuth.js';
import {
  authenticateInboxRequest,
  checkAnswer,
  defaultInboxOptions,
  InboxError,
  InboxErrorCode,
  medianOf,
  POLL_PERSIST_MS,
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

interface Waiter {
  resolve(value: unknown): void;
  reject(e: Error): void;
}

/** The provider inbox in the node's LevelDB (see module comment); PostgreSQL fleets use x402/providers/pgInbox.ts. */
export class ProviderInbox implements Inbox {
  private readonly jobs = new Map<string, InboxJob>();
  private readonly waiters = new Map<string, Waiter>();
  private readonly pollers = new Map<string, Set<() => void>>();
  private readonly lastPoll = new Map<string, number>();
  private readonly stats = new Map<string, ProviderStats>();
  private readonly seenSignatures = new Map<string, number>();
  /** Last poll written to disk, per agent. */
  private readonly persistedPoll = new Map<string, number>();
  /** Agents online before the restart, until `graceUntil` (see module comment). */
  private readonly graced = new Set<string>();
  private graceUntil = 0;
  private readonly now: () => number;
  private readonly opts: InboxOptions;
  /** Bumped when an agent goes on- or offline or a stat changes (document cache keys). */
  version = 0;
  /** The id inbox signatures must name: the ledger's seller id. */
  readonly nodeId: string;

  constructor(
    private readonly db: Level<string, string>,
    private readonly verifier: SignatureVerifier,
    private readonly keys: InboxKeys,
    private readonly hrp: string,
    opts: Partial<InboxOptions> & { readonly nodeId: string },
  ) {
    this.opts = { ...defaultInboxOptions, ...opts };
    this.now = opts.now ?? Date.now;
    this.nodeId = opts.nodeId;
  }

  /** Loads the stats, expires jobs a previous run left open, and grants the start-up grace. */
  async start(): Promise<void> {
    for await (const [k, v] of this.db.iterator({ gte: 's:', lt: 's;' })) this.stats.set(k.slice(2), JSON.parse(v) as ProviderStats);
    for await (const [k, v] of this.db.iterator({ gte: 'u:', lt: 'u;' })) this.seenSignatures.set(k.slice(2), Number(v));
    await this.pruneSeen(0);
    // The node's last known moment alive: its clean stop, or else the latest poll it recorded (a crash).
    let alive = Number((await this.db.get('m:stopped')) ?? 0);
    for await (const [k, v] of this.db.iterator({ gte: 'p:', lt: 'p;' })) {
      this.persistedPoll.set(k.slice(2), Number(v));
      alive = Math.max(alive, Number(v));
    }
    for (const [agent, t] of this.persistedPoll) if (alive - t <= this.opts.onlineWindowMs + POLL_PERSIST_MS) this.graced.add(agent);
    this.graceUntil = this.now() + (this.opts.startGraceMs ?? this.opts.onlineWindowMs);
    const open: InboxJob[] = [];
    for await (const [, v] of this.db.iterator({ gte: 'j:', lt: 'j;' })) {
      const job = JSON.parse(v) as InboxJob;
      if (job.status === 'queued' || job.status === 'taken') open.push(job);
    }
    for (const job of open) await this.finish(job, 'expired', { code: 'node_restarted', message: 'the node restarted before the provider answered' });
  }

  /** Fails every waiting job (node stopping): the callers are refunded. Records the stop time and the agents' last polls (start-up grace). */
  async stop(): Promise<void> {
    for (const [id, w] of this.waiters) w.reject(new ServiceError(InboxErrorCode.PROVIDER_FAILED, `job ${id}: the node is stopping`));
    this.waiters.clear();
    for (const set of this.pollers.values()) for (const wake of set) wake();
    const ops: { type: 'put'; key: string; value: string }[] = [{ type: 'put', key: 'm:stopped', value: String(this.now()) }];
    for (const [agent, t] of this.lastPoll) ops.push({ type: 'put', key: `p:${agent}`, value: String(t) });
    await this.db.batch(ops).catch(() => undefined);
  }

  /** Whether a payment already made for the agent's services is still served though it is not online: its start-up grace (see module comment). */
  inGrace(agent: string): boolean {
    return this.graced.has(agent) && this.now() < this.graceUntil;
  }

  /** Whether the agent (owner id hex) polled within the online window. */
  isOnline(agent: string): boolean {
    const t = this.lastPoll.get(agent);
    return t !== undefined && this.now() - t <= this.opts.onlineWindowMs;
  }

  /** Unix ms of the agent's last poll (0: never since start). */
  lastPollAt(agent: string): number {
    return this.lastPoll.get(agent) ?? 0;
  }

  /** Calls, failures and median latency of a provider service. */
  statsOf(serviceId: string): ProviderStatsView {
    const s = this.stats.get(serviceId);
    return s ? { calls: s.calls, failures: s.failures, medianLatencyMs: medianOf(s.latencies) } : { calls: 0, failures: 0, medianLatencyMs: 0 };
  }

  /**
   * Runs one paid job: queues it for the agent and resolves with the agent's result, or rejects
   * with a ServiceError (failure, oversized result, abort by the service's timeout).
   */
  async run(serviceId: string, agent: string, request: string | undefined, input: unknown, timeoutMs: number, signal: AbortSignal): Promise<unknown> {
    const job: InboxJob = { id: toHex(randomBytes(16)), serviceId, agent, ...(request === undefined ? {} : { request }), input, createdAt: this.now(), deadline: this.now() + timeoutMs, status: 'queued' };
    this.jobs.set(job.id, job);
    await this.save(job);
    const result = new Promise<unknown>((resolve, reject) => this.waiters.set(job.id, { resolve, reject }));
    const onAbort = () => {
      const w = this.waiters.get(job.id);
      if (!w) return;
      this.waiters.delete(job.id);
      // The run's timeout fired: the late answer is refused from now on.
      void this.finish(job, 'expired', { code: InboxErrorCode.PROVIDER_TIMEOUT, message: `the provider did not answer within ${timeoutMs} ms` });
      w.reject(new ServiceError(InboxErrorCode.PROVIDER_TIMEOUT, `the provider did not answer within ${timeoutMs} ms`));
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    this.wake(agent);
    try {
      return await result;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Checks a signed request (the inbox; the boards with `requireAgent: false`, any key published
   * on chain); returns the signer's account id (hex). Throws InboxError with a 401 code (see the
   * module comment) for a missing, expired, used, foreign or wrong signature,
   * `inbox_not_registered_agent` for a key that registered no agent.
   */
  async authenticate(req: SignedRequest, opts: { requireAgent?: boolean } = {}): Promise<string> {
    await this.pruneSeen();
    return authenticateInboxRequest(req, opts, { hrp: this.hrp, nodeId: this.nodeId, now: this.now, keys: this.keys, verifier: this.verifier, seen: this.seen });
  }

  private readonly seen: SeenSignatures = {
    has: (key) => this.seenSignatures.has(key),
    add: async (key, timestamp) => {
      if (this.seenSignatures.has(key)) return false;
      this.seenSignatures.set(key, timestamp);
      await this.db.put(`u:${key}`, String(timestamp));
      return true;
    },
  };

  /** Hands the agent its queued jobs (of one service when given), waiting up to `waitMs` for one; marks the agent online. */
  async take(agent: string, waitMs: number, serviceId?: string): Promise<InboxJob[]> {
    await this.touch(agent);
    let jobs = this.queued(agent, serviceId);
    if (!jobs.length && waitMs > 0) {
      await new Promise<void>((resolve) => {
        const set = this.pollers.get(agent) ?? new Set();
        const wake = () => {
          clearTimeout(timer);
          set.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, Math.min(waitMs, this.opts.maxWaitMs));
        set.add(wake);
        this.pollers.set(agent, set);
      });
      await this.touch(agent);
      jobs = this.queued(agent, serviceId);
    }
    const now = this.now();
    for (const job of jobs) {
      job.status = 'taken';
      job.takenAt = now;
      await this.save(job);
    }
    return jobs;
  }

  /**
   * The agent's answer to a job: `{result}` or `{error: {message}}`, `size` the body's bytes.
   * Throws InboxError: another agent's or an unknown job (404), answered already (409), too late
   * (409 `inbox_job_expired`), too large (413: the job fails and the caller is refunded).
   */
  async answer(agent: string, jobId: string, answer: unknown, size: number): Promise<InboxJob> {
    // Finished jobs leave memory; their record on disk still tells "answered" from "unknown".
    const job = this.jobs.get(jobId) ?? (/^[0-9a-f]{32}$/.test(jobId) ? await this.load(jobId) : undefined);
    if (!job || job.agent !== agent) throw new InboxError(InboxErrorCode.JOB_NOT_FOUND, `no job ${jobId} for this agent`);
    await this.touch(agent);
    if (job.status === 'done' || job.status === 'failed') throw new InboxError(InboxErrorCode.ALREADY_ANSWERED, `job ${jobId} was answered already`);
    const waiter = this.waiters.get(jobId);
    if (job.status === 'expired' || !waiter) throw new InboxError(InboxErrorCode.JOB_EXPIRED, `job ${jobId} expired; the caller was refunded`);
    if (size > this.opts.maxResultBytes) {
      this.waiters.delete(jobId);
      const error = tooLargeError(this.opts.maxResultBytes);
      await this.finish(job, 'failed', error);
      waiter.reject(runErrorOf(error));
      throw new InboxError(InboxErrorCode.RESULT_TOO_LARGE, `result larger than ${this.opts.maxResultBytes} bytes: the job failed and the caller is refunded`);
    }
    const a = checkAnswer(answer);
    this.waiters.delete(jobId);
    if (a.kind === 'result') {
      await this.finish(job, 'done');
      waiter.resolve(a.result);
    } else {
      const error = { code: InboxErrorCode.PROVIDER_FAILED, message: a.message };
      await this.finish(job, 'failed', error);
      waiter.reject(runErrorOf(error));
    }
    return job;
  }

  private queued(agent: string, serviceId?: string): InboxJob[] {
    const out: InboxJob[] = [];
    const now = this.now();
    for (const job of this.jobs.values()) {
      if (out.length >= this.opts.maxTake) break;
      if (job.agent === agent && job.status === 'queued' && job.deadline > now && (serviceId === undefined || job.serviceId === serviceId)) out.push(job);
    }
    return out;
  }

  private async touch(agent: string): Promise<void> {
    const wasOnline = this.isOnline(agent);
    const now = this.now();
    this.lastPoll.set(agent, now);
    if (!wasOnline) this.version++;
    if (now - (this.persistedPoll.get(agent) ?? 0) < POLL_PERSIST_MS) return;
    this.persistedPoll.set(agent, now);
    await this.db.put(`p:${agent}`, String(now));
  }

  private wake(agent: string): void {
    for (const wake of [...(this.pollers.get(agent) ?? [])]) wake();
  }

  private async finish(job: InboxJob, status: 'done' | 'failed' | 'expired', error?: { code: string; message: string }): Promise<void> {
    if (job.status === 'done' || job.status === 'failed' || job.status === 'expired') return;
    job.status = status;
    job.answeredAt = this.now();
    if (error) job.error = error;
    const s = this.stats.get(job.serviceId) ?? { calls: 0, failures: 0, latencies: [] };
    if (status === 'done') {
      s.calls++;
      s.latencies.push(job.answeredAt - job.createdAt);
      if (s.latencies.length > 101) s.latencies.shift();
    } else {
      s.failures++;
    }
    if (status === 'expired') {
      // An agent that let a job expire is offline until it polls again: later callers get 503, not a wait (and its grace is over).
      this.lastPoll.delete(job.agent);
      this.graced.delete(job.agent);
    }
    this.stats.set(job.serviceId, s);
    this.version++;
    // Finished jobs leave memory; their record stays on disk.
    this.jobs.delete(job.id);
    await this.db.batch([
      { type: 'put', key: `j:${job.id}`, value: JSON.stringify(job) },
      { type: 'put', key: `s:${job.serviceId}`, value: JSON.stringify(s) },
    ]);
  }

  private async load(id: string): Promise<InboxJob | undefined> {
    const raw = await this.db.get(`j:${id}`);
    return raw === undefined ? undefined : (JSON.parse(raw) as InboxJob);
  }

  private async save(job: InboxJob): Promise<void> {
    await this.db.put(`j:${job.id}`, JSON.stringify(job));
  }

  /** Forgets the signatures that could no longer pass the clock check, once there are `atLeast` of them. */
  private async pruneSeen(atLeast = 1000): Promise<void> {
    if (this.seenSignatures.size < atLeast) return;
    const cutoff = this.now() - 2 * INBOX_CLOCK_SKEW_MS;
    const old = [...this.seenSignatures].filter(([, t]) => t < cutoff).map(([k]) => k);
    for (const k of old) this.seenSignatures.delete(k);
    if (old.length) await this.db.batch(old.map((k) => ({ type: 'del' as const, key: `u:${k}` })));
  }
}
