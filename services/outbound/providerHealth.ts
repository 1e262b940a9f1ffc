/**
 * Health of a provider-backed service, one generic way for every such service:
 *   - provider not configured on this node (`configured(ctx)` false, or no outbound client) →
 *     `down` without any call;
 *   - otherwise the outcome of the last real provider call counts: a service wraps its calls in
 *     `monitor.track(ctx, …)`, and a failure (anything but a caller's fault) makes it `down`, a
 *     success `active`, each with the measured latency;
 *   - when no outcome is younger than `minIntervalMs` (`retryAfterFailureMs` after a failure),
 *     `health` runs the cheap `probe` (a real call too, tracked the same way); probes are never
 *     closer than that, and concurrent health checks share one probe;
 *   - `current(ctx)` is that state now, without any call (the check's `current`, what the
 *     catalog shows between two rounds of the prober): `down` from a failed call until a later
 *     call or probe succeeds, however old the failure, so a service the catalog shows `down` is
 *     never quoted (the node's pre-payment check refuses what the catalog shows `down`) and is
 *     shown `active` the moment a successful call makes it quotable again;
 *   - `assertAvailable(ctx)` is the service's `precheck` part: a `ServiceError` (503 before any
 *     payment) while the provider is not configured or its last call failed less than
 *     `retryAfterFailureMs` ago (where no prober runs, a later paid call is the next probe).
 * State is kept per outbound client (one per node), so nodes and tests never share it.
 */
import { ServiceError, type HealthCheck, type HealthReport, type LiveHealth, type ServiceContext } from '../types.js';
import { OutboundError, type OutboundClient } from './types.js';

/** What a provider-backed service declares. */
export interface ProviderHealthSpec {
  /** Provider name (logs). */
  readonly name: string;
  /** Whether this node has the provider configured (reads `ctx.providers`). */
  readonly configured: (ctx: Omit<ServiceContext, 'signal'>) => boolean;
  /** One cheap real call that throws when the provider fails. */
  readonly probe: (ctx: ServiceContext) => Promise<void>;
  /** Least time between two probes, ms (default 5 minutes); a tracked real call resets it. */
  readonly minIntervalMs?: number;
  /** After a failure: how long the provider counts as down before the next probe may run, ms (default 1 minute). */
  readonly retryAfterFailureMs?: number;
}

/** Codes of the `ServiceError` of `assertAvailable`. */
export const ProviderErrorCode = {
  NOT_CONFIGURED: 'provider_not_configured',
  DOWN: 'provider_down',
} as const;

/** A provider's monitor: the service's `health`, and the wrapper of its real calls. */
export interface ProviderMonitor {
  /** The health check to put in the service definition. */
  health(ctx: ServiceContext): Promise<HealthReport>;
  /** The provider's state now, without a call (undefined before its first call or probe). */
  current(ctx: Omit<ServiceContext, 'signal'>): LiveHealth | undefined;
  /** `health` with `current`: the service definition's `health`. */
  readonly check: HealthCheck;
  /** Runs one real provider call, recording its latency and whether the provider failed. */
  track<T>(ctx: ServiceContext, call: () => Promise<T>): Promise<T>;
  /** Throws a `ServiceError` (`provider_not_configured`, `provider_down`) when a paid call could not be served now. */
  assertAvailable(ctx: ServiceContext): void;
}

/** Default time a failed provider counts as down before it is probed again, ms. */
export const DEFAULT_RETRY_AFTER_FAILURE_MS = 60_000;

/** Default least time between two probes of one provider, ms. */
export const DEFAULT_PROBE_INTERVAL_MS = 5 * 60_000;

interface Outcome {
  readonly ok: boolean;
  /** Unix ms. */
  readonly at: number;
  readonly latencyMs: number;
}

interface State {
  last?: Outcome;
  probing?: Promise<HealthReport>;
}

let changes = 0;

