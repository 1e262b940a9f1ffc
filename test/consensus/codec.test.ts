import { describe, expect, test } from '@jest/globals';
import { Reader, Writer, decodeAll } from '../../consensus/codec.js';
import { CodecError, CodecErrorCode } from '../../consensus/errors.js';
import { decodeTx, encodeTx, signTx, TxType, TX_VERSION } from '../../consensus/tx.js';
import { decodeBlock, decodeCoinbase, decodeHeader, encodeBlock, encodeCoinbase, encodeHeader, EXTRANONCE_OFFSET, splitCoinbase } from '../../consensus/block.js';
import { decodeAccount, decodeChanges, encodeAccount, encodeChanges, decodeSupply } from '../../consensus/state.js';
import { transfer } from '../../consensus/txTypes/transfer.js';
import { createDevnetChainParams } from '../../consensus/devnet.js';
import { MemChain } from '../helpers/memChain.js';
import { testKey } from '../helpers/keys.js';
import { Rng } from '../helpers/rng.js';

const params = createDevnetChainParams({ genesisBits: 0x207fffff });
const alice = testKey('alice');
const bob = testKey('bob');

function sampleTx(withKey = true, nonce = 0n) {
  return signTx(
    {
      version: TX_VERSION,
      chainId: params.chainId,
      type: TxType.transfer,
      nonce,
      fee: 10_000n,
      payload: transfer.encodePayload({ to: bob.address, amount: 12_345n }),
      publicKey: withKey ? alice.publicKey : undefined,
    },
    alice,
  );
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof CodecError) return e.code;
    throw e;
  }
  return undefined;
}

describe('varint', () => {
  test('round-trips boundary values', () => {
    for (const v of [0n, 1n, 127n, 128n, 255n, 16383n, 16384n, 2n ** 32n, 2n ** 63n, 2n ** 64n - 1n]) {
      const bytes = new Writer().varint(v).finish();
      expect(decodeAll(bytes, (r) => r.varint())).toBe(v);
    }
  });
  test('rejects a non-canonical (padded) encoding', () => {
    expect(codeOf(() => decodeAll(Uint8Array.of(0x81, 0x00), (r) => r.varint()))).toBe(CodecErrorCode.NON_CANONICAL_INT);
    expect(codeOf(() => decodeAll(Uint8Array.of(0x80, 0x00), (r) => r.varint()))).toBe(CodecErrorCode.NON_CANONICAL_INT);
  });
  test('rejects values above 64 bits and over-long encodings', () => {
    const tooBig = Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02);
    expect(codeOf(() => decodeAll(tooBig, (r) => r.varint()))).toBe(CodecErrorCode.NON_CANONICAL_INT);
    const tooLong = new Uint8Array(11).fill(0x80);
    expect(codeOf(() => decodeAll(tooLong, (r) => r.varint()))).toBe(CodecErrorCode.NON_CANONICAL_INT);
  });
  test('writer refuses negative and oversized values', () => {
    expect(codeOf(() => new Writer().varint(-1n))).toBe(CodecErrorCode.BAD_VALUE);
    expect(codeOf(() => new Writer().varint(2n ** 64n))).toBe(CodecErrorCode.BAD_VALUE);
  });
});

describe('byte strings and framing', () => {
  test('rejects trailing bytes', () => {
    expect(codeOf(() => decodeAll(Uint8Array.of(5, 0), (r) => r.u8()))).toBe(CodecErrorCode.TRAILING_BYTES);
  });
  test('rejects truncated input', () => {
    expect(codeOf(() => decodeAll(Uint8Array.of(1, 2, 3), (r) => r.u32()))).toBe(CodecErrorCode.TRUNCATED);
  });
  test('rejects over-long lengths before reading them', () => {
    const bytes = new Writer().varint(1_000_000).finish();
    expect(codeOf(() => new Reader(bytes).bytes(1000))).toBe(CodecErrorCode.OVERSIZED);
  });
});

