/**
 * The HTTP API (koa + @koa/router): transaction submission and the chain explorer routes.
 *
 *   POST /api/v1/tx, POST /api/tx      {"tx": "<hex>"} → {"txId", "status": "accepted"}
 *   GET  /api/v1/tx/:id                pending or mined transaction, decoded
 *   GET  /api/v1/block/:heightOrHash   header, coinbase, tx ids
 *   GET  /api/v1/blocks?from=&limit=   block summaries, newest first, from height `from` down
 *   GET  /api/v1/account/:address      balance, nonce, pending nonce
 *   GET  /api/v1/mempool?limit=        size and the highest fee-rate entries
 *   GET  /api/v1/status                network, tip, difficulty, hashrate, mempool, mining
 *
 * One error middleware turns every failure into `{"error": {"code", "message", …payload}}` with
 * the status of `httpStatusOf(code, errorStatuses)` (the statuses of other subsystems' codes are
 * handed to the app, never registered globally); anything without a known code is a 500 `internal_error`
 * whose stack goes to the log, never to the client.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { Router } from '@koa/router';
import { bodyParser } from '@koa/bodyparser';
import { NodeError, isNodeError } from '../../consensus/errors.js';
import { encodeAddress, tryDecodeAddress } from '../../consensus/address.js';
import { coinbaseId, encodeCoinbase, type Block } from '../../consensus/block.js';
import { fromHex, isHex, toHex } from '../../consensus/hash.js';
import { difficultyOfBits } from '../../consensus/pow.js';
import { encodeTx, txId as computeTxId, type Tx } from '../../consensus/tx.js';
import { getTxType } from '../../consensus/txTypes/index.js';
import type { ChainParams } from '../../consensus/params.js';
import { silentLogger, type ChainEntry, type ChainReader, type Logger, type MempoolReader } from '../../chain/types.js';
import { formatAmount } from '../../consensus/amount.js';
import { blockHeaderJson } from '../../chain/blockJson.js';
import { estimateHashrate } from '../../chain/hashrate.js';

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

/** What the API needs to accept transactions (the mempool). */
export interface TxSubmitter {
  add(bytes: Uint8Array): Promise<{ id: string; status: 'accepted' }>;
}

/** Miner figures shown in `/api/v1/status`. */
export interface MinerStats {
  running: boolean;
  threads: number;
  /** Local hashes per second. */
  hashrate: number;
  blocksFound: number;
}

/** The parts the API reads (narrow interfaces, so tests and later subsystems can supply their own). */
export interface HttpModules {
  readonly chain: ChainReader;
  readonly mempool: MempoolReader & TxSubmitter;
  readonly params: ChainParams;
  readonly miner?: { stats(): MinerStats };
  readonly logger?: Logger;
  /**
   * Routers of other subsystems (x402, discovery, mining RPC, peers…), mounted after the chain
   * API behind the same error handling, body parsing and timeouts. Each subsystem owns its file.
   */
  readonly routers?: readonly Router[];
  /** Statuses of the error codes those routers throw (the payment codes…), besides the API's own. */
  readonly errorStatuses?: ErrorStatuses;
  /** Extra fields merged into `GET /api/v1/status` (peers, sync progress, stratum…), computed per request. */
  readonly statusExtras?: readonly (() => Record<string, unknown> | Promise<Record<string, unknown>>)[];
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
}

/** Defaults of HttpOptions. */
export const defaultHttpOptions: HttpOptions = { host: '127.0.0.1', port: 8402, bodyLimit: 256 * 1024, timeoutMs: 15_000, version: '0.0.0' };

/** Largest `limit` of list routes. */
export const MAX_LIST_LIMIT = 100;

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

function requireTxId(id: string): string {
  if (!isHex(id, 32)) throw new NodeError(HttpErrorCode.INVALID_TX_ID, 'a transaction id is 64 hex characters');
  return id.toLowerCase();
}

/** Parses an optional non-negative integer query parameter; `invalid_query` names it. */
function intQuery(value: unknown, name: string, min: number, max: number): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string' || !/^\d{1,10}$/.test(value)) throw new NodeError(HttpErrorCode.INVALID_QUERY, `${name} must be an integer`, { param: name });
  const n = Number(value);
  if (n < min || n > max) throw new NodeError(HttpErrorCode.INVALID_QUERY, `${name} must be between ${min} and ${max}`, { param: name });
  return n;
}

/** Amount fields of a payload's JSON: `amount` and names ending in `Amount` (base-unit strings by the TxTypeModule contract). */
function isAmountKey(k: string): boolean {
  return k === 'amount' || k.endsWith('Amount');
}

