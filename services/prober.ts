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
 *   - a `down` or `degraded` service carries its `reason` ({code, message}, the catalog's
 *     `healthReason`): the check's own (a provider-backed service says `provider_not_configured`
 *     or `provider_down`), else the prober's (`not_implemented`, `not_for_sale`, `health_timeout`,
 *     `health_check_failed`, `slow`, or `health_check_down` when a check answered a bare `down`).
 */
import { silentLogger, type Logger } from '../chain/types.js';
import type { HealthReason, HealthStatus, ServiceContext, ServiceDefinition } from './types.js';

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
}

/** Defaults of HealthProberOptions. */
export const defaultHealthProberOptions: HealthProberOptions = { intervalMs: 60_000, jitter: 0.2, concurrency: 4, timeoutMs: 5_000, slowMs: 2_000 };

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
  /** Increases after every completed round (cache key of documents built from health). */
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
  private running: Promise<void> | undefined;
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
    return this.roundCount;
  }

  /** Last known health of a service (`unknown` before its first check). */
  get(serviceId: string): ServiceHealth {
    return this.state.get(serviceId) ?? UNKNOWN;
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
    let next = 0;
    const worker = async () => {
      while (next < defs.length && !this.stopped.signal.aborted) {
        const def = defs[next++];
        this.state.set(def.id, await this.probe(def));
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency, defs.length) }, worker));
    if (this.stopped.signal.aborted) return;
    this.checkedAt = this.now();
    this.roundCount++;
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
      this.running = this.probeAll()
        .catch((e: unknown) => this.log.warn({ err: e instanceof Error ? e.message : String(e) }, 'health round failed'))
        .finally(() => {
          this.running = undefined;
          if (this.stopped.signal.aborted) return;
          this.timer = setTimeout(loop, this.nextDelay());
          this.timer.unref();
        });
    };
    loop();
  }

  /** Stops the rounds, aborts the checks in flight and waits for the current round to end. */
  async stop(): Promise<void> {
    this.stopped.abort();
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }
}

/** Creates a prober (see `HealthProber`). */
export function createHealthProber(modules: HealthProberModules, opts: Partial<HealthProberOptions> = {}): HealthProber {
  return new HealthProber(modules, opts);
}
