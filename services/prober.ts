/**
 * The health prober: runs every service's cheap health check in the background and keeps the
 * last answer per service (`healthStatus`, `lastVerifiedAt`, `latencyMs` of the catalog).
 *
 *   - a round probes every service with at most `concurrency` checks in flight, each bounded by
 *     `timeoutMs` (its abort signal fires, the probe counts as `down`);
 *   - rounds repeat every `intervalMs` ± `jitter` (a fraction), the next one scheduled only when
 *     the previous finished, so rounds never overlap and a fleet of nodes does not probe in step;
 *   - a service that cannot run on this node (no `run`, or no payee to sell it) is `down` without
 *     a probe; one with `run` and no `health` is `active`; a check that throws is `down`; an
 *     `active` answer slower than `slowMs` is `degraded`; a check answering a `HealthReport` (a
 *     provider-backed service, services/outbound/providerHealth.ts) gives the latency of the real
 *     provider call it is based on, which is what `latencyMs` then shows;
 *   - before its first check a service is `unknown` with `lastVerifiedAt` and `latencyMs` 0;
 *   - a check with `current` (a provider-backed service) is read live: between rounds `get`
 *     answers its state now, so a real call that fails shows the service `down` at once and a
 *     call or probe that succeeds shows it `active` at once — the same state the node's
 *     pre-payment check refuses by (services/availability.ts), never an answer a round old;
 *   - services shown `down` are checked again every `downRecheckMs` between rounds (a provider
 *     that failed is probed again once its retry time is up), so one that is back is quotable,
 *     and shown so, within that time rather than at the next round;
 *   - a `down` or `degraded` service carries its `reason` ({code, message}, the catalog's
 *     `healthReason`): the check's own (a provider-backed service says `provider_not_configured`
 *     or `provider_down`), else the prober's (`not_implemented`, `not_for_sale`, `health_timeout`,
 *     `health_check_failed`, `slow`, or `health_check_down` when a check answered a bare `down`).
 */
import { silentLogger, type Logger } from '../chain/types.js';
import { providerHealthChanges } from './outbound/providerHealth.js';
import type { HealthReason, HealthStatus, LiveHealth, ServiceContext, ServiceDefinition } from './types.js';

/** Options of the prober. */
export interface HealthProberOptions {
  /** Mean time between the starts of two rounds, ms. */
  readonly intervalMs: number;
  /** Relative spread of the interval: 0.2 → each wait is intervalMs × [0.8, 1.2). */
  readonly jitter: number;
  /** Checks in flight at once. */
  readonly concurrency: number;
  /** Time limit of one check, ms. */
  readonly timeoutMs: number;
  /** An `active` check slower than this is reported `degraded`, ms. */
  readonly slowMs: number;
  /** How often the services shown `down` are checked again between rounds, ms (0: only in rounds). */
  readonly downRecheckMs: number;
}

/** Defaults of HealthProberOptions. */
export const defaultHealthProberOptions: HealthProberOptions = { intervalMs: 60_000, jitter: 0.2, concurrency: 4, timeoutMs: 5_000, slowMs: 2_000, downRecheckMs: 10_000 };

/** What the catalog shows of one service's health. */
export interface ServiceHealth {
  readonly status: HealthStatus;
  /** Unix ms of the last check (0: never checked). */
  readonly lastVerifiedAt: number;
  /** Duration of the last check, ms (integer). */
  readonly latencyMs: number;
  /** Why it is `down` or `degraded` (absent otherwise). */
  readonly reason?: HealthReason;
}

/** Codes of the reasons the prober gives itself (a check may give its own, e.g. `provider_down`). */
export const HealthReasonCode = {
  NOT_IMPLEMENTED: 'not_implemented',
  NOT_FOR_SALE: 'not_for_sale',
  TIMEOUT: 'health_timeout',
  FAILED: 'health_check_failed',
  SLOW: 'slow',
  DOWN: 'health_check_down',
} as const;

