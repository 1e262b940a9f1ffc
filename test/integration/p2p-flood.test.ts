/**
 * The mempool flood through gossip: a rogue libp2p host (in this process) relays
 * zero-balance future-nonce transactions on a real node's transaction topic, as a peer running a
 * wedged mempool would. Node A (`--block-time 1`) refuses each one `mempool_unpayable` (checked
 * before any signature), rejects it on gossip (not forwarded) and scores the relay 20 points: the
 * fifth bans it (listed in `/api/v1/peers` bans, disconnected, not let back in). Meanwhile node B,
 * an honest peer following A, is reached by none of the flood, keeps following A's chain, and an
 * honest payment sent to B is relayed to A and mined.
 *
 * Budget: ~45 s on a quiet 2-core machine, most of it the two node starts; measured 17–24 s on
 * the shared machine at load 9–12 (docs/benchmarks.md, mempool).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { multiaddr } from '@multiformats/multiaddr';
import { getDevKeyPair } from '../../consensus/devnet.js';
import { fromHex } from '../../consensus/hash.js';
import { COIN, DEVNET_POW_LIMIT_BITS, type ChainParams } from '../../consensus/params.js';
import type { Host } from '../../p2p/host.js';
import { startRogue } from '../p2p/helpers/rogue.js';
import { protocolIds, type ProtocolIds } from '../../p2p/protocol.js';
import { createFastTransferBuilder, floodKey } from '../helpers/floodKeys.js';
import { getJson, isMined, sendTransfer, startP2PNode, status, stopProc, waitUntil, writeSharedGenesis, type P2PProc } from '../p2p/helpers/processes.js';

/** Zero-balance keys of the flood, each relaying nonces 1…16. */
const FLOOD_KEYS = 40;
const FUTURE = 16;

let dir: string;
let params: ChainParams;
let ids: ProtocolIds;
let a: P2PProc;
let b: P2PProc;
let rogue: Host | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'native-p2p-flood-'));
  // A paced devnet (interval mining at 1 s, the easiest bits), shared by both nodes.
  params = writeSharedGenesis([join(dir, 'a'), join(dir, 'b')], { targetSpacing: 1, genesisBits: DEVNET_POW_LIMIT_BITS, powLimitBits: DEVNET_POW_LIMIT_BITS });
  a = await startP2PNode(join(dir, 'a'), ['--block-time', '1'], dir);
  b = await startP2PNode(join(dir, 'b'), ['--no-mine', '--bootstrap', a.addr], dir);
  ids = protocolIds(fromHex((await getJson(a.url, '/api/v1/block/0')).hash));
}, 120_000);

afterAll(async () => {
  try {
    await rogue?.stop();
  } catch {
    // already stopped
  }
  await Promise.all([a, b].filter(Boolean).map((p) => stopProc(p)));
  rmSync(dir, { recursive: true, force: true });
});

async function peerIds(url: string): Promise<{ peers: string[]; banned: { peerId: string; reason: string }[] }> {
  const p = await getJson(url, '/api/v1/peers');
  return { peers: (p.peers as { peerId: string }[]).map((x) => x.peerId), banned: p.banned };
}

describe('a peer relaying unpayable future-nonce transactions over gossip', () => {
  test('is refused, scored and banned; the honest peer keeps following and an honest payment is mined', async () => {
    await waitUntil(async () => (await peerIds(a.url)).peers.includes(b.peerId), 30_000, 'the honest peer to connect');

    // The flood, signed before the rogue connects: 40 zero-balance keys × nonces 1…16 (the key on the first), 1,000 NATIVE of fee claimed each.
    const build = await createFastTransferBuilder();
    const to = floodKey('p2p-payee', 0).address;
    const flood = Array.from({ length: FLOOD_KEYS }, (_, k) => floodKey('p2p-zero', k)).flatMap((key) =>
      Array.from({ length: FUTURE }, (_, n) => build({ key, chainId: params.chainId, to, amount: 1n, nonce: BigInt(n + 1), includeKey: n === 0, fee: 1_000n * COIN })),
    );

    rogue = await startRogue(ids, a.addr);
    rogue.services.pubsub.subscribe(ids.txTopic);
    const r = rogue;
    await waitUntil(() => r.services.pubsub.getSubscribers(ids.txTopic).some((p) => p.toString() === a.peerId), 10_000, 'the node to know the rogue on the tx topic', 100);
    const rogueId = rogue.peerId.toString();
    const gossipA0 = (await getJson(a.url, '/api/v1/peers')).gossip.txs;
    const gossipB0 = (await getJson(b.url, '/api/v1/peers')).gossip.txs;

    // The honest payment goes to B while the rogue floods A.
    const h0 = (await status(a.url)).height;
    const relaying = (async () => {
      let published = 0;
      for (const tx of flood) {
        await r.services.pubsub.publish(ids.txTopic, tx.bytes).catch(() => undefined);
        published++;
      }
      return published;
    })();
    const honest = await sendTransfer(b.url, params, getDevKeyPair(), to, COIN);
    expect(await relaying).toBe(flood.length);

    // Banned for relaying what can never be mined, disconnected.
    await waitUntil(async () => {
      const p = await peerIds(a.url);
      return p.banned.some((x) => x.peerId === rogueId) && !p.peers.includes(rogueId);
    }, 20_000, 'the flooding peer to be banned and disconnected');
    const bans = (await peerIds(a.url)).banned;
    expect(bans.find((x) => x.peerId === rogueId)!.reason).toMatch(/mempool_unpayable/);
    const gossipA = (await getJson(a.url, '/api/v1/peers')).gossip.txs;
    // At least the five rejections that ban (20 points each, threshold 100); none accepted.
    expect(gossipA.reject - gossipA0.reject).toBeGreaterThanOrEqual(5);

    // Nothing of the flood is pending anywhere: A refused it, B never saw it (A forwards only what it accepts).
    const [sa, sb] = await Promise.all([getJson(a.url, '/api/v1/status'), getJson(b.url, '/api/v1/status')]);
    expect(sa.mempool.queued.count).toBe(0);
    expect(sb.mempool.queued.count).toBe(0);
    const gossipB = (await getJson(b.url, '/api/v1/peers')).gossip.txs;
    expect(gossipB.reject - gossipB0.reject).toBe(0);
    for (const tx of flood.filter((_, i) => i % 97 === 0)) {
      for (const url of [a.url, b.url]) expect((await fetch(`${url}/api/v1/tx/${tx.id}`)).status).toBe(404);
    }

    // The rogue tries to come back: refused.
    await rogue.dial(multiaddr(a.addr), { signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
    await new Promise((res) => setTimeout(res, 1_500));
    expect((await peerIds(a.url)).peers).not.toContain(rogueId);

    // The honest payment, sent to B, is mined by A; B follows A's chain, still its peer.
    await waitUntil(async () => (await isMined(a.url, honest)) && (await isMined(b.url, honest)), 30_000, 'the honest payment to be mined and seen by both nodes');
    await waitUntil(
      async () => {
        const [x, y] = await Promise.all([status(a.url), status(b.url)]);
        return x.height > h0 + 1 && y.tip === x.tip;
      },
      30_000,
      'the honest peer to follow new blocks',
    );
    expect((await peerIds(a.url)).peers).toContain(b.peerId);
  }, 90_000);
});
