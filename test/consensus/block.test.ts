import { describe, expect, test } from '@jest/globals';
import { BlockErrorCode, TxErrorCode } from '../../consensus/errors.js';
import { blockHash, coinbaseId, coinbaseMerkleBranch, encodeBlock, decodeBlock, encodeCoinbase, merkleRoot, type Block } from '../../consensus/block.js';
import { grindHeader } from '../../consensus/assemble.js';
import { signTx, TxType, TX_VERSION, encodeTx, txId } from '../../consensus/tx.js';
import { transfer } from '../../consensus/txTypes/transfer.js';
import { createDevnetChainParams, getDevKeyPair } from '../../consensus/devnet.js';
import { sha256d, concatBytes } from '../../consensus/hash.js';
import { medianTime } from '../../consensus/validate.js';
import { MemChain } from '../helpers/memChain.js';
import { testKey } from '../helpers/keys.js';
import { codeOf } from '../helpers/codes.js';

// About 4,096 hashes per block: a one-bit header change then fails proof of work (deterministic for these fixed inputs).
const params = createDevnetChainParams({ genesisBits: 0x1f0fffff });
const dev = getDevKeyPair();
const miner = testKey('miner');

function tx(nonce: bigint, withKey: boolean) {
  return signTx({ version: TX_VERSION, chainId: params.chainId, type: TxType.transfer, nonce, fee: 20_000n, payload: transfer.encodePayload({ to: miner.address, amount: 1000n }), publicKey: withKey ? dev.publicKey : undefined }, dev);
}

function regrind(b: Block): Block {
  const ids = b.txs.map((t) => txId(t));
  const header = { ...b.header, merkleRoot: merkleRoot([coinbaseId(encodeCoinbase(b.coinbase)), ...ids]) };
  return { ...b, header: grindHeader(header, params.powLimit, 10_000_000)! };
}

