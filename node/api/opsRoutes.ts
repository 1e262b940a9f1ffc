/**
 * Routes for operators and their load balancers, free and without credentials:
 *
 *   GET /health                 the process is up: `{status: "ok", version, uptime}` (always 200)
 *   GET /ready                  200 `{ready: true, checks}` only when the chain is open, the
 *                               ledger can be reached, the node is not syncing, the HTTP
 *                               surfaces serve and no refund is stuck; otherwise 503
 *                               `{ready: false, reason, checks}` (reason: the first failing check)
 *   GET /.well-known/x402.json  the protocol descriptor of `/.well-known/x402`, served by the same
 *                               route (this one rewrites the path and passes on), so the two
 *                               can never differ
 *
 * Mounted before the discovery router (the alias relies on it).
 */
import { Router } from '@koa/router';

/** One readiness condition: its name and whether it holds, with a reason when it does not. */
export interface ReadinessCheck {
  readonly name: string;
  readonly ok: boolean;
  /** Why it does not hold (a stable code, e.g. `node_syncing`). */
  readonly reason?: string;
  /** A condition that holds but the operator should see (a stable code, e.g. `payee_float_low`): listed in `warnings`, the node stays ready. */
  readonly warning?: string;
}

/** What the operator routes read. */
export interface OpsRouteModules {
  readonly version: string;
  /** The readiness conditions, evaluated per request. */
  readonly readiness: () => readonly ReadinessCheck[];
  /** Seconds the process has run (default `process.uptime`). */
  readonly uptime?: () => number;
}

/** Path of the protocol descriptor the `.json` alias serves. */
export const DESCRIPTOR_PATH = '/.well-known/x402';

/** Builds the router of `/health`, `/ready` and `/.well-known/x402.json`. */
export function createOpsRouter(m: OpsRouteModules): Router {
  const router = new Router();
  const uptime = m.uptime ?? process.uptime;
  router.get('/health', (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: 'ok', version: m.version, uptime: Math.round(uptime() * 1000) / 1000 };
  });
  router.get('/ready', (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const checks = m.readiness();
    const failed = checks.find((c) => !c.ok);
    const byName = Object.fromEntries(checks.map((c) => [c.name, c.ok ? 'ok' : (c.reason ?? 'failed')]));
    const warned = checks.filter((c) => c.warning !== undefined);
    const warnings = warned.length ? { warnings: Object.fromEntries(warned.map((c) => [c.name, c.warning])) } : {};
    ctx.status = failed ? 503 : 200;
    ctx.body = failed ? { ready: false, reason: failed.reason ?? `${failed.name}_not_ready`, checks: byName, ...warnings } : { ready: true, checks: byName, ...warnings };
  });
  router.get(`${DESCRIPTOR_PATH}.json`, async (ctx, next) => {
    ctx.path = DESCRIPTOR_PATH;
    await next();
  });
  return router;
}

/**
 * The node's readiness conditions from its parts' states. `ledgerAvailable` false (a PostgreSQL
 * ledger that cannot be reached) fails `ledger` with `ledger_unavailable`: every quote is refused
 * then, so a load balancer should send callers elsewhere. Refunds the payee cannot pay
 * (`payee_underfunded`) and a payee holding less than one refund's fee (`payee_float_low`) are
 * warnings: the node still sells what the payee could refund, so it stays ready.
 */
export function nodeReadiness(s: { chainOpen: () => boolean; syncing: () => boolean; serving: () => boolean; refundsStuck?: () => number; payeeFloatLow?: () => boolean; ledgerAvailable?: () => boolean }): () => ReadinessCheck[] {
  const ledger = s.ledgerAvailable;
  return () => [
    s.chainOpen() ? { name: 'chain', ok: true } : { name: 'chain', ok: false, reason: 'chain_closed' },
    ...(ledger ? [ledger() ? { name: 'ledger', ok: true } : { name: 'ledger', ok: false, reason: 'ledger_unavailable' }] : []),
    s.syncing() ? { name: 'sync', ok: false, reason: 'node_syncing' } : { name: 'sync', ok: true },
    s.serving() ? { name: 'http', ok: true } : { name: 'http', ok: false, reason: 'http_not_serving' },
    // Refunds the payee cannot pay: it sells only what it could refund (x402/core/paidCall.ts payeeRefusal), never nothing.
    (s.refundsStuck?.() ?? 0) > 0 ? { name: 'refunds', ok: true, warning: 'payee_underfunded' } : { name: 'refunds', ok: true },
    ...(s.payeeFloatLow?.() ? [{ name: 'payee', ok: true, warning: 'payee_float_low' }] : []),
  ];
}