describe('consensus objects round-trip', () => {
  test('transaction with and without public keys', () => {
    for (const tx of [sampleTx(true), sampleTx(false, 1n)]) {
      const bytes = encodeTx(tx);
      const back = decodeTx(bytes);
      expect(encodeTx(back)).toEqual(bytes);
      expect(back.nonce).toBe(tx.nonce);
      expect(back.publicKey === undefined).toBe(tx.publicKey === undefined);
    }
  });
  test('header is 80 bytes and round-trips', () => {
    const chain = new MemChain(params);
    const h = chain.tip.block.header;
    const bytes = encodeHeader(h);
    expect(bytes.length).toBe(80);
    expect(decodeHeader(bytes)).toEqual(h);
  });
  test('coinbase round-trips and splits around the 8-byte extranonce slot', () => {
    const chain = new MemChain(params);
    const b = chain.build([], alice.address);
    const cb = { ...b.coinbase, extranonce: Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8), tag: new TextEncoder().encode('native-node') };
    const bytes = encodeCoinbase(cb);
    expect(bytes.length).toBeLessThan(100);
    expect(decodeCoinbase(bytes)).toEqual(cb);
    const { coinb1, coinb2 } = splitCoinbase(bytes);
    expect(coinb1.length).toBe(EXTRANONCE_OFFSET);
    expect(Buffer.concat([coinb1, cb.extranonce, coinb2])).toEqual(Buffer.from(bytes));
  });
  test('block round-trips with its transaction bytes', () => {
    const chain = new MemChain(params);
    const b = chain.build([sampleTx()], alice.address);
    const bytes = encodeBlock(b);
    const { block, txBytes } = decodeBlock(bytes);
    expect(encodeBlock(block)).toEqual(bytes);
    expect(txBytes[0]).toEqual(encodeTx(b.txs[0]));
  });
  test('account and change sets round-trip', () => {
    const acc = { balance: 5n, nonce: 2n, publicKey: alice.publicKey };
    expect(decodeAccount(encodeAccount(acc))).toEqual(acc);
    const changes = new Map<string, Uint8Array | null>([['a00', Uint8Array.of(1)], ['supply', null]]);
    expect(decodeChanges(encodeChanges(changes))).toEqual(changes);
  });
});

describe('fuzz: random and mutated bytes only ever raise CodecError', () => {
  const decoders: [string, (b: Uint8Array) => unknown][] = [
    ['tx', decodeTx],
    ['block', decodeBlock],
    ['header', decodeHeader],
    ['coinbase', decodeCoinbase],
    ['account', decodeAccount],
    ['supply', decodeSupply],
    ['changes', decodeChanges],
    ['transfer payload', (b) => transfer.decodePayload(b)],
  ];
  const chain = new MemChain(params);
  const block = chain.build([sampleTx(true), sampleTx(false, 1n)], alice.address);
  const seeds: Record<string, Uint8Array> = {
    tx: encodeTx(sampleTx()),
    block: encodeBlock(block),
    header: encodeHeader(block.header),
    coinbase: encodeCoinbase(block.coinbase),
    account: encodeAccount({ balance: 1000n, nonce: 3n, publicKey: alice.publicKey }),
    supply: Uint8Array.of(5, 6),
    changes: encodeChanges(new Map([['a01', Uint8Array.of(1, 2)], ['x', null]])),
    'transfer payload': transfer.encodePayload({ to: bob.address, amount: 99n }),
  };

  test.each(decoders)('%s', (name, decode) => {
    const rng = new Rng(0xc0dec + name.length);
    const seed = seeds[name];
    let rejected = 0;
    for (let i = 0; i < 400; i++) {
      let input: Uint8Array;
      const mode = i % 4;
      if (mode === 0) input = rng.bytes(rng.int(200));
      else if (mode === 1) {
        input = seed.slice();
        for (let k = 0; k < 1 + rng.int(4); k++) input[rng.int(input.length)] ^= 1 << rng.int(8);
      } else if (mode === 2) input = seed.slice(0, rng.int(seed.length));
      else input = Uint8Array.from([...seed, ...rng.bytes(1 + rng.int(8))]);
      try {
        decode(input);
      } catch (e) {
        expect(e).toBeInstanceOf(CodecError);
        rejected++;
      }
    }
    // Truncations and extensions (half the cases) must all fail.
    expect(rejected).toBeGreaterThanOrEqual(200);
  });
});
