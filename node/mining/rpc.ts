/**
 * Mining over HTTP: Bitcoin-style JSON-RPC at `POST /rpc` (getblocktemplate, submitblock and a few
 * read-only helpers) and the mining statistics at `GET /api/v1/mining`. Both are koa routers the
 * composition root hands to the HTTP server (`HttpModules.routers`).
 *
 * Access to `/rpc`: off unless both `--rpc-user` and `--rpc-password` are set (403 `rpc_disabled`);
 * HTTP Basic with those credentials (401 `rpc_unauthorized` otherwise); loopback clients only
 * unless `--rpc-allow-remote` (403 `rpc_forbidden`), so exposing the API with `--http-host` does
 * not expose block templates. A client address that sent `authFailuresPerMinute` wrong credentials
 * is refused with 429 `rpc_rate_limited` (whatever it sends) until its allowance refills, so
 * passwords cannot be guessed at wire speed. These refusals use the API's error body; everything past them is
 * JSON-RPC (`{"result", "error": {"code", "message"} | null, "id"}`, HTTP 200, batches allowed).
 *
 * getblocktemplate (BIP 22/23): the fields miners read, with Bitcoin's conventions where a
 * miner computes something — `previousblockhash`, `txid` and `hash` are the internal bytes
 * reversed, as Bitcoin's RPC shows them, and `bits`/`target` are big-endian hex. `coinbasetxn.data`
 * is our coinbase record (at least 60 bytes), which miners hash as the first merkle leaf without
 * parsing it; it pays the node's `--miner-address`, or the non-standard request field
 * `payoutaddress`. `transactions[].data` are the signed transactions (their id is SHA-256d of these
 * bytes, so miners that hash `data` and miners that read `txid` agree). Only `time` is mutable:
 * the coinbase claims the fees of exactly these transactions. `longpollid` makes the request wait
 * (up to `longPollMs`) for the mining job feed's next job on a new tip or with new mempool work.
 *
 * submitblock takes the block as our canonical encoding, or in Bitcoin's layout that
 * getblocktemplate miners produce (`header ‖ CompactSize(1 + n) ‖ coinbase ‖ transactions`, no
 * length prefixes), and answers `null` or a BIP 22 reason (`high-hash`, `bad-prevblk`,
 * `duplicate`, `inconclusive`, …).
 *
 * Files: this one is the service (access control, the calls, the long poll; ~430 lines, one job
 * over one set of counters) and the RPC's entry point; the template object, the submitted-block
 * decoding and the BIP 22 reasons are in rpcWire.ts, `GET /api/v1/mining` in miningRoute.ts.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type Koa from 'koa';
import { Router } from '@koa/router';
import { encodeAddress, tryDecodeAddress } from '../../consensus/address.js';
import { blockHash, type Block } from '../../consensus/block.js';
import { isNodeError } from '../../consensus/errors.js';
import { fromHex, isHex, sha256, toHex } from '../../consensus/hash.js';
import { difficultyOfBits } from '../../consensus/pow.js';
import type { ChainParams } from '../../consensus/params.js';
import { createBlockTemplate, type BlockTemplate } from '../../chain/template.js';
import type { MinerChain, MinerMempool } from '../../chain/miner.js';
import type { JobFeed, MiningJob } from '../../chain/jobFeed.js';
import { silentLogger, type ChainReader, type Logger } from '../../chain/types.js';
import { estimateHashrate } from '../../chain/hashrate.js';
import { DEFAULT_LOG_SUMMARY_MS, LogSummary } from '../logSummary.js';
import { AddressBuckets, clientAddress } from '../rateLimit.js';
import type { MiningStats } from './stats.js';
import { decodeSubmittedBlock, submitReason, templateJson } from './rpcWire.js';

/** The wire helpers (rpcWire.ts), re-exported: this file is the RPC's entry point (`GET /api/v1/mining` is miningRoute.ts). */
export { decodeSubmittedBlock, MIN_COINBASETXN_BYTES, submitReason, templateJson } from './rpcWire.js';

/** Codes of the HTTP-level refusals of `/rpc` (JSON-RPC errors use Bitcoin's numeric codes). */
export const RpcErrorCode = {
  DISABLED: 'rpc_disabled',
  UNAUTHORIZED: 'rpc_unauthorized',
  FORBIDDEN: 'rpc_forbidden',
  RATE_LIMITED: 'rpc_rate_limited',
} as const;

