/**
 * Relay across real node processes on 127.0.0.1, started as a line A – B – C (each bootstraps
 * to the previous one only) where only C mines: C's blocks reach A; a transaction sent to A is
 * gossiped to C and mined by C (the block's coinbase pays C's miner address); and A and C find
 * each other through the DHT although neither is on the other's bootstrap list.
 * Blocks must arrive by gossip (A's gossip counters), not only by the sync's status poll.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { encodeAddress } from '../../consensus/address.js';
import { getDevKeyPair } from '../../consensus/devnet.js';
import type { ChainParams } from '../../consensus/params.js';
import { testKey } from '../helpers/keys.js';
import { balance, createP2PCluster, getJson, isMined, sendTransfer, status, waitUntil, type P2PCluster, type P2PProc } from '../p2p/helpers/processes.js';

let cluster: P2PCluster;
let params: ChainParams;
let a: P2PProc;
let b: P2PProc;
let c: P2PProc;
const minerC = testKey('relay-miner-c').address;

beforeAll(async () => {
  cluster = createP2PCluster('native-p2p-relay-', ['a', 'b', 'c']);
  params = cluster.params;
  a = await cluster.start('a', ['--no-mine']);
  b = await cluster.start('b', ['--no-mine', '--bootstrap', a.addr]);
  c = await cluster.start('c', ['--mine', '--miner-address', encodeAddress(minerC, params.hrp), '--bootstrap', b.addr]);
}, 120_000);

afterAll(() => cluster?.stop());

describe('gossip relay A – B – C', () => {
  test('blocks mined by C reach A', async () => {
    await waitUntil(
      async () => {
        const [sa, sc] = await Promise.all([status(a.url), status(c.url)]);
        return sc.height >= 2 && sa.tip === sc.tip;
      },
      60_000,
      'A to hold C’s blocks',
    );
    // By gossip too, not only by the sync (its status poll would also bring them, 10 s later);
    // C's first blocks may predate the links, so wait for one C mines once they are up.
    await waitUntil(async () => (await getJson(a.url, '/api/v1/peers')).gossip.blocks.accept >= 1, 60_000, 'A to accept a block from gossip');
  }, 130_000);

  test('a transaction sent to A is mined by C, and A sees it mined', async () => {
    const to = testKey('relay-recipient').address;
    const txId = await sendTransfer(a.url, params, getDevKeyPair(), to, 123_456_789n);
    await waitUntil(() => isMined(a.url, txId), 60_000, 'the transaction to be mined and seen on A');
    const tx = await getJson(a.url, `/api/v1/tx/${txId}`);
    const block = await getJson(a.url, `/api/v1/block/${tx.blockHash}`);
    expect(block.coinbase.miner).toBe(encodeAddress(minerC, params.hrp));
    expect(await isMined(c.url, txId)).toBe(true);
    expect(await balance(a.url, params, to)).toBe(123_456_789n);
    expect((await getJson(a.url, '/api/v1/peers')).gossip.published.txs).toBeGreaterThanOrEqual(1);
  }, 70_000);

  test('A discovers C through the DHT (C is not on its bootstrap list)', async () => {
    await waitUntil(async () => ((await getJson(a.url, '/api/v1/peers')).peers as { peerId: string }[]).some((p) => p.peerId === c.peerId), 45_000, 'A to connect to C', 500);
  }, 50_000);
});
