/**
 * Misbehaving peers against a real node process on 127.0.0.1: rogue libp2p hosts (in this
 * process) send garbage and an oversized frame on the sync protocol, an oversized transaction,
 * an oversized and an undecodable gossipsub frame and an invalid block on gossip. Each is banned (listed in `/api/v1/peers`, disconnected, not
 * let back in) while the node keeps serving HTTP and an honest peer keeps following its chain.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { peerIdFromString } from '@libp2p/peer-id';
import { multiaddr } from '@multiformats/multiaddr';
import { assembleBlock } from '../../consensus/assemble.js';
import { encodeBlock } from '../../consensus/block.js';
import { fromHex } from '../../consensus/hash.js';
import { createParamsFromJson, type ChainParams } from '../../consensus/params.js';
import type { Host } from '../../p2p/host.js';
import { startRogue } from '../p2p/helpers/rogue.js';
import { protocolIds, type ProtocolIds } from '../../p2p/protocol.js';
import { Rng } from '../helpers/rng.js';
import { getJson, startP2PNode, status, stopProc, waitUntil, writeSharedGenesis, type P2PProc } from '../p2p/helpers/processes.js';

let dir: string;
let params: ChainParams;
let ids: ProtocolIds;
let a: P2PProc;
let b: P2PProc;
const rogues: Host[] = [];
const rng = new Rng(6);

async function rogue(): Promise<Host> {
  const host = await startRogue(ids, a.addr);
  rogues.push(host);
  return host;
}

async function banned(peerId: string): Promise<boolean> {
  const peers = await getJson(a.url, '/api/v1/peers');
  return (peers.banned as { peerId: string }[]).some((x) => x.peerId === peerId) && !(peers.peers as { peerId: string }[]).some((x) => x.peerId === peerId);
}

/** The rogue tries to come back; the node must not keep it as a peer. */
async function expectKeptOut(host: Host): Promise<void> {
  await host.dial(multiaddr(a.addr), { signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
  await new Promise((r) => setTimeout(r, 1_500));
  const peers = (await getJson(a.url, '/api/v1/peers')).peers as { peerId: string }[];
  expect(peers.some((p) => p.peerId === host.peerId.toString())).toBe(false);
}

/** A rogue the node knows as a gossip peer, with a raw gossipsub stream to the node. */
async function rogueGossipStream(): Promise<{ r: Host; stream: Awaited<ReturnType<Host['dialProtocol']>> }> {
  const r = await rogue();
  r.services.pubsub.subscribe(ids.txTopic);
  await waitUntil(() => r.services.pubsub.getSubscribers(ids.txTopic).some((p) => p.toString() === a.peerId), 10_000, 'the node to know the rogue as a gossip peer', 100);
  return { r, stream: await r.dialProtocol(peerIdFromString(a.peerId), ['/meshsub/1.2.0', '/meshsub/1.1.0']) };
}

/** The rogue is banned for `reason`, and kept out. */
async function expectBannedFor(r: Host, reason: RegExp): Promise<void> {
  await waitUntil(() => banned(r.peerId.toString()), 10_000, `the peer to be banned for ${reason.source}`);
  const peers = await getJson(a.url, '/api/v1/peers');
  expect(peers.banned.find((x: { peerId: string }) => x.peerId === r.peerId.toString()).reason).toMatch(reason);
  await expectKeptOut(r);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'native-p2p-ban-'));
  params = writeSharedGenesis([join(dir, 'a'), join(dir, 'b')]);
  a = await startP2PNode(join(dir, 'a'), ['--mine'], dir);
  b = await startP2PNode(join(dir, 'b'), ['--no-mine', '--bootstrap', a.addr], dir);
  ids = protocolIds(fromHex((await getJson(a.url, '/api/v1/block/0')).hash));
  expect(createParamsFromJson(JSON.parse(readFileSync(join(dir, 'a', 'genesis.json'), 'utf8'))).chainId).toBe(params.chainId);
}, 120_000);

afterAll(async () => {
  for (const r of rogues) {
    try {
      await r.stop();
    } catch {
      // already stopped
    }
  }
  await Promise.all([a, b].filter(Boolean).map((p) => stopProc(p)));
  rmSync(dir, { recursive: true, force: true });
});

