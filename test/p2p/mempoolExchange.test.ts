/**
 * The mempool exchange (`/native/<net>/mempool/1.0.0`): its codec and limits; two in-process
 * nodes over real libp2p on 127.0.0.1 exchanging their mempools on connect; the rebroadcast of a
 * node's own pending transactions until mined; and a rogue peer's bad input (an oversized
 * inventory, unknown ids, a transaction other than the one asked, an invalid one, an announce
 * flood) met with the stable codes and the penalties of the ban logic, never a crash.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { generateKeyPair } from '@libp2p/crypto/keys';
import { peerIdFromString } from '@libp2p/peer-id';
import { lpStream } from '@libp2p/utils';
import type { Stream } from '@libp2p/interface';
import { multiaddr } from '@multiformats/multiaddr';
import { Writer } from '../../consensus/codec.js';
import { CodecError } from '../../consensus/errors.js';
import { createDevnetChainParams, getDevKeyPair } from '../../consensus/devnet.js';
import { encodeBlock } from '../../consensus/block.js';
import { toHex } from '../../consensus/hash.js';
import { decodeTx, encodeTx, txId } from '../../consensus/tx.js';
import { createTransferTx } from '../../consensus/txBuilder.js';
import { createHost, type Host } from '../../p2p/host.js';
import { protocolIds, type ProtocolIds } from '../../p2p/protocol.js';
import {
  MAX_INVENTORY,
  MAX_TXS_PER_REQUEST,
  MempoolMsgType,
  decodeMempoolRequest,
  decodeTxFrame,
  encodeMempoolRequest,
  encodeTxFrame,
  encodeTxNotFound,
} from '../../p2p/mempoolProtocol.js';
import { MempoolExchange, TokenBuckets } from '../../p2p/mempoolExchange.js';
import { buildBlock, createTestNode, waitFor, type TestNode } from './helpers/node.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';

const params = createDevnetChainParams({ genesisBits: 0x207fffff, genesisTime: Math.floor(Date.now() / 1000) - 200_000 });
const ids: ProtocolIds = protocolIds(new Uint8Array(32));
const dev = getDevKeyPair();
const h = (n: number) => new Uint8Array(32).fill(n);
const nodes: TestNode[] = [];
const hosts: Host[] = [];
const exchanges: MempoolExchange[] = [];

/** A dev-key transfer with nonce `nonce` (the key carried on the first). */
function transferTx(nonce: bigint, amount = 1_000n) {
  return createTransferTx({ key: dev, chainId: params.chainId, to: new Uint8Array(20).fill(0x42), amount, nonce, includeKey: nonce === 0n, feeRate: params.minFeeRate });
}

async function node(opts: Parameters<typeof createTestNode>[2] = {}): Promise<TestNode> {
  const n = await createTestNode(await tmpDir('native-p2p-mempool-'), params, opts);
  nodes.push(n);
  return n;
}

async function host(netIds: ProtocolIds): Promise<Host> {
  const hst = await createHost({ privateKey: await generateKeyPair('Ed25519'), host: '127.0.0.1', port: 0, bootstrap: [], ids: netIds, maxMessageBytes: 16 * 1024 * 1024, maxConnections: 8, agentVersion: 'test/1', isBanned: () => false });
  await hst.start();
  hosts.push(hst);
  return hst;
}

/** Sends one raw request frame on a new mempool stream from `from` to `to`; resolves with the answer frames. */
async function rawRequest(from: Host, to: string, proto: string, frame: Uint8Array): Promise<Uint8Array[]> {
  const stream = await from.dialProtocol(peerIdFromString(to), proto, { signal: AbortSignal.timeout(5_000) });
  const lp = lpStream(stream, { maxDataLength: 32 * 1024 * 1024 });
  await lp.write(frame);
  await stream.close();
  const out: Uint8Array[] = [];
  for (let i = 0; i < 1000; i++) {
    try {
      out.push((await lp.read({ signal: AbortSignal.timeout(5_000) })).subarray());
    } catch {
      break;
    }
  }
  return out;
}

afterAll(async () => {
  for (const e of exchanges) e.stop();
  for (const hst of hosts) await Promise.resolve(hst.stop()).catch(() => undefined);
  for (const n of nodes) await n.stop().catch(() => undefined);
  await cleanupTmp();
});