/** JSON view of a transaction: envelope, type name, addresses, NATIVE decimals beside base units. */
export function txToJson(tx: Tx, bytes: Uint8Array, params: ChainParams): Record<string, unknown> {
  const out: Record<string, unknown> = {
    txId: toHex(computeTxId(bytes)),
    type: 'unknown',
    typeId: tx.type,
    version: tx.version,
    chainId: tx.chainId,
    from: encodeAddress(tx.from, params.hrp),
    nonce: Number(tx.nonce),
    fee: formatAmount(tx.fee),
    feeBase: tx.fee.toString(),
    size: bytes.length,
    publicKeyIncluded: tx.publicKey !== undefined,
  };
  try {
    const mod = getTxType(tx.type);
    out.type = mod.name;
    const payload = mod.toJson(mod.decodePayload(tx.payload), params);
    for (const [k, v] of Object.entries(payload)) {
      if (isAmountKey(k) && typeof v === 'string' && /^\d+$/.test(v)) {
        out[k] = formatAmount(BigInt(v));
        out[`${k}Base`] = v;
      } else {
        out[k] = v;
      }
    }
  } catch {
    out.payloadHex = toHex(tx.payload);
  }
  return out;
}

function blockSummary(e: ChainEntry): Record<string, unknown> {
  return {
    height: e.height,
    hash: e.hashHex,
    time: e.header.time,
    bits: e.header.bits.toString(16).padStart(8, '0'),
    difficulty: difficultyOfBits(e.header.bits),
    txCount: e.txCount,
    size: e.size,
  };
}

/** Printable text of a coinbase tag (hex when it is not plain ASCII). */
function tagText(tag: Uint8Array): string {
  const s = Buffer.from(tag).toString('latin1');
  return /^[\x20-\x7e]*$/.test(s) ? s : `0x${toHex(tag)}`;
}


