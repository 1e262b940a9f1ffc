/**
 * Per-address limit on the HTTP API's expensive endpoints: those that make the node verify
 * post-quantum signatures or run a service — `POST /api/v1/tx` (and `/api/tx`), `POST /api/x402…`
 * (quotes and paid calls) and `POST /api/mcp`. Each client address has a token bucket
 * (`ratePerSecond`, `burst`); a request that finds it empty is answered 429 `rate_limited` with
 * `Retry-After`, before its body is read. Cheap reads (status, blocks, accounts, discovery) are not
 * limited. Registered by the HTTP app as one middleware (`HttpOptions.guard`); the counters go into
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
  const middleware: Koa.Middleware = async (ctx, next) => {
    if (opts.ratePerSecond > 0 && isExpensiveRequest(ctx.method, ctx.path)) {
      const client = clientAddress(ctx.socket.remoteAddress);
      if (!buckets.take(client)) {
        limited++;
        const wait = buckets.retryAfterSeconds(client);
        ctx.set('Retry-After', String(wait));
        ctx.status = 429;
        ctx.body = { error: { code: HttpLimitErrorCode.RATE_LIMITED, message: `too many requests from this address to ${ctx.path} (at most ${opts.ratePerSecond} a second, burst ${opts.burst}; --http-expensive-rate): try again in ${wait} s`, retryAfter: wait } };
        return;
      }
    }
    await next();
  };
  return { middleware, info: () => ({ ratePerSecond: opts.ratePerSecond, burst: opts.burst, limited, clients: buckets.size }) };
}
