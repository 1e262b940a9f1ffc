import { afterAll, describe, expect, test } from '@jest/globals';
import { type Chain } from '../../chain/chain.js';
import { type Mempool } from '../../chain/mempool.js';
import {
  buildTemplate,
  coinbaseWithExtranonce,
  createBlockTemplate,
  encodeTemplateBlock,
  merkleRootFromBranch,
  templateBlock,
  templateHeaderBytes,
  TemplateErrorCode,
  type BlockTemplate,
} from '../../chain/template.js';
import type { ChainEntry, MempoolEntry } from '../../chain/types.js';
import { assembleBlock, grindHeader } from '../../consensus/assemble.js';
import { blockHash, coinbaseId, coinbaseMerkleBranch, decodeHeader, encodeCoinbase, encodeHeader, EXTRANONCE_OFFSET, merkleRoot } from '../../consensus/block.js';
import { createDevnetChainParams, getDevKeyPair } from '../../consensus/devnet.js';
import { isNodeError } from '../../consensus/errors.js';
import { fromHex, toHex } from '../../consensus/hash.js';
import { bitsToTarget, checkProofOfWork } from '../../consensus/pow.js';
import { blockSubsidy, splitFees } from '../../consensus/reward.js';
import { accountKey, encodeAccount, encodeSupply, SUPPLY_KEY } from '../../consensus/state.js';
import { encodeTx, txId } from '../../consensus/tx.js';
import { testKey } from '../helpers/keys.js';
import { Rng } from '../helpers/rng.js';
import { cleanupTmp } from '../helpers/tmp.js';
import { fixedNow as now, openChainAndPool, trivialParams as params, trivialTransfer as pay } from '../helpers/chainRig.js';

const dev = getDevKeyPair();
const miner = testKey('miner');
const other = testKey('other');

afterAll(cleanupTmp);

async function setup(): Promise<{ chain: Chain; pool: Mempool }> {
  const { chain, pool } = await openChainAndPool(params, { now });
  return { chain, pool };
}

async function teardown(chain: Chain, pool: Mempool): Promise<void> {
  pool.stop();
  await chain.close();
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    if (isNodeError(e)) return e.code;
    throw e;
  }
  return undefined;
}

/** Grinds the template at an extranonce (trivial difficulty) and returns the encoded block. */
function solve(tpl: BlockTemplate, extranonce: Uint8Array): Uint8Array {
  const header = grindHeader(decodeHeader(templateHeaderBytes(tpl, { extranonce })), params.powLimit, 100_000);
  if (!header) throw new Error('could not grind');
  return encodeTemplateBlock(tpl, { extranonce, nonce: header.nonce });
}