describe('mempool exchange codec', () => {
  test('requests and answer frames round-trip', () => {
    for (const req of [
      { type: 'announce' as const, ids: [] },
      { type: 'announce' as const, ids: Array.from({ length: MAX_INVENTORY }, (_, i) => h(i % 256)) },
      { type: 'getTxs' as const, ids: Array.from({ length: MAX_TXS_PER_REQUEST }, (_, i) => h(i % 256)) },
    ]) {
      expect(decodeMempoolRequest(encodeMempoolRequest(req))).toEqual(req);
    }
    const tx = transferTx(0n).bytes;
    const f = decodeTxFrame(encodeTxFrame(tx).subarray());
    expect(f.type === 'tx' && Buffer.from(f.bytes).equals(Buffer.from(tx))).toBe(true);
    expect(decodeTxFrame(encodeTxNotFound(h(5)))).toEqual({ type: 'notFound', id: h(5) });
  });

  test('an inventory above MAX_INVENTORY ids is refused codec_oversized, on both sides', () => {
    const tooMany = Array.from({ length: MAX_INVENTORY + 1 }, () => h(1));
    expect(() => encodeMempoolRequest({ type: 'announce', ids: tooMany })).toThrow(expect.objectContaining({ code: 'codec_oversized' }));
    const w = new Writer().u8(MempoolMsgType.ANNOUNCE).varint(MAX_INVENTORY + 1);
    for (const id of tooMany) w.raw(id);
    expect(() => decodeMempoolRequest(w.finish())).toThrow(expect.objectContaining({ code: 'codec_oversized' }));
    // A count within the limit but a frame past the byte limit is refused before it is parsed.
    expect(() => decodeMempoolRequest(new Uint8Array(MAX_INVENTORY * 32 + 64))).toThrow(expect.objectContaining({ code: 'codec_oversized' }));
  });

  test('malformed requests and frames are codec errors', () => {
    const bad = [
      new Uint8Array(0),
      Uint8Array.of(0x7f, 0),
      Uint8Array.of(MempoolMsgType.GET_TXS, 0),
      Uint8Array.of(MempoolMsgType.GET_TXS, 0x81, 0x02),
      Uint8Array.of(MempoolMsgType.ANNOUNCE, 1, 1, 2, 3),
      Uint8Array.of(MempoolMsgType.ANNOUNCE, 0, 0),
    ];
    for (const b of bad) expect(() => decodeMempoolRequest(b)).toThrow(CodecError);
    expect(() => encodeMempoolRequest({ type: 'getTxs', ids: [] })).toThrow(CodecError);
    expect(() => decodeTxFrame(new Uint8Array(0))).toThrow(CodecError);
    expect(() => decodeTxFrame(Uint8Array.of(MempoolMsgType.TX))).toThrow(CodecError);
    expect(() => decodeTxFrame(Uint8Array.of(MempoolMsgType.NOT_FOUND, 1, 2))).toThrow(CodecError);
  });

  test('token buckets refill with time', () => {
    let now = 0;
    const b = new TokenBuckets(4, 1_000, () => now);
    expect(b.take('p', 10)).toBe(4);
    expect(b.take('p')).toBe(0);
    expect(b.take('q')).toBe(1);
    now = 2_500;
    expect(b.take('p', 10)).toBe(2);
  });
});

describe('two nodes exchange their mempools on connect', () => {
  test('a transaction pending at B before the nodes met reaches A, fetched over the protocol', async () => {
    const a = await node();
    const b = await node();
    await a.p2p.start();
    await b.p2p.start();
    const t = transferTx(0n);
    await b.mempool.add(t.bytes);
    expect(a.mempool.has(t.id)).toBe(false);
    await a.p2p.host.dial(b.p2p.host.getMultiaddrs()[0]);
    await waitFor(() => a.mempool.has(t.id), 15_000, 'A to hold the transaction pending at B');
    const sa = a.p2p.mempoolExchangeStats();
    expect(sa.fetched).toMatchObject({ requested: 1, accepted: 1, rejected: 0 });
    expect(b.p2p.mempoolExchangeStats().served.txs).toBe(1);
    // B's own transaction is rebroadcast by B; A got it from a peer, so A does not.
    expect(b.p2p.mempoolExchange.localPending().map(toHex)).toEqual([t.id]);
    expect(a.p2p.mempoolExchange.localPending()).toEqual([]);
    expect(a.p2p.scores.score(b.p2p.peerId)).toBe(0);
  }, 30_000);
});

