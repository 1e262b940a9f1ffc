/**
 * The paced (interval) miner against a real chain and mempool: one block per 1 s slot with the
 * slot's time, almost no hashing, a transaction being checked at the boundary in that slot's block, a slot a peer's block already has is skipped, and its options
 * must match the chain. Wall clock (the slots are wall-clock seconds); about 5 s in all.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { createPacedMiner, type PacedMinerOptions } from '../../chain/pacedMiner.js';
import type { Miner, MinerBlockEvent } from '../../chain/minerTypes.js';
import { createDevnetChainParams, getDevKeyPair } from '../../consensus/devnet.js';
import { isNodeError } from '../../consensus/errors.js';
import { DEVNET_POW_LIMIT_BITS } from '../../consensus/params.js';
import { encodeTx } from '../../consensus/tx.js';
import { testKey } from '../helpers/keys.js';
import { cleanupTmp } from '../helpers/tmp.js';
import { cleanupsAfterEach, mineEmptyBlock, openChainAndPool, transferTx } from '../helpers/chainRig.js';

const cleanups = cleanupsAfterEach();
afterAll(cleanupTmp);
const minerKey = testKey('paced-miner');
const wall = () => Math.floor(Date.now() / 1000);

/** A paced devnet whose genesis lies `behind` seconds in the past (a chain behind its schedule). */
function pacedParams(behind: number) {
  return createDevnetChainParams({ genesisTime: wall() - behind, genesisBits: DEVNET_POW_LIMIT_BITS, targetSpacing: 1 });
}

function nextBlocks(miner: Miner, n: number, timeoutMs = 10_000): Promise<MinerBlockEvent[]> {
  return new Promise((resolve, reject) => {
    const got: MinerBlockEvent[] = [];
    const timer = setTimeout(() => reject(new Error(`only ${got.length} of ${n} blocks within ${timeoutMs} ms`)), timeoutMs);
    timer.unref();
    miner.on('block', (e) => {
      got.push(e);
      if (got.length === n) {
        clearTimeout(timer);
        resolve(got);
      }
    });
  });
}

async function setup(behind: number, opts: Partial<PacedMinerOptions> = {}) {
  const params = pacedParams(behind);
  const { chain, pool, verifier, close } = await openChainAndPool(params, { now: wall });
  cleanups.push(close);
  const miner = createPacedMiner(chain, pool, params, { blockTime: 1, address: minerKey.address, tag: 'jest', ...opts });
  cleanups.push(() => miner.stop());
  return { params, chain, pool, miner, verifier };
}

describe('the paced miner', () => {
  test('mines one block per slot with the slot time, takes the mempool of that moment, barely hashes', async () => {
    const { params, chain, pool, miner } = await setup(100);
    const blocks = nextBlocks(miner, 3);
    await miner.start();
    // Behind schedule: the current slot gets a block at once (anywhere in the slot); the second
    // comes at a slot boundary, and a transfer sent then waits for the next slot.
    for (let i = 0; i < 2; i++) await new Promise<void>((r) => chain.once('tip', () => r()));
    const tx = transferTx(params, getDevKeyPair(), 0n, testKey('to').address, 1_000n);
    await pool.add(encodeTx(tx));
    const got = await blocks;
    const entries = got.map((b) => chain.getEntryByHeight(b.height)!);
    expect(got.map((b) => b.status)).toEqual(['connected', 'connected', 'connected']);
    for (let i = 1; i < entries.length; i++) expect(entries[i].header.time - entries[i - 1].header.time).toBe(1);
    // Block 1's parent is genesis (chain/pacing.ts): from block 2 on, the easiest bits.
    for (const e of entries.slice(1)) expect(e.header.bits).toBe(DEVNET_POW_LIMIT_BITS);
    expect(got.map((b) => b.txCount)).toEqual([0, 0, 1]);
    const s = miner.stats();
    expect(s).toMatchObject({ running: true, threads: 0, blockTime: 1, blocksFound: 3 });
    // About 2 hashes a block at the easiest target; nothing between slots.
    expect(s.hashes).toBeLessThan(200);
  }, 20_000);

  test('a transaction whose signature is being checked at the boundary goes in that slot\'s block, not the next', async () => {
    const { params, chain, pool, miner, verifier } = await setup(100);
    await verifier.verifyBatch([]); // the verifier loaded: the timings below are the test's own
    await miner.start();
    for (let i = 0; i < 2; i++) await new Promise<void>((r) => chain.once('tip', () => r()));
    // 30 ms before a boundary, a transfer whose first signature check takes 60 ms: it is admitted about 35 ms into the slot.
    const toBoundary = 1000 - (Date.now() % 1000);
    await new Promise((r) => setTimeout(r, toBoundary - 30 + (toBoundary < 100 ? 1000 : 0)));
    const check = verifier.verifyBatch.bind(verifier);
    let slow = true;
    verifier.verifyBatch = async (jobs) => {
      if (slow) await new Promise((r) => setTimeout(r, 60));
      slow = false;
      return check(jobs);
    };
    const next = nextBlocks(miner, 1);
    const sent = Date.now();
    const added = pool.add(encodeTx(transferTx(params, getDevKeyPair(), 0n, testKey('to').address, 1_000n)));
    const [block] = await next;
    await added;
    const slotStart = chain.getEntryByHeight(block!.height)!.header.time * 1000;
    expect(sent).toBeLessThan(slotStart);
    expect(block!.txCount).toBe(1);
  }, 20_000);

  test('skips the slots a peer already has a block for', async () => {
    const { params, chain, miner } = await setup(100);
    // A peer's block dated 2 s ahead: the slots up to its time are taken.
    const peerTime = wall() + 2;
    await mineEmptyBlock(chain, params, testKey('peer').address, peerTime);
    const first = nextBlocks(miner, 1);
    await miner.start();
    const [b] = await first;
    expect(b.height).toBe(2);
    expect(chain.getEntryByHeight(2)!.header.time).toBe(peerTime + 1);
  }, 20_000);

  test('refuses a block time that is not the chain target spacing', async () => {
    const params = pacedParams(10);
    const { chain, pool, close } = await openChainAndPool(params, { now: wall });
    cleanups.push(close);
    let code: string | undefined;
    try {
      createPacedMiner(chain, pool, params, { blockTime: 2, address: minerKey.address });
    } catch (e) {
      code = isNodeError(e) ? e.code : undefined;
    }
    expect(code).toBe('miner_bad_options');
  });
});