describe('block validation', () => {
  const chain = new MemChain(params);
  const good = chain.build([tx(0n, true), tx(1n, false)], miner.address);

  test('a block mined at trivial difficulty passes full validation', () => {
    const copy = new MemChain(params);
    expect(() => copy.connect(good)).not.toThrow();
    expect(copy.tip.height).toBe(1);
  });

  test.each([
    ['version', 0, 0, BlockErrorCode.BAD_VERSION],
    ['prevHash', 4, 3, BlockErrorCode.BAD_PREV],
    ['merkleRoot', 40, 5, BlockErrorCode.HIGH_HASH],
    ['merkleRoot', 67, 7, BlockErrorCode.HIGH_HASH],
    ['time', 68, 1, BlockErrorCode.HIGH_HASH],
    ['bits', 72, 0, BlockErrorCode.BAD_BITS],
    ['nonce', 76, 2, BlockErrorCode.HIGH_HASH],
    ['nonce', 79, 6, BlockErrorCode.HIGH_HASH],
  ])('one flipped bit in the header (%s, byte %i bit %i) fails with %s', (_field, byte, bit, code) => {
    const bytes = encodeBlock(good);
    bytes[byte] ^= 1 << bit;
    const mutated = decodeBlock(bytes).block;
    expect(codeOf(() => new MemChain(params).connect(mutated))).toBe(code);
  });

  test('one flipped bit in a transaction fails the merkle root', () => {
    const bytes = encodeBlock(good);
    bytes[bytes.length - 10] ^= 0x01;
    const copy = new MemChain(params);
    expect(codeOf(() => copy.connect(decodeBlock(bytes).block))).toBe(BlockErrorCode.BAD_MERKLE_ROOT);
  });

  test('a flipped signature bit, re-committed and re-mined, fails the signature check', () => {
    const t = good.txs[0];
    const sig = { ...t.signature, mldsa: t.signature.mldsa.slice() };
    sig.mldsa[100] ^= 0x04;
    const bad = regrind({ ...good, txs: [{ ...t, signature: sig }, good.txs[1]] });
    const copy = new MemChain(params);
    expect(codeOf(() => copy.connect(bad))).toBe(TxErrorCode.BAD_SIGNATURE);
  });

  test('a coinbase for the wrong height is rejected', () => {
    const bad = regrind({ ...good, coinbase: { ...good.coinbase, height: 5 } });
    expect(codeOf(() => new MemChain(params).connect(bad))).toBe(BlockErrorCode.BAD_COINBASE);
  });

  test('duplicate transactions are rejected', () => {
    const bad = regrind({ ...good, txs: [good.txs[0], good.txs[0]] });
    expect(codeOf(() => new MemChain(params).connect(bad))).toBe(BlockErrorCode.DUPLICATE_TX);
  });

  test('wrong bits are rejected', () => {
    const b = chain.build([], miner.address);
    const bad = { ...b, header: grindHeader({ ...b.header, bits: 0x207fffff }, params.powLimit)! };
    expect(codeOf(() => new MemChain(params).connect(bad))).toBe(BlockErrorCode.BAD_BITS);
  });

  test('timestamps: must exceed the median of the last 11, at most 30 s ahead of the clock', () => {
    const c = new MemChain(params);
    for (let i = 0; i < 12; i++) c.connect(c.build([], miner.address));
    const mtp = c.mtp();
    const old = c.build([], miner.address);
    const tooOld = { ...old, header: grindHeader({ ...old.header, time: mtp }, params.powLimit, 10_000_000)! };
    expect(codeOf(() => c.connect(tooOld, mtp + 100))).toBe(BlockErrorCode.TIME_TOO_OLD);
    const ahead = c.build([], miner.address, mtp + 1000);
    expect(codeOf(() => c.connect(ahead, mtp + 1000 - 31))).toBe(BlockErrorCode.TIME_TOO_NEW);
    expect(() => c.connect(ahead, mtp + 1000 - 30)).not.toThrow();
  });

  test('block size and count limits', () => {
    const small = createDevnetChainParams({ genesisBits: 0x207fffff, limits: { maxBlockTxs: 1, maxBlockBytes: 20_000, maxTxBytes: 20_000 } });
    const c = new MemChain(small);
    const twoTx = c.build([tx(0n, true), tx(1n, false)], miner.address);
    expect(codeOf(() => c.connect(twoTx))).toBe(BlockErrorCode.TOO_MANY_TXS);
  });
});

describe('merkle', () => {
  test("Bitcoin's rule: the last node is duplicated on odd levels", () => {
    const leaves = [1, 2, 3].map((i) => sha256d(Uint8Array.of(i)));
    const l01 = sha256d(concatBytes(leaves[0], leaves[1]));
    const l22 = sha256d(concatBytes(leaves[2], leaves[2]));
    expect(merkleRoot(leaves)).toEqual(sha256d(concatBytes(l01, l22)));
    expect(merkleRoot([leaves[0]])).toEqual(leaves[0]);
  });
  test('the coinbase branch rebuilds the root the way a Stratum miner does', () => {
    for (const n of [0, 1, 2, 3, 4, 5, 8, 13]) {
      const cb = sha256d(Uint8Array.of(0xcb, n));
      const ids = Array.from({ length: n }, (_, i) => sha256d(Uint8Array.of(i, n)));
      let root = cb;
      for (const b of coinbaseMerkleBranch(ids)) root = sha256d(concatBytes(root, b));
      expect(root).toEqual(merkleRoot([cb, ...ids]));
    }
  });
});

describe('median time', () => {
  test('middle of the sorted times', () => {
    expect(medianTime([5, 1, 3])).toBe(3);
    expect(medianTime([1, 2, 3, 4])).toBe(3);
  });
});

describe('block hash', () => {
  test('is SHA-256d of the 80-byte header', () => {
    const c = new MemChain(params);
    const b = c.build([], miner.address);
    expect(blockHash(b.header)).toEqual(sha256d(encodeBlock(b).slice(0, 80)));
    expect(encodeTx(tx(0n, true)).length).toBeGreaterThan(7000);
  });
});
