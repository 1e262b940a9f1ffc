/**
 * The koa application every HTTP listener of the node runs: one error middleware turns every
 * failure into `{"error": {"code", "message", …payload}}` with the status of
 * `httpStatusOf(code, errorStatuses)` (the statuses of other subsystems' codes are handed to the
 * app, never registered globally); anything without a known code is a 500 `internal_error`
 * whose stack goes to the log, never to the client. Then a request time limit, the JSON body
 * parser, and the routers. `HttpServer` listens with a start/stop lifecycle.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import type { Router } from '@koa/router';
import { bodyParser } from '@koa/bodyparser';
import { NodeError, isNodeError } from '../../consensus/errors.js';
import { silentLogger, type Logger } from '../../chain/types.js';

/** Error codes of the HTTP layer (consensus, codec and mempool codes pass through unchanged). */
export const HttpErrorCode = {
  NOT_FOUND: 'not_found',
  METHOD_NOT_ALLOWED: 'method_not_allowed',
  INVALID_JSON: 'invalid_json',
  INVALID_REQUEST: 'invalid_request',
  BODY_TOO_LARGE: 'body_too_large',
  UNSUPPORTED_ENCODING: 'unsupported_encoding',
  REQUEST_TIMEOUT: 'request_timeout',
  INVALID_TX_HEX: 'invalid_tx_hex',
  INVALID_TX_ID: 'invalid_tx_id',
  TX_NOT_FOUND: 'tx_not_found',
  INVALID_BLOCK_ID: 'invalid_block_id',
  BLOCK_NOT_FOUND: 'block_not_found',
  INVALID_ADDRESS: 'invalid_address',
  INVALID_QUERY: 'invalid_query',
  INTERNAL: 'internal_error',
  LISTEN_FAILED: 'http_listen_failed',
} as const;

const STATUS_BY_CODE: Record<string, number> = {
  not_found: 404,
  tx_not_found: 404,
  block_not_found: 404,
  method_not_allowed: 405,
  invalid_json: 400,
  invalid_request: 400,
  invalid_tx_hex: 400,
  invalid_tx_id: 400,
  invalid_block_id: 400,
  invalid_address: 400,
  invalid_query: 400,
  body_too_large: 413,
  unsupported_encoding: 415,
  request_timeout: 503,
  mempool_duplicate: 409,
  mempool_replacement_underpriced: 409,
  mempool_full: 503,
  mempool_queue_full: 503,
  chain_closed: 503,
  node_syncing: 503,
  internal_error: 500,
};

/** Statuses of other subsystems' error codes (x402, mining RPC…), handed to the app that serves their routes. */
export type ErrorStatuses = Readonly<Record<string, number>>;

/**
 * HTTP status of an error code: `extra` (the statuses the app was given), the table above, then
 * by family — `codec_*` 400 (malformed bytes), `tx_*` / `block_*` / other `mempool_*` 422 (a
 * consensus or policy rule refused it); undefined for codes the API does not expose (they
 * become 500 `internal_error`).
 */
export function httpStatusOf(code: string, extra: ErrorStatuses = {}): number | undefined {
  const s = extra[code] ?? STATUS_BY_CODE[code];
  if (s !== undefined) return s;
  if (code.startsWith('codec_')) return 400;
  if (code.startsWith('tx_') || code.startsWith('block_') || code.startsWith('mempool_')) return 422;
  return undefined;
}

/** Options of the HTTP API. */
export interface HttpOptions {
  readonly host: string;
  /** 0 picks a free port; `HttpServer.url` tells which. */
  readonly port: number;
  /** Largest JSON body, bytes. */
  readonly bodyLimit: number;
  /** Milliseconds before a request is answered 503 `request_timeout`. */
  readonly timeoutMs: number;
  /** Reported in `/api/v1/status`. */
  readonly version: string;
  /**
   * Accept requests Node's strict parser refuses, notably `Transfer-Encoding` together with
   * `Content-Length` (what cpuminer 2.5.0 sends with libcurl ≥ 7.x). Only for the dedicated
   * JSON-RPC listener (`--rpc-port`), never for the public API: lenient parsing is what
   * request smuggling through a proxy relies on.
   */
  readonly insecureParser?: boolean;
  /** Middleware run before the body is read, after error handling (the per-address limits of node/httpLimits.ts). */
  readonly guard?: Koa.Middleware;
}

/** Defaults of HttpOptions. */
export const defaultHttpOptions: HttpOptions = { host: '127.0.0.1', port: 8402, bodyLimit: 256 * 1024, timeoutMs: 15_000, version: '0.0.0' };

/** JSON-safe copy of an error payload (bigints as strings, undefined dropped). */
function jsonPayload(payload: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(payload)) {
    if (v === undefined || k === 'code' || k === 'message') continue;
    out[k] = typeof v === 'bigint' ? v.toString() : v;
  }
  return out;
}

