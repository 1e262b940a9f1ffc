/**
 * A partition with real node processes on 127.0.0.1. A, B and C mine one chain; C is cut off
 * (restarted without peers on a new port) and both sides keep mining and take a transaction
 * each; A and B, with twice the hash power, build the heavier branch. When C rejoins, it
 * reorganises onto that branch, the transaction only its branch held goes back to its mempool,
 * is relayed and mined on the winning chain: no transaction is lost.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { getDevKeyPair } from '../../consensus/devnet.js';
import { COIN, type ChainParams } from '../../consensus/params.js';
import { testKey } from '../helpers/keys.js';
import { balance, createP2PCluster, isMined, logLines, sendTransfer, status, stopProc, waitUntil, type P2PCluster, type P2PProc } from '../p2p/helpers/processes.js';

let cluster: P2PCluster;
let params: ChainParams;
let a: P2PProc;
let b: P2PProc;
let c: P2PProc;
const w1 = testKey('partition-w1');
const w2 = testKey('partition-w2');
const x = testKey('partition-x').address;
const y = testKey('partition-y').address;

beforeAll(async () => {
  cluster = createP2PCluster('native-p2p-partition-', ['a', 'b', 'c']);
  params = cluster.params;
  a = await cluster.start('a', ['--mine']);
  [b, c] = await Promise.all([cluster.start('b', ['--mine', '--bootstrap', a.addr]), cluster.start('c', ['--mine', '--bootstrap', a.addr])]);
}, 120_000);

afterAll(() => cluster?.stop());

describe('a partition heals to the heavier chain', () => {
  test('before: two wallets are funded on the common chain', async () => {
    const dev = getDevKeyPair();
    const t1 = await sendTransfer(a.url, params, dev, w1.address, 100n * COIN);
    const t2 = await sendTransfer(a.url, params, dev, w2.address, 100n * COIN);
    await waitUntil(async () => (await isMined(c.url, t1)) && (await isMined(c.url, t2)) && (await isMined(b.url, t2)), 60_000, 'the funding to be mined everywhere');
  }, 70_000);

  let forkHeight = 0;
  let txOnC = '';
  let txOnA = '';
  test('during: C is cut off; both sides mine and take a transaction each; A+B end up heavier', async () => {
    await stopProc(c);
    forkHeight = (await status(a.url)).height;
    c = await cluster.start('c', ['--mine']); // no bootstrap, new port: isolated
    expect((await status(c.url)).peers).toBe(0);
    txOnC = await sendTransfer(c.url, params, w1, x, 10n * COIN);
    txOnA = await sendTransfer(a.url, params, w2, y, 20n * COIN);
    await waitUntil(async () => (await isMined(c.url, txOnC)) && (await isMined(a.url, txOnA)), 60_000, 'each side to mine its transaction');
    expect(await isMined(a.url, txOnC)).toBe(false);
    expect(await isMined(c.url, txOnA)).toBe(false);
    // A and B mine with two threads against C's one: wait until their branch is clearly heavier.
    await waitUntil(
      async () => {
        const [sa, sc] = await Promise.all([status(a.url), status(c.url)]);
        return sc.height > forkHeight && sa.work > sc.work && sa.height >= sc.height + 2;
      },
      90_000,
      'the A+B branch to be heavier than C’s',
      500,
    );
  }, 170_000);

  test('after: C rejoins, reorganises onto the heavier chain, and both transactions end up mined everywhere', async () => {
    const cutTip = (await status(c.url)).tip;
    await stopProc(c);
    // C comes back connected (and no longer mining, so its branch cannot overtake in the meantime).
    c = await cluster.start('c', ['--no-mine', '--bootstrap', a.addr, '--bootstrap', b.addr]);
    await waitUntil(
      async () => {
        const [sa, sc] = await Promise.all([status(a.url), status(c.url)]);
        return sa.tip === sc.tip;
      },
      60_000,
      'C to reach A’s tip',
      200,
    );
    expect(logLines(c, 'reorganizing').length).toBeGreaterThanOrEqual(1);
    expect((await status(c.url)).tip).not.toBe(cutTip);
    // C's transaction was only on the losing branch: back in C's mempool, relayed, mined by A or B.
    await waitUntil(async () => (await isMined(a.url, txOnC)) && (await isMined(c.url, txOnC)) && (await isMined(b.url, txOnC)), 90_000, 'C’s transaction to be mined on the winning chain');
    for (const p of [a, b, c]) {
      expect(await isMined(p.url, txOnA)).toBe(true);
      expect(await balance(p.url, params, x)).toBe(10n * COIN);
      expect(await balance(p.url, params, y)).toBe(20n * COIN);
    }
  }, 170_000);
});