describe('a misbehaving peer is banned while the node keeps serving', () => {
  test('garbage on the sync protocol', async () => {
    const r = await rogue();
    const stream = await r.dialProtocol(peerIdFromString(a.peerId), ids.sync);
    // A well-framed request of an unknown type, followed by noise.
    stream.send(Uint8Array.from([0x20, 0xee, ...rng.bytes(31)]));
    await stream.close().catch(() => undefined);
    await waitUntil(() => banned(r.peerId.toString()), 10_000, 'the garbage peer to be banned');
    await expectKeptOut(r);
  }, 30_000);

  test('an oversized frame on the sync protocol', async () => {
    const r = await rogue();
    const stream = await r.dialProtocol(peerIdFromString(a.peerId), ids.sync);
    // Length prefix of 50 MB (the request limit is 8 KiB), then some bytes.
    stream.send(Uint8Array.from([0x80, 0xe1, 0xeb, 0x17, ...rng.bytes(1024)]));
    await waitUntil(() => banned(r.peerId.toString()), 10_000, 'the oversized-frame peer to be banned');
    await expectKeptOut(r);
  }, 30_000);

  test('an oversized transaction on gossip', async () => {
    const r = await rogue();
    r.services.pubsub.subscribe(ids.txTopic);
    await waitUntil(() => r.services.pubsub.getSubscribers(ids.txTopic).some((p) => p.toString() === a.peerId), 10_000, 'the node to subscribe to the tx topic', 100);
    await r.services.pubsub.publish(ids.txTopic, rng.bytes(params.limits.maxTxBytes + 1000));
    await waitUntil(() => banned(r.peerId.toString()), 10_000, 'the oversized-tx peer to be banned');
  }, 30_000);

  test('an oversized frame on the gossip protocol itself (dropped by gossipsub before any topic validator)', async () => {
    const { r, stream } = await rogueGossipStream();
    // Length prefix of 40 MB (gossipsub's inbound limit is the block limit + 64 KiB), then some bytes.
    stream.send(Uint8Array.from([0x80, 0x80, 0x80, 0x14, ...rng.bytes(1024)]));
    await expectBannedFor(r, /gossip frame over the size limit/);
    expect((await getJson(a.url, '/api/v1/peers')).gossip.frames.oversized).toBeGreaterThanOrEqual(1);
  }, 30_000);

  test('an undecodable frame on the gossip protocol', async () => {
    const { r, stream } = await rogueGossipStream();
    // A well-framed 32-byte RPC that is not protobuf (field 0 with wire type 7 is invalid).
    stream.send(Uint8Array.from([0x20, 0x07, ...rng.bytes(31)]));
    await expectBannedFor(r, /undecodable gossip frame/);
    expect((await getJson(a.url, '/api/v1/peers')).gossip.frames.undecodable).toBeGreaterThanOrEqual(1);
  }, 30_000);

  test('an invalid block on gossip (no proof of work on top of the node’s tip)', async () => {
    const r = await rogue();
    r.services.pubsub.subscribe(ids.blockTopic);
    await waitUntil(() => r.services.pubsub.getSubscribers(ids.blockTopic).some((p) => p.toString() === a.peerId), 10_000, 'the node to subscribe to the block topic', 100);
    const s = await getJson(a.url, '/api/v1/status');
    const block = assembleBlock(
      { parent: { hash: fromHex(s.tip), height: s.height, time: s.time }, medianTimePast: s.medianTime, now: Math.floor(Date.now() / 1000), txs: [], miner: new Uint8Array(20).fill(0xbb), state: { get: () => undefined } },
      params,
    );
    // Nonce 0 at a ~2^20-hash target: the header does not meet it.
    await r.services.pubsub.publish(ids.blockTopic, encodeBlock(block));
    await waitUntil(() => banned(r.peerId.toString()), 10_000, 'the invalid-block peer to be banned');
    const peers = await getJson(a.url, '/api/v1/peers');
    expect(peers.banned.find((x: { peerId: string }) => x.peerId === r.peerId.toString()).reason).toMatch(/block_high_hash/);
    expect(peers.gossip.blocks.reject).toBeGreaterThanOrEqual(1);
    await expectKeptOut(r);
  }, 30_000);

  test('the node kept serving: HTTP answers, the honest peer is still connected and follows its chain', async () => {
    const before = await status(a.url);
    expect((await getJson(a.url, '/api/v1/peers')).peers.map((p: { peerId: string }) => p.peerId)).toContain(b.peerId);
    await waitUntil(
      async () => {
        const [sa, sb] = await Promise.all([status(a.url), status(b.url)]);
        return sa.height > before.height && sb.tip === sa.tip;
      },
      60_000,
      'the honest peer to follow a new block',
      200,
    );
    expect((await getJson(a.url, '/api/v1/peers')).banned.length).toBeGreaterThanOrEqual(6);
  }, 70_000);
});