/** JSON-RPC error codes, as Bitcoin Core numbers them. */
export const RpcCode = {
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL: -32603,
  MISC: -1,
  INVALID_ADDRESS: -5,
  INVALID_PARAMETER: -8,
  /** Bitcoin Core's RPC_CLIENT_IN_INITIAL_DOWNLOAD: no templates while the node catches up. */
  IN_INITIAL_DOWNLOAD: -10,
  DESERIALIZATION: -22,
} as const;

/** Options of the RPC. */
export interface RpcOptions {
  /** HTTP Basic user; RPC is off unless both user and password are set. */
  readonly user?: string;
  readonly password?: string;
  /** Answer clients that are not on the loopback interface. */
  readonly allowRemote: boolean;
  /** Wrong credentials one client address may send per minute (then 429 until the allowance refills). */
  readonly authFailuresPerMinute: number;
  /** Interval of the summary lines of repeated wrong credentials, ms. */
  readonly logSummaryMs: number;
  /** Address paid by getblocktemplate's coinbase (the node's miner address). */
  readonly payoutAddress?: string;
  /** Longest wait of a long-polling getblocktemplate, ms (keep it under the HTTP request time limit). */
  readonly longPollMs: number;
  /**
   * Largest template, bytes: its submitblock must fit in the HTTP body limit (hex doubles it).
   * Undefined: the consensus limit.
   */
  readonly maxTemplateBytes?: number;
  /** Coinbase tag (at least 6 bytes keeps the coinbase at 60 bytes or more, which miners require). */
  readonly tag: string;
  /** Clock in Unix seconds. */
  readonly now?: () => number;
}

/** Defaults of RpcOptions. */
export const defaultRpcOptions: RpcOptions = { allowRemote: false, authFailuresPerMinute: 10, logSummaryMs: DEFAULT_LOG_SUMMARY_MS, longPollMs: 60_000, tag: 'native-node' };

/** What the RPC reads and submits to. */
export interface RpcModules {
  readonly chain: MinerChain & Pick<ChainReader, 'getEntryByHeight'>;
  readonly mempool: MinerMempool & { readonly count: number };
  readonly params: ChainParams;
  readonly stats: MiningStats;
  readonly logger?: Logger;
  /** The mining job feed (chain/jobFeed.ts): a long poll ends at its next job of another parent or of new mempool work. */
  readonly feed: Pick<JobFeed, 'on' | 'off'>;
  /** True while the node is far behind the network: templates would build on an old block. */
  readonly isSyncing?: () => boolean;
}

/** The RPC's counters for `GET /api/v1/mining`. */
export interface RpcInfo {
  readonly enabled: boolean;
  readonly path: string;
  readonly allowRemote: boolean;
  readonly payoutAddress: string | null;
  readonly templates: number;
  readonly longPolls: number;
  readonly submitted: number;
  readonly accepted: number;
  readonly rejected: number;
  readonly lastRejectReason: string | null;
  /** Wrong credentials received, and requests refused 429 for them. */
  readonly authFailures: number;
  readonly rateLimited: number;
  readonly authFailuresPerMinute: number;
}

/** A JSON-RPC failure with Bitcoin's numeric code. */
class RpcFailure extends Error {
  constructor(
    readonly rpcCode: number,
    message: string,
  ) {
    super(message);
  }
}

/** Whether a peer address is the loopback interface (127.0.0.0/8, ::1, IPv4-mapped 127.x). */
export function isLoopback(ip: string | undefined): boolean {
  if (!ip) return false;
  const a = ip.startsWith('::ffff:') ? ip.slice(7) : ip;
  return a === '::1' || a.startsWith('127.');
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest();
}

/** The getblocktemplate/submitblock service: its router and its counters. */
export class RpcService {
  readonly router: Router;
  /** For a port of its own: JSON-RPC at `/` (where Bitcoin clients post) and at `/rpc`. */
  readonly rootRouter: Router;
  private readonly opts: RpcOptions;
  /** Ends every pending long poll (see `stop`). */
  private readonly pendingPolls = new Set<() => void>();
  private stopped = false;
  private readonly m: RpcModules;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly expected?: Buffer;
  private readonly counters = { templates: 0, longPolls: 0, submitted: 0, accepted: 0, rejected: 0, lastRejectReason: null as string | null, authFailures: 0, rateLimited: 0 };
  /** Wrong-credential allowance per client address. */
  private readonly authFailures: AddressBuckets;
  private readonly authLog: LogSummary;

