import { describe, expect, test } from '@jest/globals';
import { BlockErrorCode, CodecErrorCode, isNodeError } from '../../consensus/errors.js';
import { fromHex, sha256d, toHex } from '../../consensus/hash.js';
import {
  DIFF1_TARGET,
  bitsToTarget,
  blockWork,
  checkProofOfWork,
  decodeCompact,
  difficultyOfBits,
  hashToBigInt,
  targetToBits,
} from '../../consensus/pow.js';

/** Bitcoin mainnet powLimit, 0x00000000ffff…ff (compact 0x1d00ffff admits targets up to 0xffff·2^208). */
const BTC_POW_LIMIT = (1n << 224n) - 1n;

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

/** 32 bytes, little-endian, of a 256-bit value: the in-memory order of a header hash. */
function le32(value: bigint): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = Number((value >> BigInt(8 * i)) & 0xffn);
  return out;
}

describe('compact bits: Bitcoin Core arith_uint256_tests bignum_SetCompact', () => {
  // [bits, SetCompact hex, GetCompact(negative), negative, overflow] — Bitcoin Core src/test/arith_uint256_tests.cpp.
  const cases: [number, string, number, boolean, boolean][] = [
    [0x00000000, '0', 0, false, false],
    [0x00123456, '0', 0, false, false],
    [0x01003456, '0', 0, false, false],
    [0x02000056, '0', 0, false, false],
    [0x03000000, '0', 0, false, false],
    [0x04000000, '0', 0, false, false],
    [0x00923456, '0', 0, false, false],
    [0x01803456, '0', 0, false, false],
    [0x02800056, '0', 0, false, false],
    [0x03800000, '0', 0, false, false],
    [0x04800000, '0', 0, false, false],
    [0x01123456, '12', 0x01120000, false, false],
    [0x01fedcba, '7e', 0x01fe0000, true, false],
    [0x02123456, '1234', 0x02123400, false, false],
    [0x03123456, '123456', 0x03123456, false, false],
    [0x04123456, '12345600', 0x04123456, false, false],
    [0x04923456, '12345600', 0x04923456, true, false],
    [0x05009234, '92340000', 0x05009234, false, false],
    [0x20123456, '1234560000000000000000000000000000000000000000000000000000000000', 0x20123456, false, false],
  ];

  test.each(cases.map(([bits, hex, compact, negative, overflow]) => ({ name: `0x${bits.toString(16).padStart(8, '0')}`, bits, hex, compact, negative, overflow })))(
    'SetCompact/GetCompact $name',
    ({ bits, hex, compact, negative, overflow }) => {
      const d = decodeCompact(bits);
      expect(d.target).toBe(BigInt(`0x${hex}`));
      expect(d.negative).toBe(negative);
      expect(d.overflow).toBe(overflow);
      expect(targetToBits(d.target, negative)).toBe(compact);
    },
  );

  test('0xff123456 overflows and is not negative', () => {
    const d = decodeCompact(0xff123456);
    expect(d.negative).toBe(false);
    expect(d.overflow).toBe(true);
  });

  test('GetCompact never sets the sign bit: 0x80 encodes as 0x02008000', () => {
    expect(targetToBits(0x80n)).toBe(0x02008000);
  });

  test('bitsToTarget gives 0 for negative and overflowing encodings', () => {
    expect(bitsToTarget(0x04923456)).toBe(0n);
    expect(bitsToTarget(0x01fedcba)).toBe(0n);
    expect(bitsToTarget(0xff123456)).toBe(0n);
    expect(bitsToTarget(0x04123456)).toBe(0x12345600n);
  });

  test('overflow thresholds: size 34 with 1-byte mantissa, 33 with 2 bytes, 32 with 3 bytes', () => {
    expect(decodeCompact(0x220000ff).overflow).toBe(false);
    expect(decodeCompact(0x230000ff).overflow).toBe(true);
    expect(decodeCompact(0x2100ffff).overflow).toBe(false);
    expect(decodeCompact(0x2200ffff).overflow).toBe(true);
    expect(decodeCompact(0x207fffff).overflow).toBe(false);
    expect(decodeCompact(0x21010000).overflow).toBe(true);
    expect(decodeCompact(0x220000ff).target).toBe(0xffn << 248n);
  });
});

describe('compact bits round trips', () => {
  test('canonical bits survive bits → target → bits', () => {
    for (const bits of [0x1d00ffff, 0x1802aee8, 0x207fffff, 0x1b0404cb, 0x03123456, 0x05009234, 0x20123456, 0x01010000, 0x1c7fffff, 0x17469789]) {
      expect(targetToBits(bitsToTarget(bits))).toBe(bits);
    }
  });

  test('target → bits keeps the top 3 significant bytes, truncating, and is idempotent', () => {
    const targets = [1n, 0x7fn, 0x80n, 0xffffn, 0x123456789abcdefn, DIFF1_TARGET, DIFF1_TARGET - 1n, (1n << 255n) + 12345n, (1n << 256n) - 1n];
    for (const t of targets) {
      const bits = targetToBits(t);
      const back = bitsToTarget(bits);
      expect(back <= t).toBe(true);
      expect(targetToBits(back)).toBe(bits);
      expect(decodeCompact(bits).negative).toBe(false);
    }
    expect(targetToBits(DIFF1_TARGET)).toBe(0x1d00ffff);
    expect(targetToBits((1n << 256n) - 1n)).toBe(0x2100ffff);
  });

  test('non-canonical encodings of zero map back to 0', () => {
    for (const bits of [0x01003456, 0x04000000, 0x00923456]) expect(targetToBits(bitsToTarget(bits))).toBe(0);
  });

  test('targets outside [0, 2^256) are refused with block_bad_bits', () => {
    expect(isNodeError(thrown(() => targetToBits(-1n)), BlockErrorCode.BAD_BITS)).toBe(true);
    expect(isNodeError(thrown(() => targetToBits(1n << 256n)), BlockErrorCode.BAD_BITS)).toBe(true);
  });
});