describe('rebroadcast of the node’s own pending transactions', () => {
  /** Two nodes' chains and mempools joined by the exchange alone (no gossip, no sync): only an announcement carries a transaction. */
  async function pair(syncingA: () => boolean = () => false) {
    const na = await node();
    const nb = await node();
    const [ha, hb] = [await host(ids), await host(ids)];
    const mk = (hst: Host, n: TestNode, syncing: () => boolean) => {
      const e = new MempoolExchange({ rebroadcastMs: 300 }, { node: hst, protocol: ids.mempool, mempool: n.mempool, maxTxBytes: params.limits.maxTxBytes, penalize: () => undefined, isBanned: () => false, syncing });
      exchanges.push(e);
      return e;
    };
    const ea = mk(ha, na, syncingA);
    const eb = mk(hb, nb, () => false);
    await ha.handle(ids.mempool, ea.handler);
    await hb.handle(ids.mempool, eb.handler);
    ea.start();
    eb.start();
    await ha.dial(hb.getMultiaddrs()[0]);
    return { na, nb, ea, eb, connect: () => (ea.addPeer(hb.peerId.toString()), eb.addPeer(ha.peerId.toString())) };
  }

  test('announced again until mined, so a peer that missed it fetches it', async () => {
    const { na, nb, ea, eb, connect } = await pair();
    connect();
    await waitFor(() => eb.stats.announces.received >= 1 && ea.stats.announces.received >= 1, 5_000, 'the announcements on connect');
    // Submitted at B after the peers met: nothing but the rebroadcast tells A.
    const t = transferTx(0n);
    await nb.mempool.add(t.bytes);
    await waitFor(() => na.mempool.has(t.id), 10_000, 'A to fetch B’s transaction from a rebroadcast');
    expect(ea.localPending()).toEqual([]);
    expect(eb.localPending().map(toHex)).toEqual([t.id]);
    // Mined: no longer announced.
    const block = encodeBlock(await buildBlock(nb.chain, new Uint8Array(20).fill(9), [decodeTx(t.bytes)]));
    expect((await nb.chain.addBlock(block)).status).toBe('connected');
    await nb.mempool.idle();
    expect(nb.mempool.has(t.id)).toBe(false);
    expect(eb.localPending()).toEqual([]);
    const sent = eb.stats.announces.sent;
    await new Promise((r) => setTimeout(r, 1_000));
    expect(eb.stats.announces.sent).toBe(sent);
  }, 30_000);

  test('a syncing node holds announcements until it has caught up', async () => {
    let syncing = true;
    const { na, nb, ea, connect } = await pair(() => syncing);
    const t = transferTx(0n);
    await nb.mempool.add(t.bytes);
    connect();
    await waitFor(() => ea.stats.announces.received >= 1, 5_000, 'B’s announcement');
    await new Promise((r) => setTimeout(r, 1_500));
    expect(ea.stats.fetched.requested).toBe(0);
    syncing = false;
    await waitFor(() => na.mempool.has(t.id), 10_000, 'A to fetch once caught up');
  }, 30_000);
});