  constructor(opts: Partial<RpcOptions>, modules: RpcModules) {
    this.opts = { ...defaultRpcOptions, ...opts };
    this.m = modules;
    this.log = modules.logger ?? silentLogger;
    this.now = this.opts.now ?? (() => Math.floor(Date.now() / 1000));
    if (this.opts.user && this.opts.password) this.expected = digest(`${this.opts.user}:${this.opts.password}`);
    const perMinute = this.opts.authFailuresPerMinute;
    this.authFailures = new AddressBuckets({ ratePerSecond: perMinute / 60, burst: perMinute });
    this.authLog = new LogSummary(this.log, 'rpc credentials refused', { intervalMs: this.opts.logSummaryMs, level: 'warn' });
    this.router = new Router();
    this.router.post('/rpc', (ctx) => this.handle(ctx));
    this.rootRouter = new Router();
    this.rootRouter.post('/', (ctx) => this.handle(ctx));
    this.rootRouter.post('/rpc', (ctx) => this.handle(ctx));
  }

  /** Answers every pending long poll now (node shutdown: nothing may wait on a closing chain). */
  stop(): void {
    this.stopped = true;
    this.authLog.stop();
    for (const finish of [...this.pendingPolls]) finish();
  }

  /** Whether `/rpc` answers at all (credentials configured). */
  get enabled(): boolean {
    return this.expected !== undefined;
  }

  info(): RpcInfo {
    return {
      enabled: this.enabled,
      path: '/rpc',
      allowRemote: this.opts.allowRemote,
      payoutAddress: this.opts.payoutAddress ?? null,
      templates: this.counters.templates,
      longPolls: this.counters.longPolls,
      submitted: this.counters.submitted,
      accepted: this.counters.accepted,
      rejected: this.counters.rejected,
      lastRejectReason: this.counters.lastRejectReason,
      authFailures: this.counters.authFailures,
      rateLimited: this.counters.rateLimited,
      authFailuresPerMinute: this.opts.authFailuresPerMinute,
    };
  }

  private refuse(ctx: Koa.Context, status: number, code: string, message: string): void {
    ctx.status = status;
    ctx.body = { error: { code, message } };
  }

  private async handle(ctx: Koa.Context): Promise<void> {
    if (!this.expected) {
      return this.refuse(ctx, 403, RpcErrorCode.DISABLED, 'JSON-RPC is off: start the node with --rpc-user and --rpc-password to enable getblocktemplate and submitblock');
    }
    if (!this.opts.allowRemote && !isLoopback(ctx.socket.remoteAddress)) {
      return this.refuse(ctx, 403, RpcErrorCode.FORBIDDEN, 'JSON-RPC answers loopback clients only (set --rpc-allow-remote to change that)');
    }
    const client = clientAddress(ctx.socket.remoteAddress);
    if (!this.authFailures.allowed(client)) {
      this.counters.rateLimited++;
      const wait = this.authFailures.retryAfterSeconds(client);
      ctx.set('Retry-After', String(wait));
      return this.refuse(ctx, 429, RpcErrorCode.RATE_LIMITED, `too many wrong credentials from this address (at most ${this.opts.authFailuresPerMinute} a minute, --rpc-auth-failures): try again in ${wait} s`);
    }
    const auth = ctx.get('authorization');
    const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(auth);
    const given = m ? Buffer.from(m[1], 'base64').toString('utf8') : undefined;
    if (given === undefined || !timingSafeEqual(digest(given), this.expected)) {
      this.authFailures.take(client);
      this.counters.authFailures++;
      this.authLog.note(client, { path: ctx.path });
      ctx.set('WWW-Authenticate', 'Basic realm="native-node rpc"');
      return this.refuse(ctx, 401, RpcErrorCode.UNAUTHORIZED, 'wrong or missing HTTP Basic credentials (--rpc-user / --rpc-password)');
    }
    const body = ctx.request.body as unknown;
    if (Array.isArray(body)) {
      const out = [];
      for (const call of body.slice(0, 100)) out.push(await this.call(call, ctx));
      ctx.body = out;
    } else {
      ctx.body = await this.call(body, ctx);
    }
  }