describe('createBlockTemplate', () => {
  test('builds the next block from the tip and the mempool; a solved template is accepted', async () => {
    const { chain, pool } = await setup();
    const tx = pay(dev, 0n, other.address, 5_000n);
    const id = toHex(txId(tx));
    await pool.add(encodeTx(tx));
    const tpl = await createBlockTemplate(chain, pool, params, { miner: miner.address, tag: 'test miner', now });

    expect(tpl.parentHash).toBe(chain.tip.hashHex);
    expect(tpl.height).toBe(1);
    expect(tpl.bits).toBe(tpl.block.header.bits);
    expect(tpl.target).toBe(bitsToTarget(tpl.bits));
    expect(tpl.header).toEqual(encodeHeader(tpl.block.header));
    expect(tpl.block.header.nonce).toBe(0);
    expect(tpl.block.header.time).toBe(now());
    expect(tpl.minTime).toBe(chain.medianTimePast(chain.tip) + 1);
    expect(tpl.txIds.map(toHex)).toEqual([id]);
    expect(tpl.totalFees).toBe(tx.fee);
    // The coinbase pays the miner the subsidy and its share of the fees.
    const cb = tpl.block.coinbase;
    expect(cb.miner).toEqual(miner.address);
    expect(cb.height).toBe(1);
    expect(cb.reward).toBe(blockSubsidy(1, params.allocations.reduce((s, a) => s + a.amount, 0n), params));
    expect(cb.fees).toBe(splitFees(tx.fee, params).miner);
    expect(new TextDecoder().decode(cb.tag)).toBe('test miner');
    // Stratum pieces: coinb1/coinb2 are exactly the bytes around the extranonce slot.
    expect(tpl.coinbase).toEqual(encodeCoinbase(cb));
    expect(tpl.coinb1).toEqual(tpl.coinbase.slice(0, EXTRANONCE_OFFSET));
    expect(tpl.coinb2).toEqual(tpl.coinbase.slice(EXTRANONCE_OFFSET + 8));
    expect(tpl.merkleBranch).toEqual(coinbaseMerkleBranch(tpl.txIds));
    expect(tpl.size).toBe(80 + tpl.coinbase.length + 1 + encodeTx(tx).length + 3);

    const res = await chain.addBlock(solve(tpl, Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8)));
    expect(res.status).toBe('connected');
    expect((await chain.getTx(id))?.height).toBe(1);
    expect((await chain.getAccount(miner.address)).balance).toBe(cb.reward + cb.fees);
    await teardown(chain, pool);
  });

  test('the header rebuilt from an extranonce matches a full re-assembly', async () => {
    const { chain, pool } = await setup();
    for (let n = 0; n < 3; n++) await pool.add(encodeTx(pay(dev, BigInt(n), other.address, 1_000n + BigInt(n))));
    const tpl = await createBlockTemplate(chain, pool, params, { miner: miner.address, now });
    expect(tpl.txIds).toHaveLength(3);
    const state = await chain.getStateView([SUPPLY_KEY]);
    const rng = new Rng(7);
    for (let i = 0; i < 5; i++) {
      const extranonce = rng.bytes(8);
      const time = tpl.minTime + rng.int(1000);
      const nonce = rng.int(2 ** 32);
      const full = assembleBlock(
        {
          parent: { hash: chain.tip.hash, height: chain.tip.height, time: chain.tip.header.time },
          medianTimePast: chain.medianTimePast(chain.tip),
          now: time,
          txs: tpl.block.txs,
          miner: miner.address,
          state,
          extranonce,
        },
        params,
      );
      const expected = encodeHeader({ ...full.header, nonce });
      expect(templateHeaderBytes(tpl, { extranonce, time, nonce })).toEqual(expected);
      expect(coinbaseWithExtranonce(tpl, extranonce)).toEqual(encodeCoinbase(full.coinbase));
      expect(templateBlock(tpl, { extranonce, time, nonce })).toEqual({ ...full, header: { ...full.header, nonce } });
    }
    await teardown(chain, pool);
  });

  test('time is max(now, MTP + 1); includeTxs: false gives a coinbase-only block', async () => {
    const { chain, pool } = await setup();
    await pool.add(encodeTx(pay(dev, 0n, other.address, 1_000n)));
    const early = () => params.genesis.time - 500;
    const tpl = await createBlockTemplate(chain, pool, params, { miner: miner.address, now: early, includeTxs: false });
    expect(tpl.block.header.time).toBe(chain.medianTimePast(chain.tip) + 1);
    expect(tpl.block.txs).toHaveLength(0);
    expect(tpl.merkleBranch).toHaveLength(0);
    expect(tpl.block.header.merkleRoot).toEqual(coinbaseId(tpl.coinbase));
    await teardown(chain, pool);
  });

  test('a tag over 40 bytes is refused with template_bad_tag', async () => {
    const { chain, pool } = await setup();
    await expect(createBlockTemplate(chain, pool, params, { miner: miner.address, tag: 'x'.repeat(41), now })).rejects.toMatchObject({ code: TemplateErrorCode.BAD_TAG });
    await expect(createBlockTemplate(chain, pool, params, { miner: new Uint8Array(19), now })).rejects.toMatchObject({ code: TemplateErrorCode.BAD_MINER });
    const tpl = await createBlockTemplate(chain, pool, params, { miner: miner.address, now });
    expect(codeOf(() => templateHeaderBytes(tpl, { extranonce: new Uint8Array(4) }))).toBe(TemplateErrorCode.BAD_EXTRANONCE);
    await teardown(chain, pool);
  });

  test('retries when the tip moves while the state is read', async () => {
    const { chain, pool } = await setup();
    const g = chain.tip;
    const block = solve(await createBlockTemplate(chain, pool, params, { miner: miner.address, now }), new Uint8Array(8));
    let reads = 0;
    const racing = {
      get tip() {
        return chain.tip;
      },
      medianTimePast: (e: ChainEntry) => chain.medianTimePast(e),
      getStateView: async (keys: string[]) => {
        // The first read races with a block being connected.
        if (reads++ === 0) await chain.addBlock(block);
        return chain.getStateView(keys);
      },
    };
    const tpl = await createBlockTemplate(racing, pool, params, { miner: miner.address, now });
    expect(reads).toBe(2);
    expect(tpl.parentHash).not.toBe(g.hashHex);
    expect(tpl.parentHash).toBe(chain.tip.hashHex);
    expect(tpl.height).toBe(2);
    await teardown(chain, pool);
  });
});

