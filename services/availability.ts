/**
 * Whether a service of the registry can be bought right now, as the roster and the search report
 * it: it has an implementation, and the node's health prober does not see it `down` (a service
 * whose provider, data pack or configuration is missing answers 503 and is probed `down`), and
 * whether one may be quoted: never while the catalog shows it `down` (`quoteRefusal`).
 */
import type { HealthReason, HealthStatus, ServiceContext, ServiceDefinition } from './types.js';

/** A service's availability with the health behind it. */
export interface Availability {
  readonly available: boolean;
  /** The prober's last status; null where no prober runs (tools, tests): then only the implementation counts. */
  readonly healthStatus: HealthStatus | null;
  /** Why it is `down` or `degraded` (as the catalog's `healthReason`); null otherwise and without a prober. */
  readonly healthReason: HealthReason | null;
  /** Unix ms of that check (0: not checked yet); null without a prober. */
  readonly lastVerifiedAt: number | null;
}

const NOT_IMPLEMENTED: HealthReason = Object.freeze({ code: 'not_implemented', message: 'no implementation on this node' });

/**
 * `def`'s availability: unavailable without `run`; with a prober, unavailable while `down`.
 * `unknown` (no check yet, the first seconds after start) counts as available: the first round
 * runs at start and answers within the probes' time limit.
 */
export function availabilityOf(ctx: Pick<ServiceContext, 'health'>, def: ServiceDefinition): Availability {
  const implemented = typeof def.run === 'function';
  if (!ctx.health) return { available: implemented, healthStatus: null, healthReason: implemented ? null : NOT_IMPLEMENTED, lastVerifiedAt: null };
  const h = ctx.health.get(def.id);
  const status: HealthStatus = implemented ? h.status : 'down';
  const healthReason = !implemented ? NOT_IMPLEMENTED : status === 'down' || status === 'degraded' ? (h.reason ?? { code: 'health_check_down', message: `its health check answered ${status}` }) : null;
  return { available: implemented && status !== 'down', healthStatus: status, healthReason, lastVerifiedAt: h.lastVerifiedAt };
}

/**
 * Why `def` must not be quoted now: the catalog shows it `down` (the reason it shows, e.g.
 * `provider_down`), so the pre-payment check refuses it (503 `service_unavailable` with that
 * reason) for exactly as long as the catalog says so; undefined when it may be quoted, and
 * always where no prober runs (then only the service's own precheck decides).
 */
export function quoteRefusal(ctx: Pick<ServiceContext, 'health'>, def: Pick<ServiceDefinition, 'id'>): HealthReason | undefined {
  const h = ctx.health?.get(def.id);
  if (h?.status !== 'down') return undefined;
  return h.reason ?? { code: 'health_check_down', message: 'its health check answered down' };
}