describe('hash comparison is little-endian', () => {
  test('byte 0 is least significant', () => {
    const h = new Uint8Array(32);
    h[0] = 1;
    expect(hashToBigInt(h)).toBe(1n);
    h[0] = 0;
    h[31] = 1;
    expect(hashToBigInt(h)).toBe(1n << 248n);
  });

  test('a hash whose last byte is large fails, one whose first byte is large passes', () => {
    const last = new Uint8Array(32);
    last[31] = 0xff;
    expect(checkProofOfWork(last, 0x1d00ffff, BTC_POW_LIMIT)).toBe(false);
    const first = new Uint8Array(32);
    first[0] = 0xff;
    expect(checkProofOfWork(first, 0x1d00ffff, BTC_POW_LIMIT)).toBe(true);
  });

  test('hash equal to the target passes, target + 1 fails', () => {
    const target = bitsToTarget(0x1802aee8);
    expect(checkProofOfWork(le32(target), 0x1802aee8, BTC_POW_LIMIT)).toBe(true);
    expect(checkProofOfWork(le32(target + 1n), 0x1802aee8, BTC_POW_LIMIT)).toBe(false);
  });

  test('the Bitcoin genesis header meets its own bits', () => {
    const header = fromHex(
      '01000000' +
        '00'.repeat(32) +
        '3ba3edfd7a7b12b27ac72c3e67768f617fc81bc3888a51323a9fb8aa4b1e5e4a' +
        '29ab5f49' +
        'ffff001d' +
        '1dac2b7c',
    );
    const hash = sha256d(header);
    expect(toHex(hash.slice().reverse())).toBe('000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f');
    expect(checkProofOfWork(hash, 0x1d00ffff, BTC_POW_LIMIT)).toBe(true);
    // Read big-endian by mistake, the same bytes would be far above the target.
    expect(checkProofOfWork(hash.slice().reverse(), 0x1d00ffff, BTC_POW_LIMIT)).toBe(false);
  });

  test('a hash that is not 32 bytes is refused with codec_bad_value', () => {
    expect(isNodeError(thrown(() => hashToBigInt(new Uint8Array(31))), CodecErrorCode.BAD_VALUE)).toBe(true);
  });
});

describe('checkProofOfWork rejects bad bits', () => {
  const zeroHash = new Uint8Array(32);

  test('target above powLimit fails even for the zero hash', () => {
    expect(checkProofOfWork(zeroHash, 0x1d00ffff, DIFF1_TARGET)).toBe(true);
    expect(checkProofOfWork(zeroHash, 0x1d00ffff, DIFF1_TARGET - 1n)).toBe(false);
    expect(checkProofOfWork(zeroHash, 0x207fffff, BTC_POW_LIMIT)).toBe(false);
  });

  test('zero, negative and overflowing bits fail even for the zero hash', () => {
    for (const bits of [0, 0x01003456, 0x04923456, 0x01fedcba, 0xff123456]) {
      expect(checkProofOfWork(zeroHash, bits, (1n << 256n) - 1n)).toBe(false);
    }
  });
});

describe('block work', () => {
  test('Bitcoin genesis bits 0x1d00ffff give 0x100010001', () => {
    expect(blockWork(0x1d00ffff)).toBe(0x100010001n);
  });

  test('equals 2^256 / (target + 1)', () => {
    for (const bits of [0x207fffff, 0x1802aee8, 0x01010000]) {
      expect(blockWork(bits)).toBe((1n << 256n) / (bitsToTarget(bits) + 1n));
    }
    expect(blockWork(0x01010000)).toBe(1n << 255n); // target 1
  });

  test('strictly increases with difficulty', () => {
    const easyToHard = [0x207fffff, 0x2000ffff, 0x1f00ffff, 0x1d00ffff, 0x1c7fffff, 0x1b0404cb, 0x1802aee8, 0x170e92aa, 0x03123456, 0x01010000];
    const works = easyToHard.map(blockWork);
    for (let i = 1; i < works.length; i++) expect(works[i] > works[i - 1]).toBe(true);
  });

  test('invalid bits give 0 work', () => {
    for (const bits of [0, 0x01003456, 0x04923456, 0xff123456]) expect(blockWork(bits)).toBe(0n);
  });
});

describe('difficulty for display', () => {
  test('diff1 is 1, known values match', () => {
    expect(DIFF1_TARGET).toBe(0xffffn << 208n);
    expect(difficultyOfBits(0x1d00ffff)).toBe(1);
    expect(difficultyOfBits(0x1b0404cb)).toBeCloseTo(16307.420938523983, 9);
    expect(difficultyOfBits(0x1c7fffff)).toBeCloseTo(2, 4);
    expect(difficultyOfBits(0x207fffff)).toBeCloseTo(4.6565423739069247e-10, 20);
  });

  test('invalid bits give 0', () => {
    expect(difficultyOfBits(0)).toBe(0);
    expect(difficultyOfBits(0x04923456)).toBe(0);
  });
});
