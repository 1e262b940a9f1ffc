/**
 * `GET /api/v1/mining`: the mining statistics with the state of Stratum, the RPC and the built-in
 * miner, as one koa router for the HTTP server (`HttpModules.routers`).
 */
import { Router } from '@koa/router';
import type { MinerStats as BuiltinMinerStats } from '../../chain/miner.js';
import type { MiningStats } from './stats.js';
import type { StratumServer } from './stratum.js';
import type { RpcService } from './rpc.js';

/** What `GET /api/v1/mining` reads. */
export interface MiningRouterModules {
  readonly stats: MiningStats;
  readonly stratum?: Pick<StratumServer, 'info'>;
  readonly rpc?: Pick<RpcService, 'info'>;
  readonly miner?: { stats(): BuiltinMinerStats | { running: boolean; threads: number; hashrate: number; blocksFound: number } };
}

/** `GET /api/v1/mining`: Stratum, RPC, the built-in miner, totals, workers and found blocks. */
export function createMiningRouter(modules: MiningRouterModules): Router {
  const router = new Router();
  router.get('/api/v1/mining', (ctx) => {
    const snap = modules.stats.snapshot();
    ctx.body = {
      stratum: modules.stratum?.info() ?? { enabled: false, listening: false, host: null, port: null, url: null, connections: 0, job: null, difficulty: null, lastNotifyLatencyMs: null, notifyLatencyMs: [] },
      rpc: modules.rpc?.info() ?? { enabled: false, path: '/rpc' },
      builtin: modules.miner?.stats() ?? { running: false, threads: 0, hashrate: 0, blocksFound: 0 },
      ...snap,
    };
  });
  return router;
}