/** The error middleware: maps coded errors to statuses and bodies; logs unexpected ones with their stack. */
function errorMiddleware(log: Logger, statuses: ErrorStatuses): Koa.Middleware {
  return async (ctx, next) => {
    const started = Date.now();
    try {
      await next();
      if (ctx.body === undefined || ctx.body === null) {
        if (ctx.status === 404) throw new NodeError(HttpErrorCode.NOT_FOUND, `no route for ${ctx.method} ${ctx.path}`);
        if (ctx.status === 405) throw new NodeError(HttpErrorCode.METHOD_NOT_ALLOWED, `${ctx.method} is not allowed on ${ctx.path}`);
      }
    } catch (e) {
      const status = isNodeError(e) ? httpStatusOf(e.code, statuses) : undefined;
      if (isNodeError(e) && status !== undefined) {
        ctx.status = status;
        ctx.body = { error: { code: e.code, message: e.message, ...jsonPayload(e.payload) } };
        if (status >= 500) log.warn({ code: e.code, method: ctx.method, path: ctx.path, err: e.message }, 'request failed');
        else log.debug({ code: e.code, method: ctx.method, path: ctx.path, status }, 'request refused');
      } else {
        ctx.status = 500;
        ctx.body = { error: { code: HttpErrorCode.INTERNAL, message: 'internal error' } };
        log.error({ err: e, method: ctx.method, path: ctx.path }, 'request crashed');
      }
    }
    log.debug({ method: ctx.method, path: ctx.path, status: ctx.status, ms: Date.now() - started }, 'request');
  };
}

/** Answers 503 `request_timeout` when the handler has not finished within `ms`. */
function timeoutMiddleware(ms: number): Koa.Middleware {
  return async (_ctx, next) => {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new NodeError(HttpErrorCode.REQUEST_TIMEOUT, `request took longer than ${ms} ms`)), ms);
    });
    try {
      await Promise.race([next(), expired]);
    } finally {
      clearTimeout(timer);
    }
  };
}

/** Maps body-parser failures (raw-body / co-body errors) to coded errors. */
function bodyError(err: Error & { type?: string; status?: number }): NodeError {
  if (err.type === 'entity.too.large' || err.status === 413) return new NodeError(HttpErrorCode.BODY_TOO_LARGE, 'request body is too large', { limit: (err as { limit?: number }).limit });
  if (err.type === 'encoding.unsupported' || err.status === 415) return new NodeError(HttpErrorCode.UNSUPPORTED_ENCODING, err.message);
  if (err instanceof SyntaxError || err.status === 400) return new NodeError(HttpErrorCode.INVALID_JSON, `request body is not valid JSON: ${err.message}`);
  return new NodeError(HttpErrorCode.INVALID_REQUEST, err.message);
}

/** A koa app speaking JSON: `first` middleware, the error and timeout middleware (with `errorStatuses` besides the API's own), the JSON body parser, then `routers`. */
export function createJsonApp(opts: Pick<HttpOptions, 'bodyLimit' | 'timeoutMs' | 'guard'>, log: Logger, routers: readonly Router[], errorStatuses: ErrorStatuses = {}, first: readonly Koa.Middleware[] = []): Koa {
  const app = new Koa();
  app.silent = true; // errors are logged by the error middleware, not koa's default handler
  // `first` runs outside the error handling, so it sees final statuses (metrics).
  for (const m of first) app.use(m);
  app.use(errorMiddleware(log, errorStatuses));
  if (opts.guard) app.use(opts.guard);
  app.use(timeoutMiddleware(opts.timeoutMs));
  app.use(
    bodyParser({
      enableTypes: ['json'],
      jsonLimit: opts.bodyLimit,
      // The API speaks JSON only: parse POST bodies as JSON whatever their Content-Type says.
      detectJSON: () => true,
      onError: (err) => {
        throw bodyError(err);
      },
    }),
  );
  for (const r of routers) {
    app.use(r.routes());
    app.use(r.allowedMethods());
  }
  return app;
}

/** A listening HTTP API with a start/stop lifecycle. */
export class HttpServer {
  private server?: Server;
  private boundUrl?: string;
  readonly app: Koa;

  constructor(
    private readonly opts: HttpOptions,
    app: Koa,
  ) {
    this.app = app;
  }

  /** Base URL once listening, e.g. `http://127.0.0.1:8402`. */
  get url(): string {
    if (!this.boundUrl) throw new Error('HTTP server is not listening');
    return this.boundUrl;
  }

  /** Starts listening; resolves once bound (port 0 resolved to the real port). */
  async start(): Promise<void> {
    const server = createServer({ insecureHTTPParser: this.opts.insecureParser === true }, this.app.callback());
    server.requestTimeout = this.opts.timeoutMs + 5_000;
    server.headersTimeout = Math.min(60_000, this.opts.timeoutMs + 5_000);
    await new Promise<void>((resolve, reject) => {
      const onError = (e: NodeJS.ErrnoException) =>
        reject(new NodeError(HttpErrorCode.LISTEN_FAILED, `cannot listen on ${this.opts.host}:${this.opts.port}: ${e.code ?? e.message}`, { host: this.opts.host, port: this.opts.port }));
      server.once('error', onError);
      server.listen(this.opts.port, this.opts.host, () => {
        server.off('error', onError);
        resolve();
      });
    });
    const addr = server.address() as AddressInfo;
    const host = addr.family === 'IPv6' || addr.address.includes(':') ? `[${addr.address}]` : addr.address;
    this.boundUrl = `http://${host}:${addr.port}`;
    this.server = server;
  }

  /** Stops accepting connections, closes idle ones at once and the rest after `graceMs`. */
  async stop(graceMs = 2_000): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    await closed;
    clearTimeout(timer);
  }
}

/** A server of `routers` alone (with the JSON app's middleware), e.g. the dedicated JSON-RPC port. */
export function createRouterServer(opts: HttpOptions, routers: readonly Router[], logger: Logger = silentLogger): HttpServer {
  return new HttpServer(opts, createJsonApp(opts, logger, routers));
}