/** The catalog's `health` block. */
export interface HealthSummary {
  total: number;
  active: number;
  degraded: number;
  down: number;
  unknown: number;
  /** Unix ms when the last complete round finished (0: none yet). */
  checkedAt: number;
  /** Age of that round at `now`, ms (0 when there was none). */
  ageMs: number;
}

/** Read side of the prober (what discovery needs). */
export interface HealthReader {
  get(serviceId: string): ServiceHealth;
  summary(now: number): HealthSummary;
  /** Increases after every completed round and every change of a live state (cache key of documents built from health). */
  readonly rounds: number;
}

/** Collaborators of the prober (injectable clock and randomness for tests). */
export interface HealthProberModules {
  /** The services to probe (read at every round: the catalog may change). */
  readonly services: () => readonly ServiceDefinition[];
  /** Whether a service can be sold here at all; false → `down` without probing. */
  readonly isAvailable: (def: ServiceDefinition) => boolean;
  /** What the checks run with; each gets its own abort signal. */
  readonly context: Omit<ServiceContext, 'signal'>;
  readonly logger?: Logger;
  /** Unix ms. */
  readonly now?: () => number;
  /** Uniform in [0, 1). */
  readonly random?: () => number;
}

const UNKNOWN: ServiceHealth = Object.freeze({ status: 'unknown', lastVerifiedAt: 0, latencyMs: 0 });

/** The background prober (see module comment). `start()` runs a first round at once. */
export class HealthProber implements HealthReader {
  readonly options: HealthProberOptions;
  private readonly state = new Map<string, ServiceHealth>();
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly log: Logger;
  private timer: NodeJS.Timeout | undefined;
  private recheckTimer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private rechecking: Promise<void> | undefined;
  /** The services of the last round, by id (what `get` reads a live state from). */
  private defs = new Map<string, ServiceDefinition>();
  /** Live state changes before this prober was made (not its own). */
  private readonly changesBefore = providerHealthChanges();
  private readonly stopped = new AbortController();
  private started = false;
  private checkedAt = 0;
  private roundCount = 0;

  constructor(
    private readonly modules: HealthProberModules,
    opts: Partial<HealthProberOptions> = {},
  ) {
    this.options = { ...defaultHealthProberOptions, ...opts };
    if (!(this.options.concurrency >= 1)) throw new RangeError('concurrency must be at least 1');
    if (!(this.options.jitter >= 0 && this.options.jitter < 1)) throw new RangeError('jitter must be in [0, 1)');
    this.now = modules.now ?? Date.now;
    this.random = modules.random ?? Math.random;
    this.log = modules.logger ?? silentLogger;
  }

  get rounds(): number {
    return this.roundCount + providerHealthChanges() - this.changesBefore;
  }

  /** Health of a service: its live state where its check has one, else its last check (`unknown` before the first). */
  get(serviceId: string): ServiceHealth {
    const stored = this.state.get(serviceId) ?? UNKNOWN;
    // Not sold here at all (no implementation, no payee, provider agent offline): no call changes that.
    if (stored.reason?.code === HealthReasonCode.NOT_IMPLEMENTED || stored.reason?.code === HealthReasonCode.NOT_FOR_SALE) return stored;
    const def = this.defs.get(serviceId) ?? this.modules.services().find((d) => d.id === serviceId);
    const current = def?.health?.current;
    if (!def || !current || typeof def.run !== 'function' || !this.modules.isAvailable(def)) return stored;
    let live: LiveHealth | undefined;
    try {
      live = current(this.modules.context);
    } catch (e) {
      // A live read has no IO and should not throw; if one does, the last check stands.
      this.log.debug({ serviceId, err: e instanceof Error ? e.message : String(e) }, 'live health read failed');
    }
    return live ? this.shown(live) : stored;
  }

