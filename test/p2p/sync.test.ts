/**
 * Header-first sync between in-process nodes over real libp2p on 127.0.0.1: parallel block
 * download from two peers, a fork resolved to the heavier chain, and the sync state that the
 * status route and the paid routes read (with a scripted transport).
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { createDevnetChainParams } from '../../consensus/devnet.js';
import { blockWork } from '../../consensus/pow.js';
import { encodeBlock } from '../../consensus/block.js';
import type { Logger } from '../../chain/types.js';
import { generateKeyPair } from '@libp2p/crypto/keys';
import { createHost } from '../../p2p/host.js';
import { maxResponseFrame, protocolIds } from '../../p2p/protocol.js';
import { SyncManager } from '../../p2p/sync.js';
import { createSyncHandler, Libp2pSyncTransport, type SyncTransport } from '../../p2p/syncProtocol.js';
import { renderProgress } from '../../p2p/progress.js';
import { buildBlock, createTestNode, mineBlocks, waitFor, type TestNode } from './helpers/node.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';

const params = createDevnetChainParams({ genesisBits: 0x207fffff, genesisTime: Math.floor(Date.now() / 1000) - 200_000 });
const minerA = new Uint8Array(20).fill(1);
const minerB = new Uint8Array(20).fill(2);
const nodes: TestNode[] = [];

function capture(): Logger & { lines: { msg: string; obj: Record<string, unknown> }[] } {
  const lines: { msg: string; obj: Record<string, unknown> }[] = [];
  const push = (obj: object, msg?: string) => lines.push({ msg: msg ?? '', obj: obj as Record<string, unknown> });
  return { lines, debug: push, info: push, warn: push, error: push };
}

async function node(opts: Parameters<typeof createTestNode>[2] = {}, logger?: Logger): Promise<TestNode> {
  const n = await createTestNode(await tmpDir('native-p2p-sync-'), params, opts, logger);
  nodes.push(n);
  return n;
}

afterAll(async () => {
  for (const n of nodes) await n.stop().catch(() => undefined);
  await cleanupTmp();
});

describe('header-first sync over libp2p', () => {
  test('a fresh node downloads 240 blocks from two peers in parallel and reaches their tip', async () => {
    const a1 = await node();
    const a2 = await node();
    await mineBlocks(a1.chain, 240, minerA);
    for (let h = 1; h <= a1.chain.tip.height; h++) await a2.chain.addBlock((await a1.chain.getBlockBytes(a1.chain.getEntryByHeight(h)!.hashHex))!);
    expect(a2.chain.tip.hashHex).toBe(a1.chain.tip.hashHex);
    const log = capture();
    const c = await node({ sync: { batchSize: 8, maxInflightPerPeer: 2, initialPeers: 2 } }, log);
    await a1.p2p.start();
    await a2.p2p.start();
    await c.p2p.start();
    await c.p2p.host.dial(a1.p2p.host.getMultiaddrs()[0]);
    await c.p2p.host.dial(a2.p2p.host.getMultiaddrs()[0]);
    await waitFor(() => c.chain.tip.hashHex === a1.chain.tip.hashHex, 30_000, 'c to reach the tip');
    const done = log.lines.filter((l) => l.msg === 'sync done');
    expect(done.length).toBeGreaterThanOrEqual(1);
    const served = Object.assign({}, ...done.map((d) => d.obj.peers as Record<string, number>)) as Record<string, number>;
    // Both peers served part of the chain.
    expect(served[a1.p2p.peerId]).toBeGreaterThan(0);
    expect(served[a2.p2p.peerId]).toBeGreaterThan(0);
    expect(c.p2p.syncState()).toMatchObject({ syncing: false, height: 240, targetHeight: 240 });
    expect(c.p2p.peers().map((p) => p.peerId).sort()).toEqual([a1.p2p.peerId, a2.p2p.peerId].sort());
  }, 60_000);

  test('two nodes that mined apart converge on the heavier branch (the lighter one reorganises)', async () => {
    const a = await node();
    const b = await node();
    await mineBlocks(a.chain, 5, minerA);
    for (let h = 1; h <= 5; h++) await b.chain.addBlock((await a.chain.getBlockBytes(a.chain.getEntryByHeight(h)!.hashHex))!);
    await mineBlocks(a.chain, 6, minerA); // heavier: 11
    await mineBlocks(b.chain, 3, minerB); // lighter: 8
    const lighterTip = b.chain.tip.hashHex;
    await a.p2p.start();
    await b.p2p.start();
    await b.p2p.host.dial(a.p2p.host.getMultiaddrs()[0]);
    await waitFor(() => b.chain.tip.hashHex === a.chain.tip.hashHex, 20_000, 'b to reorganise onto a');
    expect(b.chain.getEntryByHash(lighterTip)).toBeDefined(); // kept as a side branch
    expect(a.chain.tip.height).toBe(11);
    // A new block on either side now travels by gossip.
    const next = await buildBlock(b.chain, minerB);
    await b.chain.addBlock(encodeBlock(next));
    await waitFor(() => a.chain.tip.height === 12, 10_000, 'a to receive b’s block by gossip');
    expect(a.chain.tip.hashHex).toBe(b.chain.tip.hashHex);
  }, 60_000);
});

describe('sync protocol transport', () => {
  test('blocks larger than libp2p’s default 4 MiB read buffer cross it, several in one answer', async () => {
    const big = new Uint8Array(6_000_000).map((_, i) => i & 0xff);
    const ids = protocolIds(new Uint8Array(32).fill(1));
    const mk = async () =>
      createHost({ privateKey: await generateKeyPair('Ed25519'), host: '127.0.0.1', port: 0, bootstrap: [], ids, maxMessageBytes: 1 << 20, maxConnections: 4, agentVersion: 't', isBanned: () => false });
    const [server, client] = [await mk(), await mk()];
    await server.start();
    await client.start();
    try {
      const fakeChain = { getBlockBytes: async () => big } as unknown as Parameters<typeof createSyncHandler>[0];
      await server.handle(ids.sync, createSyncHandler(fakeChain, { chainId: 1, genesisHash: new Uint8Array(32), penalize: () => undefined }));
      await client.dial(server.getMultiaddrs()[0]);
      const transport = new Libp2pSyncTransport(client, ids.sync, maxResponseFrame(8_000_000));
      const sizes: number[] = [];
      await transport.blocks(server.peerId.toString(), [new Uint8Array(32).fill(2), new Uint8Array(32).fill(3), new Uint8Array(32).fill(4)], (f) => sizes.push(f.type === 'block' ? f.bytes.length : -1), AbortSignal.timeout(20_000));
      // The answer stops at the responder's 8 MiB budget: two 6 MB blocks, the third is asked again later.
      expect(sizes).toEqual([6_000_000, 6_000_000]);
    } finally {
      await client.stop();
      await server.stop();
    }
  }, 30_000);
});

describe('sync state', () => {
  test('far behind a peer: isSyncing() and the progress figures; idle without peers', async () => {
    const n = await node();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const genesis = n.chain.getEntryByHeight(0)!;
    const transport: SyncTransport = {
      status: async () => ({ chainId: params.chainId, genesis: genesis.hash, height: 100, tip: new Uint8Array(32).fill(7), chainWork: genesis.chainWork + 100n * blockWork(params.genesis.bits) }),
      headers: async (_p, _l, _s, _m, signal) => {
        await Promise.race([held, new Promise((_, rej) => signal.addEventListener('abort', () => rej(signal.reason)))]);
        return [];
      },
      blocks: async () => undefined,
    };
    const sync = new SyncManager({ farBehindBlocks: 10 }, { chain: n.chain, transport, penalize: () => undefined });
    expect(sync.syncState()).toMatchObject({ syncing: false, height: 0, targetHeight: 0, eta: null, downloading: false });
    sync.start();
    sync.addPeer('peer-1');
    await waitFor(() => sync.isSyncing(), 5_000, 'isSyncing');
    expect(sync.syncState()).toMatchObject({ syncing: true, height: 0, targetHeight: 100 });
    sync.removePeer('peer-1');
    expect(sync.isSyncing()).toBe(false);
    release();
    await sync.stop();
  });

  test('the first download waits for the bootstrap peers’ statuses (or initialWaitMs), so it starts from all of them', async () => {
    const n = await node();
    const genesis = n.chain.getEntryByHeight(0)!;
    const claim = { chainId: params.chainId, genesis: genesis.hash, height: 100, tip: new Uint8Array(32).fill(7), chainWork: genesis.chainWork + 100n * blockWork(params.genesis.bits) };
    const asked: string[] = [];
    const transport: SyncTransport = { status: async () => claim, headers: async (peer) => (asked.push(peer), []), blocks: async () => undefined };
    const statusOf = (s: SyncManager, id: string) => waitFor(() => s.peerInfo(id) !== undefined, 5_000, `the status of ${id}`);
    // Two bootstrap peers: nothing is asked while only one has answered; both answered, the download starts.
    const both = new SyncManager({ tickMs: 20, initialPeers: 2, initialWaitMs: 60_000 }, { chain: n.chain, transport, penalize: () => undefined });
    try {
      both.start();
      both.addPeer('first');
      await statusOf(both, 'first');
      await new Promise((r) => setTimeout(r, 300)); // 15 ticks
      expect(asked).toEqual([]);
      both.addPeer('second');
      await waitFor(() => asked.length > 0, 5_000, 'the first headers request');
    } finally {
      await both.stop();
    }
    // A bootstrap peer that never answers delays the first download by initialWaitMs only.
    asked.length = 0;
    const one = new SyncManager({ tickMs: 20, initialPeers: 2, initialWaitMs: 400 }, { chain: n.chain, transport, penalize: () => undefined });
    try {
      const t0 = Date.now();
      one.start();
      one.addPeer('first');
      await waitFor(() => asked.length > 0, 5_000, 'the headers request after the wait');
      expect(Date.now() - t0).toBeGreaterThanOrEqual(400);
      expect(asked[0]).toBe('first');
    } finally {
      await one.stop();
    }
  });

  test('a peer whose headers prove its claim hollow stops counting towards syncing; one that timed out still counts and is asked again', async () => {
    const n = await node();
    const genesis = n.chain.getEntryByHeight(0)!;
    const claim = { chainId: params.chainId, genesis: genesis.hash, height: 100, tip: new Uint8Array(32).fill(7), chainWork: genesis.chainWork + 100n * blockWork(params.genesis.bits) };
    const asked: Record<string, number> = { liar: 0, slow: 0 };
    const transport: SyncTransport = {
      status: async () => claim,
      headers: async (peer) => {
        asked[peer]++;
        if (peer === 'slow') throw Object.assign(new Error('timed out'), { name: 'TimeoutError' });
        // Headers that do not connect to our chain: the claimed work is not there.
        const b = await buildBlock(n.chain, minerA);
        return [{ ...b.header, prevHash: new Uint8Array(32).fill(9) }];
      },
      blocks: async () => undefined,
    };
    const penalties: string[] = [];
    const sync = new SyncManager({ farBehindBlocks: 10, tickMs: 50, statusIntervalMs: 200 }, { chain: n.chain, transport, penalize: (peer) => penalties.push(peer) });
    try {
      expect(sync.hasPeerStatus()).toBe(false);
      sync.start();
      sync.addPeer('liar');
      await waitFor(() => asked.liar > 0 && !sync.isSyncing(), 5_000, 'the liar to be discredited');
      expect(sync.hasPeerStatus()).toBe(true);
      expect(penalties).toContain('liar');
      const liarAsks = asked.liar;
      sync.addPeer('slow');
      // A timeout is no proof: still syncing, and asked again at its next status refresh.
      await waitFor(() => asked.slow >= 3, 5_000, 'the slow peer to be asked again');
      expect(sync.isSyncing()).toBe(true);
      expect(sync.syncState().targetHeight).toBe(100);
      expect(asked.liar).toBe(liarAsks); // the discredited peer is not asked again while its claim stands
    } finally {
      await sync.stop();
    }
  });

  test('the progress bar line fits the terminal and shows height, target, rate and ETA', () => {
    const line = renderProgress({ syncing: true, downloading: true, height: 250, targetHeight: 1000, rate: 50, eta: 15 }, 80, 0);
    expect(line.length).toBeLessThanOrEqual(80);
    expect(line).toContain('25.0%');
    expect(line).toContain('250/1000');
    expect(line).toContain('50.0 blk/s');
    expect(line).toContain('ETA 15s');
    expect(renderProgress({ syncing: true, downloading: true, height: 0, targetHeight: 7200, rate: 1, eta: 7200 }, 40)).toHaveLength(40);
  });
});