  private async call(req: unknown, ctx: Koa.Context): Promise<{ result: unknown; error: { code: number; message: string } | null; id: unknown }> {
    const id = typeof req === 'object' && req !== null && 'id' in req ? (req as { id: unknown }).id : null;
    try {
      if (typeof req !== 'object' || req === null || typeof (req as { method?: unknown }).method !== 'string') {
        throw new RpcFailure(RpcCode.INVALID_REQUEST, 'a request is {"method": "…", "params": […], "id": …}');
      }
      const { method, params } = req as { method: string; params?: unknown };
      const args = params === undefined || params === null ? [] : Array.isArray(params) ? params : undefined;
      if (!args) throw new RpcFailure(RpcCode.INVALID_REQUEST, 'params must be an array');
      return { result: await this.dispatch(method, args, ctx), error: null, id };
    } catch (e) {
      if (e instanceof RpcFailure) return { result: null, error: { code: e.rpcCode, message: e.message }, id };
      this.log.error({ err: e }, 'rpc call crashed');
      return { result: null, error: { code: RpcCode.INTERNAL, message: 'internal error' }, id };
    }
  }

  private async dispatch(method: string, args: unknown[], ctx: Koa.Context): Promise<unknown> {
    const { chain, params } = this.m;
    switch (method) {
      case 'getblocktemplate':
        return this.getBlockTemplate(args, ctx);
      case 'submitblock':
        return this.submitBlock(args);
      case 'getblockcount':
        return chain.tip.height;
      case 'getdifficulty':
        return difficultyOfBits(chain.tip.header.bits);
      case 'getmininginfo':
        return {
          blocks: chain.tip.height,
          difficulty: difficultyOfBits(chain.tip.header.bits),
          networkhashps: estimateHashrate(chain as unknown as ChainReader),
          pooledtx: this.m.mempool.count,
          chain: params.network,
        };
      default:
        throw new RpcFailure(RpcCode.METHOD_NOT_FOUND, `method not found: ${method.slice(0, 64)} (this node serves getblocktemplate, submitblock, getblockcount, getdifficulty, getmininginfo)`);
    }
  }

  // ---- getblocktemplate ----

  private payout(request: Record<string, unknown>): Uint8Array {
    const asked = request.payoutaddress;
    const address = typeof asked === 'string' ? asked : this.opts.payoutAddress;
    if (address === undefined) throw new RpcFailure(RpcCode.MISC, 'no payout address: start the node with --miner-address <address>, or send {"payoutaddress": "<address>"} in the request');
    const id = tryDecodeAddress(address, this.m.params.hrp);
    if (!id) throw new RpcFailure(RpcCode.INVALID_ADDRESS, `invalid payout address ${address.slice(0, 100)}: expected a ${this.m.params.network} address (${this.m.params.hrp}1…)`);
    return id;
  }

  /** The mempool as templates see it, capped so that the block fits `maxTemplateBytes`. */
  private readonly cappedMempool = {
    blockCandidates: (maxBytes: number, maxCount: number) => this.m.mempool.blockCandidates(Math.min(maxBytes, this.opts.maxTemplateBytes ?? maxBytes), maxCount),
  };

  private buildTemplate(miner: Uint8Array): Promise<BlockTemplate> {
    return createBlockTemplate(this.m.chain, this.cappedMempool, this.m.params, { miner, tag: this.opts.tag, now: this.now });
  }

  /** Opaque long-poll id: the parent and the template's transactions. */
  private longPollId(tpl: BlockTemplate): string {
    const ids = sha256(new Uint8Array(Buffer.concat(tpl.txIds.map((t) => Buffer.from(t)))));
    return `${tpl.parentHash}${toHex(ids).slice(0, 16)}`;
  }

  /** Templates built while the node is behind would build on an old block: -10, as Bitcoin Core answers in its initial download. */
  private refuseWhileSyncing(): void {
    if (this.m.isSyncing?.()) throw new RpcFailure(RpcCode.IN_INITIAL_DOWNLOAD, 'native-node is downloading blocks: templates resume once it has caught up with the network');
  }