/** Builds the koa application of the API. */
export function createHttpApp(opts: HttpOptions, modules: HttpModules): Koa {
  const { chain, mempool, params } = modules;
  const log = modules.logger ?? silentLogger;
  const router = new Router();

  const confirmations = (height: number) => Math.max(0, chain.tip.height - height + 1);

  const submitTx = async (ctx: Koa.Context) => {
    const body = ctx.request.body as unknown;
    if (typeof body !== 'object' || body === null || Array.isArray(body) || typeof (body as { tx?: unknown }).tx !== 'string') {
      throw new NodeError(HttpErrorCode.INVALID_REQUEST, 'body must be a JSON object {"tx": "<hex of the signed transaction>"}');
    }
    const hex = (body as { tx: string }).tx;
    if (hex.length === 0 || !isHex(hex)) throw new NodeError(HttpErrorCode.INVALID_TX_HEX, 'tx must be a non-empty, even-length hex string');
    const result = await mempool.add(fromHex(hex));
    log.info({ txId: result.id }, 'tx accepted');
    ctx.body = { txId: result.id, status: result.status };
  };
  router.post('/api/v1/tx', submitTx);
  router.post('/api/tx', submitTx);

  router.get('/api/v1/tx/:id', async (ctx) => {
    const id = requireTxId(ctx.params.id);
    const pending = mempool.get(id);
    if (pending) {
      ctx.body = { ...txToJson(pending.tx, pending.bytes, params), status: 'pending', height: null, blockHash: null, confirmations: 0, addedAt: pending.addedAt };
      return;
    }
    const mined = await chain.getTx(id);
    if (!mined) throw new NodeError(HttpErrorCode.TX_NOT_FOUND, `transaction ${id} is neither pending nor mined`);
    ctx.body = {
      ...txToJson(mined.tx, mined.bytes, params),
      status: 'mined',
      height: mined.height,
      blockHash: mined.blockHash,
      index: mined.index,
      confirmations: confirmations(mined.height),
    };
  });

  router.get('/api/v1/block/:id', async (ctx) => {
    const id: string = ctx.params.id;
    let entry: ChainEntry | undefined;
    if (/^\d{1,10}$/.test(id)) entry = chain.getEntryByHeight(Number(id));
    else if (isHex(id, 32)) entry = chain.getEntryByHash(id.toLowerCase());
    else throw new NodeError(HttpErrorCode.INVALID_BLOCK_ID, 'a block is named by its height or its 64-hex-character hash');
    const block: Block | undefined = entry && (await chain.getBlock(entry.hashHex));
    if (!entry || !block) throw new NodeError(HttpErrorCode.BLOCK_NOT_FOUND, `no block ${id}`);
    const cb = block.coinbase;
    ctx.body = {
      ...blockHeaderJson(chain, entry, block),
      coinbase: {
        id: toHex(coinbaseId(encodeCoinbase(cb))),
        miner: encodeAddress(cb.miner, params.hrp),
        reward: formatAmount(cb.reward),
        rewardBase: cb.reward.toString(),
        fees: formatAmount(cb.fees),
        feesBase: cb.fees.toString(),
        extranonce: toHex(cb.extranonce),
        tag: tagText(cb.tag),
      },
      txIds: block.txs.map((t) => toHex(computeTxId(encodeTx(t)))),
    };
  });

  router.get('/api/v1/blocks', (ctx) => {
    const tipHeight = chain.tip.height;
    const from = Math.min(intQuery(ctx.query.from, 'from', 0, 0xffffffff) ?? tipHeight, tipHeight);
    const limit = intQuery(ctx.query.limit, 'limit', 1, MAX_LIST_LIMIT) ?? 20;
    const blocks: Record<string, unknown>[] = [];
    for (let h = from; h >= 0 && blocks.length < limit; h--) {
      const e = chain.getEntryByHeight(h);
      if (e) blocks.push(blockSummary(e));
    }
    ctx.body = { tip: tipHeight, from, limit, blocks };
  });

  router.get('/api/v1/account/:address', async (ctx) => {
    const address: string = ctx.params.address;
    const id = tryDecodeAddress(address, params.hrp);
    if (!id) throw new NodeError(HttpErrorCode.INVALID_ADDRESS, `${address} is not a ${params.network} address (${params.hrp}1…)`);
    const acc = await chain.getAccount(id);
    ctx.body = {
      address,
      balance: formatAmount(acc.balance),
      balanceBase: acc.balance.toString(),
      nonce: Number(acc.nonce),
      pendingNonce: Number(mempool.pendingNonce(id, acc.nonce)),
      publicKeyKnown: acc.publicKey !== undefined,
    };
  });

  router.get('/api/v1/mempool', (ctx) => {
    const limit = intQuery(ctx.query.limit, 'limit', 1, MAX_LIST_LIMIT) ?? 20;
    ctx.body = {
      count: mempool.count,
      bytes: mempool.bytes,
      entries: mempool.list(limit).map((e) => ({
        txId: e.id,
        type: safeTypeName(e.tx.type),
        from: encodeAddress(e.tx.from, params.hrp),
        nonce: Number(e.tx.nonce),
        fee: formatAmount(e.tx.fee),
        feeBase: e.tx.fee.toString(),
        feeRate: e.feeRate,
        size: e.size,
        addedAt: e.addedAt,
      })),
    };
  });

  router.get('/api/v1/status', async (ctx) => {
    const tip = chain.tip;
    const supply = await chain.getSupply();
    ctx.body = {
      network: params.network,
      chainId: params.chainId,
      hrp: params.hrp,
      height: tip.height,
      tip: tip.hashHex,
      time: tip.header.time,
      medianTime: chain.medianTimePast(tip),
      bits: tip.header.bits.toString(16).padStart(8, '0'),
      difficulty: difficultyOfBits(tip.header.bits),
      chainWork: tip.chainWork.toString(16),
      hashrate: estimateHashrate(chain),
      minFeeRate: params.minFeeRate.toString(),
      supply: { minted: formatAmount(supply.minted), mintedBase: supply.minted.toString(), burned: formatAmount(supply.burned), burnedBase: supply.burned.toString() },
      mempool: { count: mempool.count, bytes: mempool.bytes },
      peers: 0,
      syncing: false,
      version: opts.version,
      peerId: null,
      listen: [],
      mining: modules.miner ? modules.miner.stats() : { running: false, threads: 0, hashrate: 0, blocksFound: 0 },
    };
    for (const extra of modules.statusExtras ?? []) Object.assign(ctx.body as Record<string, unknown>, await extra());
  });

  return createJsonApp(opts, log, [router, ...(modules.routers ?? [])], modules.errorStatuses);
}

/** A koa app speaking JSON: the error and timeout middleware (with `errorStatuses` besides the API's own), the JSON body parser, then `routers`. */
export function createJsonApp(opts: Pick<HttpOptions, 'bodyLimit' | 'timeoutMs'>, log: Logger, routers: readonly Router[], errorStatuses: ErrorStatuses = {}): Koa {
  const app = new Koa();
  app.silent = true; // errors are logged by the error middleware, not koa's default handler
  app.use(errorMiddleware(log, errorStatuses));
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

function safeTypeName(type: number): string {
  try {
    return getTxType(type).name;
  } catch {
    return 'unknown';
  }
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

/** Creates the HTTP API server (call `start()`). */
export function createHttpServer(opts: HttpOptions, modules: HttpModules): HttpServer {
  return new HttpServer(opts, createHttpApp(opts, modules));
}

/** A server of `routers` alone (with the JSON app's middleware), e.g. the dedicated JSON-RPC port. */
export function createRouterServer(opts: HttpOptions, routers: readonly Router[], logger: Logger = silentLogger): HttpServer {
  return new HttpServer(opts, createJsonApp(opts, logger, routers));
}

