import { afterAll, describe, expect, test } from '@jest/globals';
import { openChain, type Chain } from '../../chain/chain.js';
import { getDevKeyPair, DEV_FUNDS } from '../../consensus/devnet.js';
import { txId } from '../../consensus/tx.js';
import { blockHash, coinbaseId, encodeBlock, encodeCoinbase, merkleRoot } from '../../consensus/block.js';
import { grindHeader } from '../../consensus/assemble.js';
import { toHex } from '../../consensus/hash.js';
import { BlockErrorCode, ValidationError } from '../../consensus/errors.js';
import { MemChain } from '../helpers/memChain.js';
import { testKey } from '../helpers/keys.js';
import { CountingVerifier } from '../helpers/verifier.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';
import { fixedNow as now, trivialParams as params, trivialTransfer as pay } from '../helpers/chainRig.js';

const dev = getDevKeyPair();
const miner = testKey('miner');
const other = testKey('other');

afterAll(cleanupTmp);

async function open(dir?: string): Promise<{ chain: Chain; dir: string; verifier: CountingVerifier }> {
  const d = dir ?? (await tmpDir());
  const verifier = new CountingVerifier();
  return { chain: await openChain({ dataDir: d, params, verifier, now }), dir: d, verifier };
}

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ValidationError) return e.code;
    throw e;
  }
  return undefined;
}

describe('chain store', () => {
  test('creates genesis, connects a block with a transfer, indexes it, reopens at the same tip', async () => {
    const { chain, dir } = await open();
    expect(chain.tip.height).toBe(0);
    const mem = new MemChain(params);
    const tx = pay(dev, 0n, other.address, 123n);
    const block = mem.build([tx], miner.address);
    mem.connect(block);
    const res = await chain.addBlock(encodeBlock(block));
    expect(res.status).toBe('connected');
    expect(chain.tip.height).toBe(1);
    expect((await chain.getAccount(other.address)).balance).toBe(123n);
    expect((await chain.getAccount(dev.address)).balance).toBe(DEV_FUNDS - 123n - tx.fee);
    const id = toHex(txId(tx));
    const stored = await chain.getTx(id);
    expect(stored).toMatchObject({ height: 1, index: 0, blockHash: chain.tip.hashHex });
    expect(stored!.tx.nonce).toBe(0n);
    expect((await chain.addBlock(block)).status).toBe('duplicate');
    const tip = chain.tip.hashHex;
    await chain.close();
    const again = await open(dir);
    expect(again.chain.tip.hashHex).toBe(tip);
    expect(await again.chain.exportState()).toEqual(mem.state);
    await again.chain.close();
  });

  test('rejects an invalid block with its code and remembers it', async () => {
    const { chain } = await open();
    const mem = new MemChain(params);
    const good = mem.build([], miner.address);
    const greedy = { ...good, coinbase: { ...good.coinbase, fees: 5n } };
    // Re-commit and re-grind so that only the coinbase rule fails.
    const header = grindHeader({ ...greedy.header, merkleRoot: merkleRoot([coinbaseId(encodeCoinbase(greedy.coinbase))]) }, params.powLimit)!;
    expect(await codeOf(chain.addBlock({ ...greedy, header }))).toBe(BlockErrorCode.BAD_COINBASE);
    expect(await codeOf(chain.addBlock({ ...greedy, header }))).toBe('block_known_invalid');
    expect(chain.tip.height).toBe(0);
    await chain.close();
  });

  test('holds orphans until their parent arrives', async () => {
    const { chain } = await open();
    const mem = new MemChain(params);
    const b1 = mem.build([], miner.address);
    mem.connect(b1);
    const b2 = mem.build([], miner.address);
    mem.connect(b2);
    expect((await chain.addBlock(b2)).status).toBe('orphan');
    expect(chain.orphanCount).toBe(1);
    expect((await chain.addBlock(b1)).status).toBe('connected');
    expect(chain.tip.height).toBe(2);
    expect(chain.orphanCount).toBe(0);
    await chain.close();
  });

  test('reorganises to the heavier branch (7 vs 5 blocks) and ends with the state of a replay', async () => {
    const { chain } = await open();
    const a = new MemChain(params);
    const b = new MemChain(params);
    for (let i = 0; i < 5; i++) {
      const blk = a.build(i === 0 ? [pay(dev, 0n, other.address, 1000n)] : [], miner.address);
      a.connect(blk);
      await chain.addBlock(blk);
    }
    expect(chain.tip.hashHex).toBe(toHex(a.tip.hash));
    const disconnected: number[] = [];
    chain.on('disconnect', (e) => disconnected.push(e.height));
    const statuses: string[] = [];
    for (let i = 0; i < 7; i++) {
      const blk = b.build(i === 2 ? [pay(dev, 0n, miner.address, 77n)] : [], other.address, b.tip.block.header.time + 2);
      b.connect(blk);
      statuses.push((await chain.addBlock(blk)).status);
    }
    expect(statuses.slice(0, 5).every((s) => s === 'side')).toBe(true);
    expect(statuses[5]).toBe('reorganized');
    expect(statuses[6]).toBe('connected');
    expect(disconnected).toEqual([5, 4, 3, 2, 1]);
    expect(chain.tip.hashHex).toBe(toHex(b.tip.hash));
    expect(await chain.exportState()).toEqual(b.state);
    // The transfer of branch A is no longer mined.
    expect(await chain.getTx(toHex(txId(a.entries[1].block.txs[0])))).toBeUndefined();
    await chain.close();
  });

  test('a heavier branch with an invalid block does not replace the valid chain', async () => {
    const { chain } = await open();
    const a = new MemChain(params);
    for (let i = 0; i < 2; i++) {
      const blk = a.build([], miner.address);
      a.connect(blk);
      await chain.addBlock(blk);
    }
    const b = new MemChain(params);
    const b1 = b.build([], other.address, b.tip.block.header.time + 1);
    b.connect(b1);
    await chain.addBlock(b1);
    // b2 spends from an empty account: it passes the header and body checks, fails on state.
    const broke = testKey('broke');
    const b2 = b.build([pay(broke, 0n, miner.address, 5n)], other.address);
    expect((await chain.addBlock(b2)).status).toBe('side'); // equal work: the first seen stays
    b.entries.push({ block: b2, hash: blockHash(b2.header), height: 2 }); // extend the invalid branch without applying it
    const b3 = b.build([], other.address);
    const tipBefore = chain.tip.hashHex;
    expect(await codeOf(chain.addBlock(b3))).toBe(BlockErrorCode.BAD_TX);
    expect(chain.tip.hashHex).toBe(tipBefore);
    expect(await chain.exportState()).toEqual(a.state);
    expect(chain.getEntryByHash(toHex(blockHash(b2.header)))).toBeUndefined();
    await chain.close();
  });
});