  private async getBlockTemplate(args: unknown[], ctx: Koa.Context): Promise<unknown> {
    const request = args[0] === undefined || args[0] === null ? {} : args[0];
    if (typeof request !== 'object' || Array.isArray(request)) throw new RpcFailure(RpcCode.INVALID_PARAMETER, 'the template request is an object, e.g. {"rules": []}');
    const req = request as Record<string, unknown>;
    const mode = req.mode ?? 'template';
    if (mode !== 'template') throw new RpcFailure(RpcCode.INVALID_PARAMETER, `mode ${String(mode)} is not supported (only "template")`);
    const miner = this.payout(req);
    this.refuseWhileSyncing();
    let tpl = await this.buildTemplate(miner);
    if (typeof req.longpollid === 'string' && req.longpollid === this.longPollId(tpl)) {
      this.counters.longPolls++;
      await this.waitForChange(tpl.parentHash, ctx);
      if (this.stopped) throw new RpcFailure(RpcCode.MISC, 'the node is stopping');
      if (ctx.res.destroyed) return null; // the client has gone: nothing to build for
      this.refuseWhileSyncing();
      tpl = await this.buildTemplate(miner);
    }
    this.counters.templates++;
    const limits = this.m.params.limits;
    return templateJson(tpl, {
      longPollId: this.longPollId(tpl),
      sizeLimit: this.opts.maxTemplateBytes === undefined ? limits.maxBlockBytes : Math.min(this.opts.maxTemplateBytes, limits.maxBlockBytes),
      hrp: this.m.params.hrp,
      log: this.log,
    });
  }

  /**
   * Resolves at the job feed's next job on another parent or with new mempool work (the feed
   * debounces mempool changes), at `longPollMs`, or when the client leaves.
   */
  private waitForChange(parentHash: string, ctx: Koa.Context): Promise<void> {
    const { feed } = this.m;
    if (this.stopped || ctx.res.destroyed) return Promise.resolve(); // stopping, or the client has gone (a batch's later polls)
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(deadline);
        feed.off('job', onJob);
        ctx.res.off('close', finish);
        this.pendingPolls.delete(finish);
        resolve();
      };
      const onJob = (job: MiningJob) => {
        if (job.template.parentHash !== parentHash || job.reason === 'mempool') finish();
      };
      const deadline = setTimeout(finish, this.opts.longPollMs);
      feed.on('job', onJob);
      // The response closes before it is sent only when the client has gone (the request
      // stream closes as soon as its body has been read, so it cannot tell).
      ctx.res.once('close', finish);
      this.pendingPolls.add(finish);
    });
  }

  // ---- submitblock ----

  private async submitBlock(args: unknown[]): Promise<string | null> {
    const hex = args[0];
    if (typeof hex !== 'string' || hex.length === 0 || !isHex(hex)) throw new RpcFailure(RpcCode.DESERIALIZATION, 'Block decode failed: submitblock takes the block as one hex string');
    let decoded: { block: Block; bytes: Uint8Array };
    try {
      decoded = decodeSubmittedBlock(fromHex(hex));
    } catch (e) {
      throw new RpcFailure(RpcCode.DESERIALIZATION, `Block decode failed: ${(e as Error).message}`);
    }
    this.counters.submitted++;
    const { block } = decoded;
    const hash = toHex(blockHash(block.header));
    let reason: string | null;
    try {
      const res = await this.m.chain.addBlock(decoded.bytes);
      switch (res.status) {
        case 'connected':
        case 'reorganized':
          reason = null;
          this.m.stats.recordBlock({ height: res.height ?? block.coinbase.height, hash, source: 'rpc', worker: null, address: encodeAddress(block.coinbase.miner, this.m.params.hrp) });
          this.log.info({ hash, height: res.height, status: res.status }, 'block submitted over rpc');
          break;
        case 'duplicate':
          reason = 'duplicate';
          break;
        case 'side':
          reason = 'inconclusive';
          break;
        case 'orphan':
          reason = 'prev-blk-not-found';
          break;
      }
    } catch (e) {
      if (!isNodeError(e)) throw e;
      reason = submitReason(e.code);
      this.log.info({ hash, code: e.code, reason, err: e.message }, 'block submitted over rpc refused');
    }
    if (reason === null) this.counters.accepted++;
    else {
      this.counters.rejected++;
      this.counters.lastRejectReason = reason;
    }
    return reason;
  }
}

/** Creates the getblocktemplate/submitblock service (mount `service.router`). */
export function createRpcService(opts: Partial<RpcOptions>, modules: RpcModules): RpcService {
  return new RpcService(opts, modules);
}