  /** What the catalog shows of a live state (an `active` one slower than `slowMs` is `degraded`, as in a round). */
  private shown(live: LiveHealth): ServiceHealth {
    const latencyMs = Math.max(0, Math.round(live.latencyMs));
    if (live.status === 'active' && latencyMs > this.options.slowMs) {
      return { status: 'degraded', lastVerifiedAt: live.lastVerifiedAt, latencyMs, reason: { code: HealthReasonCode.SLOW, message: `its last check took ${latencyMs} ms (slow above ${this.options.slowMs} ms)` } };
    }
    if (live.status === 'active' || live.status === 'unknown') return { status: live.status, lastVerifiedAt: live.lastVerifiedAt, latencyMs };
    return { status: live.status, lastVerifiedAt: live.lastVerifiedAt, latencyMs, reason: live.reason ?? { code: HealthReasonCode.DOWN, message: `its health check answered ${live.status}` } };
  }

  /** Counts per status over the current catalog, with the time of the last complete round. */
  summary(now: number): HealthSummary {
    const s: HealthSummary = { total: 0, active: 0, degraded: 0, down: 0, unknown: 0, checkedAt: this.checkedAt, ageMs: this.checkedAt ? Math.max(0, now - this.checkedAt) : 0 };
    for (const def of this.modules.services()) {
      s.total++;
      s[this.get(def.id).status]++;
    }
    return s;
  }

  /** Milliseconds until the next round: intervalMs × (1 ± jitter). */
  nextDelay(): number {
    const { intervalMs, jitter } = this.options;
    return Math.max(1, Math.round(intervalMs * (1 + jitter * (2 * this.random() - 1))));
  }

  /** Probes every service once (bounded concurrency); resolves when all checks ended. */
  async probeAll(): Promise<void> {
    const defs = [...this.modules.services()];
    this.defs = new Map(defs.map((d) => [d.id, d]));
    await this.probeEach(defs);
    if (this.stopped.signal.aborted) return;
    this.checkedAt = this.now();
    this.roundCount++;
  }

  /**
   * Checks again the services shown `down` now (not those that cannot be sold here at all); a
   * round in progress does it already. Resolves when those checks ended.
   */
  async recheckDown(): Promise<void> {
    if (this.running || this.rechecking) return this.rechecking;
    const down = [...this.modules.services()].filter((d) => {
      const h = this.get(d.id);
      return h.status === 'down' && h.reason?.code !== HealthReasonCode.NOT_IMPLEMENTED && h.reason?.code !== HealthReasonCode.NOT_FOR_SALE;
    });
    if (down.length === 0) return;
    this.rechecking = this.probeEach(down).finally(() => (this.rechecking = undefined));
    return this.rechecking;
  }