/** How many times a provider's state changed (failed ↔ answered), every monitor and node of the process together: a cache key of what shows health. */
export function providerHealthChanges(): number {
  return changes;
}

/** Whether an error is the caller's fault (their input), which says nothing about the provider. */
function isCallerFault(e: unknown): boolean {
  return e instanceof OutboundError && e.callerFault;
}

/** Creates the monitor of one provider (see module comment). */
export function createProviderMonitor(spec: ProviderHealthSpec): ProviderMonitor {
  const states = new WeakMap<OutboundClient, State>();
  const interval = spec.minIntervalMs ?? DEFAULT_PROBE_INTERVAL_MS;
  const retry = Math.min(interval, spec.retryAfterFailureMs ?? DEFAULT_RETRY_AFTER_FAILURE_MS);
  /** Whether an outcome still stands (a failure stands for a shorter time than a success). */
  const fresh = (o: Outcome | undefined, now: number): o is Outcome => o !== undefined && now - o.at < (o.ok ? interval : retry);
  const stateOf = (client: OutboundClient): State => {
    let s = states.get(client);
    if (!s) states.set(client, (s = {}));
    return s;
  };
  const notConfigured: HealthReport = { status: 'down', latencyMs: 0, reason: { code: ProviderErrorCode.NOT_CONFIGURED, message: `${spec.name} is not configured on this node` } };
  const failed = { code: ProviderErrorCode.DOWN, message: `${spec.name} failed its last call` };
  const report = (o: Outcome): HealthReport => (o.ok ? { status: 'active', latencyMs: o.latencyMs } : { status: 'down', latencyMs: o.latencyMs, reason: failed });

  async function track<T>(ctx: ServiceContext, call: () => Promise<T>): Promise<T> {
    const started = performance.now();
    const record = (ok: boolean) => {
      if (!ctx.outbound) return;
      const state = stateOf(ctx.outbound);
      if (state.last?.ok !== ok) changes++;
      state.last = { ok, at: ctx.now(), latencyMs: Math.round(performance.now() - started) };
    };
    try {
      const out = await call();
      record(true);
      return out;
    } catch (e) {
      if (!isCallerFault(e)) record(false);
      throw e;
    }
  }

  const current = (ctx: Omit<ServiceContext, 'signal'>): LiveHealth | undefined => {
    if (!ctx.outbound || !spec.configured(ctx)) return { ...notConfigured, latencyMs: 0, lastVerifiedAt: ctx.now() };
    const last = stateOf(ctx.outbound).last;
    return last && { ...report(last), latencyMs: last.latencyMs, lastVerifiedAt: last.at };
  };
  const health = async (ctx: ServiceContext): Promise<HealthReport> => {
    if (!ctx.outbound || !spec.configured(ctx)) return notConfigured;
    const state = stateOf(ctx.outbound);
    if (fresh(state.last, ctx.now())) return report(state.last);
    state.probing ??= track(ctx, () => spec.probe(ctx))
      .then(() => report(state.last!))
      .catch((e: unknown) => {
        ctx.log.debug({ provider: spec.name, err: e instanceof Error ? e.message : String(e) }, 'provider probe failed');
        return state.last ? report(state.last) : { status: 'down' as const, latencyMs: 0, reason: failed };
      })
      .finally(() => {
        state.probing = undefined;
      });
    return state.probing;
  };

  return {
    track,
    current,
    health,
    check: Object.assign((ctx: ServiceContext) => health(ctx), { current }),
    assertAvailable(ctx) {
      if (!ctx.outbound || !spec.configured(ctx)) throw new ServiceError(ProviderErrorCode.NOT_CONFIGURED, `${spec.name} is not configured on this node`);
      const last = stateOf(ctx.outbound).last;
      if (fresh(last, ctx.now()) && !last.ok) throw new ServiceError(ProviderErrorCode.DOWN, `${spec.name} failed its last call; retry later`);
    },
  };
}
