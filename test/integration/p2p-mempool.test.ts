/**
 * Transactions sent while the miner is down are mined once it is back, with real node processes
 * on 127.0.0.1: A mines, B (bootstrapped to A) and C (bootstrapped to B) do not. A stops; one
 * transfer is sent to B and one to C (gossiped between them, so both hold both); A restarts,
 * bootstrapped to B only, with an empty mempool. Gossip does not repeat old transactions to a
 * newcomer: A learns them from the mempool exchange on connect and mines them within a few blocks.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { encodeAddress } from '../../consensus/address.js';
import { getDevKeyPair } from '../../consensus/devnet.js';
import type { ChainParams } from '../../consensus/params.js';
import { testKey } from '../helpers/keys.js';
import { balance, createP2PCluster, getJson, isMined, sendTransfer, status, stopProc, waitUntil, type P2PCluster, type P2PProc } from '../p2p/helpers/processes.js';

let cluster: P2PCluster;
let params: ChainParams;
let a: P2PProc;
let b: P2PProc;
let c: P2PProc;
const minerA = testKey('mempool-miner-a').address;
const mineArgs = () => ['--mine', '--miner-address', encodeAddress(minerA, params.hrp)];

beforeAll(async () => {
  cluster = createP2PCluster('native-p2p-mempool-', ['a', 'b', 'c']);
  params = cluster.params;
  a = await cluster.start('a', mineArgs());
  b = await cluster.start('b', ['--no-mine', '--bootstrap', a.addr]);
  c = await cluster.start('c', ['--no-mine', '--bootstrap', b.addr]);
}, 120_000);

afterAll(() => cluster?.stop());

describe('mempool exchange across a miner restart', () => {
  test('transfers sent to B and C while A is down are mined after A restarts', async () => {
    await waitUntil(
      async () => {
        const [sa, sb, sc] = await Promise.all([status(a.url), status(b.url), status(c.url)]);
        return sa.height >= 2 && sb.tip === sa.tip && sc.tip === sa.tip;
      },
      60_000,
      'B and C to follow A’s chain',
    );
    expect(await stopProc(a)).toBe(0);
    const heightAtStop = (await status(b.url)).height;

    const to = testKey('mempool-recipient').address;
    const sentAt = Date.now();
    const t1 = await sendTransfer(b.url, params, getDevKeyPair(), to, 1_000_000n);
    // C takes the next nonce once B's transfer reached it by gossip.
    await waitUntil(async () => (await getJson(c.url, `/api/v1/tx/${t1}`)).status === 'pending', 20_000, 'C to hold B’s transfer');
    const t2 = await sendTransfer(c.url, params, getDevKeyPair(), to, 2_000_000n);
    await waitUntil(async () => (await getJson(b.url, `/api/v1/tx/${t2}`)).status === 'pending', 20_000, 'B to hold C’s transfer');
    // Past gossipsub's message cache (a few heartbeats): only the exchange can carry them now.
    await new Promise((r) => setTimeout(r, Math.max(0, sentAt + 8_000 - Date.now())));
    expect(await isMined(b.url, t1)).toBe(false);

    a = await cluster.start('a', [...mineArgs(), '--bootstrap', b.addr]);
    await waitUntil(async () => (await isMined(b.url, t1)) && (await isMined(b.url, t2)), 60_000, 'both transfers to be mined', 500);
    const tx1 = await getJson(b.url, `/api/v1/tx/${t1}`);
    // Within a few blocks of A's return.
    expect(tx1.height).toBeLessThanOrEqual(heightAtStop + 8);
    const block = await getJson(b.url, `/api/v1/block/${tx1.blockHash}`);
    expect(block.coinbase.miner).toBe(encodeAddress(minerA, params.hrp));
    expect(await balance(b.url, params, to)).toBe(3_000_000n);
    await waitUntil(async () => (await isMined(c.url, t2)), 30_000, 'C to see them mined');
    const peersA = await getJson(a.url, '/api/v1/peers');
    expect(peersA.mempoolExchange.fetched.accepted).toBeGreaterThanOrEqual(2);
    expect(peersA.banned).toEqual([]);
  }, 180_000);
});
