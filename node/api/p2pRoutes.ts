/**
 * HTTP face of the peer-to-peer network:
 *
 *   GET /api/v1/peers   this node's peer id and addresses, connected peers, bans in force,
 *                       sync state, gossip and mempool exchange counters
 *
 * and `requireSynced`, the koa middleware paid routes put in front of their handler: while the
 * node is far behind the network it answers 503 `node_syncing` (with height and target height)
 * instead of quoting or settling against a stale state.
 */
import type Koa from 'koa';
import { Router } from '@koa/router';
import { NodeError } from '../../consensus/errors.js';
import type { SyncStatusReader } from '../../p2p/types.js';
import type { BanInfo } from '../../p2p/scoring.js';
import type { GossipStats } from '../../p2p/gossip.js';
import type { MempoolExchangeStats } from '../../p2p/mempoolExchange.js';
import type { PeerView } from '../../p2p/network.js';

/** Error code of a paid call refused while syncing (HTTP 503). */
export const SYNCING_ERROR_CODE = 'node_syncing';

/** What the peers route reads (the p2p network). */
export interface PeersSource extends SyncStatusReader {
  readonly peerId: string;
  readonly listen: readonly string[];
  peers(): PeerView[];
  bans(): BanInfo[];
  gossipStats(): GossipStats;
  /** Mempool exchange counters (absent: not shown). */
  mempoolExchangeStats?(): MempoolExchangeStats;
}

/** The router of `GET /api/v1/peers`. */
export function createPeersRouter(p2p: PeersSource): Router {
  const router = new Router();
  router.get('/api/v1/peers', (ctx) => {
    const peers = p2p.peers();
    const s = p2p.syncState();
    ctx.body = {
      peerId: p2p.peerId,
      listen: p2p.listen,
      count: peers.length,
      peers,
      banned: p2p.bans().map((b) => ({ peerId: b.peerId, until: new Date(b.until).toISOString(), reason: b.reason })),
      sync: { syncing: s.syncing, downloading: s.downloading, height: s.height, targetHeight: s.targetHeight, rate: s.rate, eta: s.eta },
      gossip: p2p.gossipStats(),
      mempoolExchange: p2p.mempoolExchangeStats?.(),
    };
  });
  return router;
}

/**
 * Middleware for paid routes: 503 `node_syncing` while `sync.isSyncing()`. Without a sync
 * (`--no-p2p`) it lets every request through.
 */
export function requireSynced(sync: SyncStatusReader | undefined): Koa.Middleware {
  return async (_ctx, next) => {
    if (sync?.isSyncing()) {
      const s = sync.syncState();
      throw new NodeError(SYNCING_ERROR_CODE, `the node is catching up with the network (height ${s.height} of ${s.targetHeight}); try again shortly`, {
        height: s.height,
        targetHeight: s.targetHeight,
        eta: s.eta,
      });
    }
    await next();
  };
}
