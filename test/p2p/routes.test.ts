/** `GET /api/v1/peers` and the `requireSynced` guard of paid routes, through the node's real koa app. */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Router } from '@koa/router';
import { createDevnetChainParams } from '../../consensus/devnet.js';
import type { ChainReader, MempoolReader } from '../../chain/types.js';
import { createHttpApp, defaultHttpOptions, type TxSubmitter } from '../../node/api/http.js';
import { createPeersRouter, requireSynced, type PeersSource } from '../../node/api/p2pRoutes.js';
import type { SyncState } from '../../p2p/types.js';

let state: SyncState = { syncing: true, downloading: true, height: 10, targetHeight: 500, rate: 40, eta: 13 };
const source: PeersSource = {
  peerId: '12D3KooWTest',
  listen: ['/ip4/127.0.0.1/tcp/8403/p2p/12D3KooWTest'],
  peers: () => [{ peerId: '12D3KooWPeer', address: '/ip4/127.0.0.1/tcp/1234', direction: 'outbound', agent: 'native-node/0.1.0', latencyMs: 1, height: 500, tip: 'ab'.repeat(32), score: 0, connectedAt: 1 }],
  bans: () => [{ peerId: '12D3KooWBad', until: Date.parse('2030-01-01T00:00:00Z'), reason: 'gossip block: block_high_hash' }],
  gossipStats: () => ({ txs: { accept: 1, ignore: 2, reject: 0 }, blocks: { accept: 3, ignore: 0, reject: 1 }, published: { txs: 0, blocks: 0 }, frames: { oversized: 0, undecodable: 0 } }),
  isSyncing: () => state.syncing,
  syncState: () => state,
};

let server: Server;
let url: string;

beforeAll(async () => {
  const paid = new Router();
  paid.post('/paid', requireSynced(source), (ctx) => {
    ctx.body = { ok: true };
  });
  const app = createHttpApp(defaultHttpOptions, {
    chain: {} as ChainReader,
    mempool: {} as MempoolReader & TxSubmitter,
    params: createDevnetChainParams({ genesisTime: 1_700_000_000 }),
    routers: [createPeersRouter(source), paid],
  });
  server = createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
});

describe('p2p routes', () => {
  test('GET /api/v1/peers: identity, peers, bans, sync, gossip counters', async () => {
    const res = await fetch(`${url}/api/v1/peers`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      peerId: '12D3KooWTest',
      listen: ['/ip4/127.0.0.1/tcp/8403/p2p/12D3KooWTest'],
      count: 1,
      peers: [expect.objectContaining({ peerId: '12D3KooWPeer', height: 500, direction: 'outbound' })],
      banned: [{ peerId: '12D3KooWBad', until: '2030-01-01T00:00:00.000Z', reason: 'gossip block: block_high_hash' }],
      sync: { syncing: true, downloading: true, height: 10, targetHeight: 500, rate: 40, eta: 13 },
      gossip: expect.objectContaining({ blocks: { accept: 3, ignore: 0, reject: 1 } }),
    });
  });

  test('a paid route answers 503 node_syncing while far behind, and runs once caught up', async () => {
    const refused = await fetch(`${url}/paid`, { method: 'POST', body: '{}' });
    expect(refused.status).toBe(503);
    expect(await refused.json()).toEqual({ error: { code: 'node_syncing', message: expect.stringContaining('10 of 500'), height: 10, targetHeight: 500, eta: 13 } });
    state = { syncing: false, downloading: false, height: 500, targetHeight: 500, rate: 0, eta: null };
    const ok = await fetch(`${url}/paid`, { method: 'POST', body: '{}' });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ ok: true });
  });
});
