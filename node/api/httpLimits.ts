/**
 * Per-address limit on the HTTP API's expensive endpoints: those that make the node verify
 * post-quantum signatures or run a service — `POST /api/v1/tx` (and `/api/tx`), `POST /api/x402…`
 * (quotes and paid calls) and `POST /api/mcp`. Each client address has a token bucket
 * (`ratePerSecond`, `burst`); a request that finds it empty is answered 429 `rate_limited` with
 * `Retry-After`, before its body is read. A request that carries several operations (a JSON-RPC
 * batch of MCP messages) costs one token per operation: once its body is read, its handler charges
 * the others with `chargeOperations` (all or none; refused the same way). Cheap reads (status,
 * blocks, accounts, discovery) are not limited. Registered by the HTTP app as one middleware (`HttpOptions.guard`); the counters go into
 * `GET /api/v1/status` as `httpLimits`.
 */
import type Koa from 'koa';
import { AddressBuckets, clientAddress } from '../rateLimit.js';

/** Error code of a refused request. */
export const HttpLimitErrorCode = {
  RATE_LIMITED: 'rate_limited',
} as const;

/** Options of the expensive-endpoint limit. */
export interface HttpLimitOptions {
  /** Requests per second per client address; 0 turns the limit off. */
  readonly ratePerSecond: number;
  readonly burst: number;
  /** Client addresses tracked at most (least recently seen forgotten first). */
  readonly maxTracked?: number;
}

/** Where the middleware leaves the charge of a request's further operations (`chargeOperations`). */
const CHARGE = Symbol('httpLimits.charge');

/** The 429 answer of a refused request (the guard's and `chargeOperations`'). */
function refuse(ctx: Koa.Context, wait: number, message: string): void {
  ctx.set('Retry-After', String(wait));
  ctx.status = 429;
  ctx.body = { error: { code: HttpLimitErrorCode.RATE_LIMITED, message, retryAfter: wait } };
}

/**
 * Charges `extra` more tokens to the client of an expensive request already let through (one
 * operation each beyond the first, e.g. the other messages of a JSON-RPC batch), all or none.
 * True: go ahead. False: the request was answered 429 `rate_limited` with `Retry-After` (the
 * handler must stop). Without a limit (off, or not an expensive request) always true.
 */
export function chargeOperations(ctx: Koa.Context, extra: number): boolean {
  const charge = (ctx.state as Record<symbol, ((ctx: Koa.Context, n: number) => boolean) | undefined>)[CHARGE];
  return extra <= 0 || charge === undefined || charge(ctx, extra);
}

/** Which requests count as expensive (method and path). */
export function isExpensiveRequest(method: string, path: string): boolean {
  if (method !== 'POST') return false;
  return path === '/api/v1/tx' || path === '/api/tx' || path === '/api/mcp' || path === '/api/x402' || path.startsWith('/api/x402/');
}

/** The limit's counters for `GET /api/v1/status`. */
export interface HttpLimitInfo {
  readonly ratePerSecond: number;
  readonly burst: number;
  /** Requests answered 429 since the start. */
  readonly limited: number;
  /** Client addresses tracked now. */
  readonly clients: number;
}

/** The expensive-endpoint limit: its koa middleware and its counters. */
export interface HttpLimits {
  readonly middleware: Koa.Middleware;
  info(): HttpLimitInfo;
}

/** Builds the limit (see module comment). */
export function createHttpLimits(opts: HttpLimitOptions): HttpLimits {
  const buckets = new AddressBuckets({ ratePerSecond: opts.ratePerSecond, burst: opts.burst }, opts.maxTracked ?? 10_000);
  let limited = 0;
  const limits = `at most ${opts.ratePerSecond} a second, burst ${opts.burst}; --http-expensive-rate`;
  const charge = (ctx: Koa.Context, n: number): boolean => {
    const client = clientAddress(ctx.socket.remoteAddress);
    if (buckets.take(client, n)) return true;
    limited++;
    const wait = buckets.retryAfterSeconds(client, n);
    refuse(ctx, wait, `too many operations from this address to ${ctx.path}: ${n + 1} in this request (${limits}): try again in ${wait} s`);
    return false;
  };
  const middleware: Koa.Middleware = async (ctx, next) => {
    if (opts.ratePerSecond > 0 && isExpensiveRequest(ctx.method, ctx.path)) {
      const client = clientAddress(ctx.socket.remoteAddress);
      if (!buckets.take(client)) {
        limited++;
        const wait = buckets.retryAfterSeconds(client);
        refuse(ctx, wait, `too many requests from this address to ${ctx.path} (${limits}): try again in ${wait} s`);
        return;
      }
      (ctx.state as Record<symbol, unknown>)[CHARGE] = charge;
    }
    await next();
  };
  return { middleware, info: () => ({ ratePerSecond: opts.ratePerSecond, burst: opts.burst, limited, clients: buckets.size }) };
}
