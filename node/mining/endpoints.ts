/**
 * Wiring of the mining endpoints for the composition root: the node's one mining job feed
 * (`createMiningJobFeed`, followed by the built-in miner, Stratum and the getblocktemplate long
 * poll; the node starts it before them and stops it after); one statistics object fed by the
 * Stratum server, the getblocktemplate/submitblock RPC and the built-in miner; the Stratum server
 * (a part with start/stop); the HTTP routers (`POST /rpc`, `GET /api/v1/mining`) plus the
 * `stratum` summary merged into `GET /api/v1/status`; and, with `--rpc-port`, a listener of its
 * own for JSON-RPC (lenient HTTP parser, for older miners).
 */
import type { Router } from '@koa/router';
import type { ChainParams } from '../../consensus/params.js';
import type { Chain } from '../../chain/chain.js';
import type { Mempool } from '../../chain/mempool.js';
import { defaultMinerOptions, type Miner } from '../../chain/miner.js';
import type { NodeConfig } from '../config.js';
import type { NodeLogger } from '../logger.js';
import { createRouterServer, type HttpServer } from '../api/http.js';
import { createMiningStats, type MiningStats } from './stats.js';
import { createRpcService, type RpcService } from './rpc.js';
import { createMiningRouter } from './miningRoute.js';
import { createStratumServer, defaultStratumOptions, type StratumServer } from './stratum.js';
import { createJobFeed, type JobFeed } from '../../chain/jobFeed.js';
import { NODE_VERSION } from '../version.js';

/** The mining endpoints of a node. */
export interface MiningEndpoints {
  readonly stats: MiningStats;
  /** Undefined with `--no-stratum`. */
  readonly stratum: StratumServer | undefined;
  readonly rpc: RpcService;
  /** JSON-RPC on a port of its own (`--rpc-port`, with RPC on); undefined otherwise. */
  readonly rpcServer: HttpServer | undefined;
  /** `POST /rpc` and `GET /api/v1/mining`, for `HttpModules.routers`. */
  readonly routers: readonly Router[];
  /** The `stratum` field of `GET /api/v1/status`, for `HttpModules.statusExtras`. */
  readonly statusExtra: () => Record<string, unknown>;
}

/** Room left in the HTTP body limit for the JSON around a submitblock's hex. */
const SUBMIT_ENVELOPE_BYTES = 4_096;

/** The coinbase tag of the node's blocks. */
const TAG = `native-node/${NODE_VERSION}`;

/**
 * The node's one mining job feed, followed by the built-in miner, Stratum and the
 * getblocktemplate long poll. Mempool changes reach the jobs every 500 ms when the free-running
 * built-in miner runs (its `mempoolRefreshMs`), every 3 s otherwise (Stratum's; the paced miner,
 * `--block-time`, builds its own template at each slot and does not follow the feed).
 */
export function createMiningJobFeed(config: NodeConfig, params: ChainParams, modules: { chain: Chain; mempool: Mempool; logger: NodeLogger }): JobFeed {
  const mempoolRefreshMs = config.mine && config.blockTime === undefined ? Math.min(defaultMinerOptions.mempoolRefreshMs, defaultStratumOptions.mempoolRefreshMs) : defaultStratumOptions.mempoolRefreshMs;
  return createJobFeed({ mempoolRefreshMs, keepAliveMs: defaultStratumOptions.keepAliveMs, tag: TAG }, { chain: modules.chain, mempool: modules.mempool, params, logger: modules.logger.child({ module: 'jobs' }) });
}

/** Builds the mining endpoints from the configuration (nothing listens until `stratum.start()`). */
export function createMiningEndpoints(
  config: NodeConfig,
  params: ChainParams,
  modules: { chain: Chain; mempool: Mempool; feed: JobFeed; miner: Miner | undefined; logger: NodeLogger; isSyncing?: () => boolean },
): MiningEndpoints {
  const { chain, mempool, feed, miner, logger } = modules;
  const stats = createMiningStats();
  // Blocks of the built-in miner join the same list as those of Stratum workers and RPC miners.
  miner?.on('block', (e) => {
    if (e.status === 'connected' || e.status === 'reorganized') stats.recordBlock({ height: e.height, hash: e.hash, source: 'builtin', worker: null, address: config.minerAddress ?? null });
  });
  const stratum = config.stratum
    ? createStratumServer(
        // The default port may be taken (another node on this machine): then run without Stratum and say so; an explicit port must bind.
        {
          host: config.stratumHost ?? config.httpHost,
          port: config.stratumPort,
          required: config.sources.stratumPort !== 'default',
          tag: TAG,
          maxConnections: config.stratumMaxConnections,
          maxConnectionsPerAddress: config.stratumMaxConnectionsPerAddress,
          reservedConnections: config.stratumReservedConnections,
          handshakeTimeoutMs: config.stratumHandshakeTimeout,
          submitsPerSecond: config.stratumSubmitRate,
          submitBurst: config.stratumSubmitBurst,
          banSeconds: config.stratumBanSeconds,
          banInvalidPercent: config.stratumBanInvalidPercent,
          banMinShares: config.stratumBanMinShares,
          logSummaryMs: config.logSummaryInterval,
        },
        { chain, mempool, params, stats, logger: logger.child({ module: 'stratum' }), feed },
      )
    : undefined;
  const rpc = createRpcService(
    {
      user: config.rpcUser,
      password: config.rpcPassword,
      allowRemote: config.rpcAllowRemote,
      authFailuresPerMinute: config.rpcAuthFailures,
      logSummaryMs: config.logSummaryInterval,
      payoutAddress: config.minerAddress,
      // A long poll must answer before the HTTP layer's own time limit cuts it.
      longPollMs: Math.max(1_000, config.httpTimeout - 2_000),
      // A template's submitblock (hex: twice the bytes) must fit in the HTTP body limit.
      maxTemplateBytes: Math.max(1_000, Math.floor((config.httpBodyLimit - SUBMIT_ENVELOPE_BYTES) / 2)),
      tag: TAG,
    },
    { chain, mempool, params, stats, logger: logger.child({ module: 'rpc' }), isSyncing: modules.isSyncing, feed },
  );
  const statusExtra = () => {
    const t = stats.snapshot().totals;
    const s = stratum?.info();
    return {
      stratum: {
        enabled: s !== undefined && s.listening,
        url: s?.url ?? null,
        connections: s?.connections ?? 0,
        workers: t.connectedWorkers,
        hashrate: t.hashrate,
        accepted: t.accepted,
        rejected: t.rejected,
        stale: t.stale,
        blocksFound: t.blocksFound,
        /** Client addresses banned now, and what the abuse limits refused. */
        banned: s?.bans.length ?? 0,
        refused: s?.refused ?? null,
      },
    };
  };
  const rpcServer =
    rpc.enabled && config.rpcPort !== undefined
      ? createRouterServer(
          // Lenient parsing stays on loopback unless remote RPC clients are allowed at all.
          { host: config.rpcAllowRemote ? config.httpHost : '127.0.0.1', port: config.rpcPort, bodyLimit: config.httpBodyLimit, timeoutMs: config.httpTimeout, version: NODE_VERSION, insecureParser: true },
          [rpc.rootRouter],
          logger.child({ module: 'rpc' }),
        )
      : undefined;
  if (config.rpcPort !== undefined && !rpc.enabled) logger.warn({ rpcPort: config.rpcPort }, '--rpc-port needs --rpc-user and --rpc-password: no RPC listener');
  return { stats, stratum, rpc, rpcServer, routers: [rpc.router, createMiningRouter({ stats, stratum, rpc, miner })], statusExtra };
}