describe('template helpers', () => {
  test('merkleRootFromBranch equals the full merkle root for 0..9 transactions', () => {
    const rng = new Rng(1);
    for (let n = 0; n < 10; n++) {
      const cb = rng.bytes(60);
      const ids = Array.from({ length: n }, () => rng.bytes(32));
      expect(merkleRootFromBranch(cb, coinbaseMerkleBranch(ids))).toEqual(merkleRoot([coinbaseId(cb), ...ids]));
    }
  });

  test('candidates are trimmed to the consensus block size and count', () => {
    const small = createDevnetChainParams({ genesisBits: 0x207fffff, limits: { maxBlockBytes: 1_000, maxBlockTxs: 3, maxTxBytes: 500 } });
    const entries: MempoolEntry[] = Array.from({ length: 5 }, (_, i) => {
      const tx = pay(dev, BigInt(i), other.address, 1n);
      const bytes = new Uint8Array(300);
      return { tx, id: toHex(txId(tx)), bytes, size: 300, feeRate: 1, addedAt: 0 };
    });
    let asked: [number, number] | undefined;
    // A mempool that ignores the byte limit it is given.
    const greedy = {
      blockCandidates(maxBytes: number, maxCount: number) {
        asked = [maxBytes, maxCount];
        return entries;
      },
    };
    const tip = { hash: new Uint8Array(32), hashHex: '00'.repeat(32), height: 0, header: { version: 1, prevHash: new Uint8Array(32), merkleRoot: new Uint8Array(32), time: small.genesis.time, bits: small.genesis.bits, nonce: 0 }, chainWork: 1n, txCount: 0, size: 0 } satisfies ChainEntry;
    // The state the template checks the candidates against: the dev account funded.
    const devAccount = encodeAccount({ balance: 1_000_000n * 100_000_000n, nonce: 0n });
    const stateOf = (k: string) => (k === SUPPLY_KEY ? encodeSupply({ minted: 0n, burned: 0n }) : k === accountKey(dev.address) ? devAccount : undefined);
    const chain = { tip, medianTimePast: () => small.genesis.time, getStateView: async () => ({ get: stateOf }) };
    return createBlockTemplate(chain, greedy, small, { miner: miner.address, now }).then((tpl) => {
      expect(asked![1]).toBe(3);
      expect(asked![0]).toBeLessThan(1_000 - 80 - 54);
      // 80 + 54 + 1 + 3 × 303 = 1,044 > 1,000: only two fit.
      expect(tpl.txIds).toHaveLength(2);
      expect(tpl.size).toBeLessThanOrEqual(1_000);
      const again = buildTemplate(tip, small.genesis.time, { get: () => undefined }, entries.slice(0, 2), small, { miner: miner.address, tag: new Uint8Array(0), now: now() });
      expect(again.header).toEqual(tpl.header);
    });
  });

  test('a solved template header meets its target', async () => {
    const { chain, pool } = await setup();
    const tpl = await createBlockTemplate(chain, pool, params, { miner: miner.address, now });
    const extranonce = fromHex('0102030405060708');
    const bytes = solve(tpl, extranonce);
    const header = decodeHeader(bytes.subarray(0, 80));
    expect(checkProofOfWork(blockHash(header), header.bits, params.powLimit)).toBe(true);
    expect(toHex(bytes.subarray(80 + 1 + EXTRANONCE_OFFSET, 80 + 1 + EXTRANONCE_OFFSET + 8))).toBe('0102030405060708');
    await teardown(chain, pool);
  });
});