  /** Probes `defs` with at most `concurrency` checks in flight, storing each answer. */
  private async probeEach(defs: readonly ServiceDefinition[]): Promise<void> {
    let next = 0;
    const worker = async () => {
      while (next < defs.length && !this.stopped.signal.aborted) {
        const def = defs[next++];
        this.state.set(def.id, await this.probe(def));
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency, defs.length) }, worker));
  }

  /** One check of one service, never throws. */
  async probe(def: ServiceDefinition): Promise<ServiceHealth> {
    const started = this.now();
    if (typeof def.run !== 'function') return { status: 'down', lastVerifiedAt: started, latencyMs: 0, reason: { code: HealthReasonCode.NOT_IMPLEMENTED, message: 'no implementation on this node' } };
    if (!this.modules.isAvailable(def)) {
      const message = def.nodeOperated ? 'this node sells nothing: it has no payee address (--pay-to)' : `its provider agent ${def.providerAgent} is not online`;
      return { status: 'down', lastVerifiedAt: started, latencyMs: 0, reason: { code: HealthReasonCode.NOT_FOR_SALE, message } };
    }
    const health = def.health;
    if (!health) return { status: 'active', lastVerifiedAt: started, latencyMs: 0 };
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    let onStop: (() => void) | undefined;
    // Ends the check as `down` when its time is up or the prober stops, aborting its signal.
    const cut = new Promise<HealthStatus>((resolve) => {
      const end = (why: string) => {
        controller.abort(new Error(why));
        resolve('down');
      };
      timer = setTimeout(() => end(`health check of ${def.id} took longer than ${this.options.timeoutMs} ms`), this.options.timeoutMs);
      onStop = () => end('prober stopped');
      this.stopped.signal.addEventListener('abort', onStop, { once: true });
    });
    let status: HealthStatus;
    let reportedMs: number | undefined;
    let reason: HealthReason | undefined;
    try {
      const answer = await Promise.race([health({ ...this.modules.context, signal: controller.signal }), cut]);
      // A provider-backed check may answer from its last real call: its latency is that call's.
      if (typeof answer === 'string') status = answer;
      else {
        status = answer.status;
        reportedMs = answer.latencyMs;
        reason = answer.reason;
      }
      if (controller.signal.aborted && status === 'down') {
        const why = controller.signal.reason instanceof Error ? controller.signal.reason.message : 'health check aborted';
        reason = { code: HealthReasonCode.TIMEOUT, message: why };
      }
    } catch (e) {
      const err = e instanceof Error ? e.message : String(e);
      this.log.debug({ serviceId: def.id, err }, 'health check failed');
      status = 'down';
      reason = { code: HealthReasonCode.FAILED, message: `its health check failed: ${err}` };
    } finally {
      clearTimeout(timer);
      if (onStop) this.stopped.signal.removeEventListener('abort', onStop);
    }
    const latencyMs = Math.max(0, Math.round(reportedMs ?? this.now() - started));
    if (status === 'active' && latencyMs > this.options.slowMs) {
      status = 'degraded';
      reason = { code: HealthReasonCode.SLOW, message: `its last check took ${latencyMs} ms (slow above ${this.options.slowMs} ms)` };
    }
    if (status !== 'active' && status !== 'degraded' && status !== 'down' && status !== 'unknown') status = 'down';
    if (status === 'active' || status === 'unknown') return { status, lastVerifiedAt: started, latencyMs };
    reason ??= { code: HealthReasonCode.DOWN, message: `its health check answered ${status}` };
    return { status, lastVerifiedAt: started, latencyMs, reason };
  }

  /** Starts the rounds: one now, then one every jittered interval after the previous ended. */
  start(): void {
    if (this.started) return;
    this.started = true;
    const loop = () => {
      // A recheck in flight ends first: the round's answers are the newer ones.
      this.running = Promise.resolve(this.rechecking)
        .then(() => this.probeAll())
        .catch((e: unknown) => this.log.warn({ err: e instanceof Error ? e.message : String(e) }, 'health round failed'))
        .finally(() => {
          this.running = undefined;
          if (this.stopped.signal.aborted) return;
          this.timer = setTimeout(loop, this.nextDelay());
          this.timer.unref();
        });
    };
    loop();
    if (this.options.downRecheckMs > 0) {
      this.recheckTimer = setInterval(() => {
        this.recheckDown().catch((e: unknown) => this.log.warn({ err: e instanceof Error ? e.message : String(e) }, 'health recheck failed'));
      }, this.options.downRecheckMs);
      this.recheckTimer.unref();
    }
  }

  /** Stops the rounds, aborts the checks in flight and waits for the current round to end. */
  async stop(): Promise<void> {
    this.stopped.abort();
    clearTimeout(this.timer);
    clearInterval(this.recheckTimer);
    this.timer = undefined;
    this.recheckTimer = undefined;
    await this.running;
    await this.rechecking;
  }
}

/** Creates a prober (see `HealthProber`). */
export function createHealthProber(modules: HealthProberModules, opts: Partial<HealthProberOptions> = {}): HealthProber {
  return new HealthProber(modules, opts);
}