describe('bad input from a peer', () => {
  /** A started node and a rogue host connected to it; the rogue answers GET_TXS with `answer`. */
  async function setup(answer?: (ids: Uint8Array[]) => Uint8Array[]) {
    const n = await node({ mempoolExchange: { announceBurst: 2, announceRefillMs: 60_000 } });
    await n.p2p.start();
    const netIds = n.p2p.ids;
    const rogue = await host(netIds);
    if (answer) {
      await rogue.handle(netIds.mempool, async (stream: Stream) => {
        const lp = lpStream(stream);
        const req = decodeMempoolRequest((await lp.read()).subarray());
        if (req.type === 'getTxs') for (const f of answer(req.ids as Uint8Array[])) await lp.write(f);
        await stream.close();
      });
    }
    await rogue.dial(multiaddr(n.p2p.listen[0]));
    await waitFor(() => n.p2p.peers().some((p) => p.peerId === rogue.peerId.toString()), 5_000, 'the rogue to connect');
    return { n, rogue, peer: n.p2p.peerId };
  }

  test('unknown ids: announced ones the peer cannot serve are ignored, asked ones are answered NOT_FOUND; no penalty', async () => {
    const { n, rogue, peer } = await setup((asked) => asked.map((id) => encodeTxNotFound(id)));
    const unknown = [h(1), h(2), h(3)];
    expect(await rawRequest(rogue, peer, n.p2p.ids.mempool, encodeMempoolRequest({ type: 'announce', ids: unknown }))).toEqual([]);
    await waitFor(() => n.p2p.mempoolExchangeStats().fetched.notFound === 3, 5_000, 'the node to ask for the three ids');
    expect(n.mempool.count).toBe(0);
    const answers = await rawRequest(rogue, peer, n.p2p.ids.mempool, encodeMempoolRequest({ type: 'getTxs', ids: unknown }));
    expect(answers.map(decodeTxFrame)).toEqual(unknown.map((id) => ({ type: 'notFound', id })));
    expect(n.p2p.scores.score(rogue.peerId.toString())).toBe(0);
  }, 30_000);

  test('an oversized inventory is refused p2p_protocol_violation and bans the peer; the node keeps serving', async () => {
    const { n, rogue, peer } = await setup();
    const w = new Writer().u8(MempoolMsgType.ANNOUNCE).varint(MAX_INVENTORY + 1);
    for (let i = 0; i <= MAX_INVENTORY; i++) w.raw(h(i % 256));
    await rawRequest(rogue, peer, n.p2p.ids.mempool, w.finish()).catch(() => []);
    await waitFor(() => n.p2p.scores.isBanned(rogue.peerId.toString()), 5_000, 'the rogue to be banned');
    expect(n.p2p.bans()[0].reason).toBe('mempool request: frame above the size limit (p2p_protocol_violation)');
    expect(n.p2p.mempoolExchangeStats().malformed).toBe(1);
    // A well-formed count over the limit inside a small frame: malformed (codec_oversized), from a second rogue.
    const rogue2 = await host(n.p2p.ids);
    await rogue2.dial(multiaddr(n.p2p.listen[0]));
    await rawRequest(rogue2, peer, n.p2p.ids.mempool, Uint8Array.of(MempoolMsgType.GET_TXS, 0x81, 0x02)).catch(() => []);
    await waitFor(() => n.p2p.scores.isBanned(rogue2.peerId.toString()), 5_000, 'the second rogue to be banned');
    expect(n.p2p.bans().find((b) => b.peerId === rogue2.peerId.toString())!.reason).toMatch(/^mempool request: GET_TXS count 257 exceeds 256 .*\(p2p_protocol_violation\)$/);
    // Still serving an honest peer.
    const honest = await node();
    await honest.p2p.start();
    const t = transferTx(0n);
    await n.mempool.add(t.bytes);
    await honest.p2p.host.dial(n.p2p.host.getMultiaddrs()[0]);
    await waitFor(() => honest.mempool.has(t.id), 15_000, 'an honest peer to fetch the node’s mempool');
  }, 40_000);

  test('a transaction other than the one asked for is unsolicited: the peer is banned, nothing admitted', async () => {
    const other = transferTx(0n, 5n).bytes;
    const { n, rogue, peer } = await setup((asked) => asked.map(() => encodeTxFrame(other).subarray()));
    await rawRequest(rogue, peer, n.p2p.ids.mempool, encodeMempoolRequest({ type: 'announce', ids: [h(7)] }));
    await waitFor(() => n.p2p.scores.isBanned(rogue.peerId.toString()), 5_000, 'the rogue to be banned');
    expect(n.p2p.bans()[0].reason).toMatch(/^sent transaction [0-9a-f]{64} in the place of 0707[0-9a-f]{60} \(p2p_protocol_violation\)$/);
    expect(n.mempool.count).toBe(0);
  }, 30_000);

  test('an invalid transaction goes through admission and costs the peer its ban score, as over gossip', async () => {
    const good = transferTx(0n);
    // Same transaction, another signature byte: a different id, an invalid signature.
    const tampered = decodeTx(good.bytes);
    const sig = { ...tampered.signature, ed25519: Uint8Array.from(tampered.signature.ed25519, (b, i) => (i === 0 ? b ^ 1 : b)) };
    const bad = encodeTx({ ...tampered, signature: sig });
    const { n, rogue, peer } = await setup(() => [encodeTxFrame(bad).subarray()]);
    await rawRequest(rogue, peer, n.p2p.ids.mempool, encodeMempoolRequest({ type: 'announce', ids: [txId(bad)] }));
    await waitFor(() => n.p2p.mempoolExchangeStats().fetched.rejected === 1, 10_000, 'the invalid transaction to be rejected');
    expect(n.mempool.count).toBe(0);
    await waitFor(() => n.p2p.scores.isBanned(rogue.peerId.toString()), 5_000, 'the rogue to be banned');
    expect(n.p2p.bans()[0].reason).toBe('mempool exchange tx: tx_bad_signature');
  }, 30_000);

  test('announcements past the rate limit are dropped, not fetched', async () => {
    const { n, rogue, peer } = await setup((asked) => asked.map((id) => encodeTxNotFound(id)));
    for (let i = 0; i < 4; i++) await rawRequest(rogue, peer, n.p2p.ids.mempool, encodeMempoolRequest({ type: 'announce', ids: [h(20 + i)] }));
    await waitFor(() => n.p2p.mempoolExchangeStats().announces.received === 4, 5_000, 'four announcements');
    const s = n.p2p.mempoolExchangeStats();
    expect(s.announces.rateLimited).toBe(2);
    await waitFor(() => n.p2p.mempoolExchangeStats().fetched.requested === 2, 5_000, 'two fetched');
    expect(n.p2p.scores.score(rogue.peerId.toString())).toBe(0);
  }, 30_000);
});
