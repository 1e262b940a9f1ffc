import { describe, expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import {
  AsertErrorCode,
  calculateAsert,
  createAsertAnchorFromGenesis,
  getNextAsertBits,
  getNextAsertTarget,
  type AsertAnchor,
  type AsertParams,
} from '../../consensus/asert.js';
import { BlockErrorCode, isNodeError, ValidationError } from '../../consensus/errors.js';
import { bitsToTarget, targetToBits } from '../../consensus/pow.js';

/** Bitcoin Cash mainnet, the parameters the published vectors assume (spec 2020-11-15-asert.md). */
const BCH_POW_LIMIT = (1n << 224n) - 1n; // 0x00000000ffff…ff, compact 0x1d00ffff
const BCH: AsertParams = { targetSpacing: 600, halfLife: 2 * 24 * 3600, powLimit: BCH_POW_LIMIT };

/** Our chain: 3 s blocks, 600 s half-life; an easy powLimit for the tests. */
const OUR_POW_LIMIT = (1n << 240n) - 1n;
const OURS: AsertParams = { targetSpacing: 3, halfLife: 600, powLimit: OUR_POW_LIMIT };

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

// ---------------------------------------------------------------------------------------------
// Published aserti3-2d vectors: bitcoin-cash-node qa-assets test_vectors/aserti3-2d run01..run10,
// as linked from bitcoincashorg/bitcoincash.org spec/2020-11-15-asert.md (see test/fixtures/asert/README.md).
// ---------------------------------------------------------------------------------------------

interface VectorFile {
  readonly description: string;
  readonly anchorHeight: bigint;
  readonly anchorParentTime: bigint;
  readonly anchorBits: number;
  readonly iterations: number;
  readonly lines: readonly { iteration: number; height: bigint; time: bigint; bits: number }[];
}

const FIXTURES = new URL('../fixtures/asert/', import.meta.url);

function header(text: string, key: string): string {
  const m = new RegExp(`^##\\s+${key}:\\s*(.*)$`, 'm').exec(text);
  if (!m) throw new Error(`missing header ${key}`);
  return m[1].trim();
}

function loadVectors(name: string): VectorFile {
  const text = readFileSync(new URL(name, FIXTURES), 'utf8');
  const lines = text
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('#'))
    .map((l) => {
      const [iteration, height, time, bits] = l.trim().split(/\s+/);
      return { iteration: Number(iteration), height: BigInt(height), time: BigInt(time), bits: Number(bits) };
    });
  return {
    description: header(text, 'description'),
    anchorHeight: BigInt(header(text, 'anchor height')),
    anchorParentTime: BigInt(header(text, 'anchor ancestor time')),
    anchorBits: Number(header(text, 'anchor nBits')),
    iterations: Number(header(text, 'iterations')),
    lines,
  };
}

const vectorFiles = readdirSync(FIXTURES)
  .filter((f) => /^run\d+$/.test(f))
  .sort();

describe('published aserti3-2d vectors (BCHN qa-assets test_vectors/aserti3-2d)', () => {
  test('the ten stored run files are present', () => {
    expect(vectorFiles).toEqual(['run01', 'run02', 'run03', 'run04', 'run05', 'run06', 'run07', 'run08', 'run09', 'run10']);
  });

  test.each(vectorFiles)('%s: every line gives the published next bits', (name) => {
    const v = loadVectors(name);
    expect(v.lines).toHaveLength(v.iterations);
    const anchorTarget = bitsToTarget(v.anchorBits);
    const mismatches: string[] = [];
    for (const line of v.lines) {
      // Heights reach 2^63 in run10, so go through the bigint core (aserti32d.cpp's CalculateASERT).
      const target = calculateAsert(anchorTarget, line.time - v.anchorParentTime, line.height - v.anchorHeight, BCH);
      const bits = targetToBits(target);
      if (bits !== line.bits) mismatches.push(`#${line.iteration}: got 0x${bits.toString(16)}, want 0x${line.bits.toString(16)}`);
      // Where heights are safe integers, the number-based API must agree.
      if (line.height <= BigInt(Number.MAX_SAFE_INTEGER)) {
        const anchor: AsertAnchor = { height: Number(v.anchorHeight), bits: v.anchorBits, parentTime: Number(v.anchorParentTime) };
        const viaApi = getNextAsertBits(anchor, Number(line.height), Number(line.time), BCH);
        if (viaApi !== line.bits) mismatches.push(`#${line.iteration} (api): got 0x${viaApi.toString(16)}`);
      }
    }
    expect(mismatches).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// Bitcoin ABC src/pow/test/aserti32d_tests.cpp: calculate_asert_test and asert_activation_anchor_test.
// ---------------------------------------------------------------------------------------------

describe('Bitcoin ABC aserti32d_tests.cpp', () => {
  const powLimit = BCH_POW_LIMIT;
  const powLimitBits = targetToBits(powLimit);
  // CalculateASERT gets the time difference to the anchor's *parent*, assumed ideally spaced.
  const parentTimeDiff = 600n;
  const calc = (ref: bigint, timeDiff: bigint, heightDiff: bigint): bigint =>
    calculateAsert(ref, parentTimeDiff + timeDiff, heightDiff, BCH);

  test('powLimit compact is 0x1d00ffff', () => {
    expect(powLimitBits).toBe(0x1d00ffff);
  });

  test('calculate_asert_test: steady, fast, recovery, doubling, halving, ramp to powLimit', () => {
    const initialTarget = powLimit >> 4n;
    let height = 0n;
    let next = calc(initialTarget, 600n, ++height);
    expect(next).toBe(initialTarget);
    next = calc(initialTarget, 600n + 300n, ++height);
    expect(next < initialTarget).toBe(true);
    let prev = next;
    next = calc(initialTarget, 600n + 300n + 900n, ++height);
    expect(next > prev).toBe(true);
    expect(next).toBe(initialTarget);

    prev = next;
    next = calc(prev, 288n * 1200n, 288n);
    expect(next).toBe(prev * 2n);
    prev = next;
    next = calc(prev, 0n, 288n);
    expect(next).toBe(prev / 2n);
    expect(next).toBe(initialTarget);

    for (let k = 0; k < 3; k++) {
      prev = next;
      next = calc(prev, 288n * 1200n, 288n);
      expect(next).toBe(prev * 2n);
      expect(next < powLimit).toBe(true);
      expect(targetToBits(next)).not.toBe(powLimitBits);
    }
    prev = next;
    next = calc(prev, 288n * 1200n, 288n);
    expect(next).toBe(prev * 2n);
    expect(targetToBits(next)).toBe(powLimitBits);

    // 512 days fast cannot push past powLimit (would overflow 256 bits in C++).
    expect(targetToBits(calc(prev, 512n * 144n * 600n, 0n))).toBe(powLimitBits);
    // ~446 days slow brings powLimit down to the minimum target 1.
    expect(targetToBits(calculateAsert(powLimit, 0n, 2n * (256n - 33n) * 144n, BCH))).toBe(targetToBits(1n));
  });

  const SINGLE_300_TARGET = BigInt('0x00000000ffb1ffffffffffffffffffffffffffffffffffffffffffffffffffff');
  const FUNNY_REF_TARGET = BigInt('0x000000008000000000000000000fffffffffffffffffffffffffffffffffffff');
  // { refTarget, timeDiff (without parentTimeDiff), heightDiff, expectedTarget, expectedBits } — spacing 600 in all.
  const calculateArgs: [bigint, bigint, bigint, bigint, number][] = [
    [powLimit, 0n, 2n * 144n, powLimit >> 1n, 0x1c7fffff],
    [powLimit, 0n, 4n * 144n, powLimit >> 2n, 0x1c3fffff],
    [powLimit >> 1n, 0n, 2n * 144n, powLimit >> 2n, 0x1c3fffff],
    [powLimit >> 2n, 0n, 2n * 144n, powLimit >> 3n, 0x1c1fffff],
    [powLimit >> 3n, 0n, 2n * 144n, powLimit >> 4n, 0x1c0fffff],
    [powLimit, 0n, 2n * (256n - 34n) * 144n, 3n, 0x01030000],
    [powLimit, 0n, 2n * (256n - 34n) * 144n + 119n, 3n, 0x01030000],
    [powLimit, 0n, 2n * (256n - 34n) * 144n + 120n, 2n, 0x01020000],
    [powLimit, 0n, 2n * (256n - 33n) * 144n - 1n, 2n, 0x01020000],
    [powLimit, 0n, 2n * (256n - 33n) * 144n, 1n, 0x01010000],
    [powLimit, 0n, 2n * (256n - 32n) * 144n, 1n, 0x01010000],
    [1n, 0n, 2n * (256n - 32n) * 144n, 1n, 0x01010000],
    [powLimit, 2n * (512n - 32n) * 144n, 0n, powLimit, 0x1d00ffff],
    [1n, (512n - 64n) * 144n * 600n, 0n, powLimit, 0x1d00ffff],
    [powLimit, 300n, 1n, SINGLE_300_TARGET, 0x1d00ffb1],
    [FUNNY_REF_TARGET, 600n * 2n * 33n * 144n, 0n, powLimit, 0x1d00ffff],
    [1n, 600n * 2n * 256n * 144n, 0n, powLimit, 0x1d00ffff],
    [1n, 600n * 2n * 224n * 144n - 1n, 0n, 0xffff8n << 204n, 0x1d00ffff],
  ];

  test.each(calculateArgs)('calculate_args row %#', (ref, timeDiff, heightDiff, expectedTarget, expectedBits) => {
    const next = calc(ref, timeDiff, heightDiff);
    expect(next).toBe(expectedTarget);
    expect(targetToBits(next)).toBe(expectedBits);
  });

  // asert_activation_anchor_test: the anchor is the block itself, its parent the pre-activation block.
  test.each([
    { name: '0x180236e1, 600 s', anchorBits: 0x180236e1, solveTime: 600n, expectedBits: 0x180236e1 },
    { name: '0x18023456, 0 s', anchorBits: 0x18023456, solveTime: 0n, expectedBits: 0x180232fd },
    { name: '0x180210fe, 600 s', anchorBits: 0x180210fe, solveTime: 600n, expectedBits: 0x180210fe },
    { name: '0x18034567, 90 days', anchorBits: 0x18034567, solveTime: 86400n * 90n, expectedBits: 0x1d00ffff },
    { name: '0x18011111, -2499 s', anchorBits: 0x18011111, solveTime: -(5n * 500n - 1n), expectedBits: 0x18010db3 },
  ])('activation anchor $name', ({ anchorBits, solveTime, expectedBits }) => {
    expect(targetToBits(calculateAsert(bitsToTarget(anchorBits), solveTime, 0n, BCH))).toBe(expectedBits);
  });

  test('activation anchor: returning to schedule after a 90-day block restores the anchor bits', () => {
    // Parent of the anchor at t0, anchor at t0 + 90 days, next block at t0 + 1200: exactly on schedule.
    expect(targetToBits(calculateAsert(bitsToTarget(0x18034567), 1200n, 1n, BCH))).toBe(0x18034567);
  });
});

// ---------------------------------------------------------------------------------------------
// Our parameters: 3 s spacing, 600 s half-life.
// ---------------------------------------------------------------------------------------------

describe('ASERT with our parameters (T = 3 s, half-life 600 s)', () => {
  const anchorBits = 0x1e0fffff;
  const anchor: AsertAnchor = { height: 0, bits: anchorBits, parentTime: 1_700_000_000 };
  const anchorTarget = bitsToTarget(anchorBits);
  const onSchedule = (prevHeight: number): number => anchor.parentTime + 3 * (prevHeight - anchor.height + 1);

  test('on schedule the target stays exactly at the anchor target', () => {
    for (const h of [0, 1, 2, 10, 1000, 123_456, 10_000_000]) {
      expect(getNextAsertTarget(anchor, h, onSchedule(h), OURS)).toBe(anchorTarget);
      expect(getNextAsertBits(anchor, h, onSchedule(h), OURS)).toBe(anchorBits);
    }
  });

  test('600 s ahead of schedule halves the target (twice as hard)', () => {
    for (const h of [0, 200, 50_000]) {
      expect(getNextAsertTarget(anchor, h, onSchedule(h) - 600, OURS)).toBe(anchorTarget >> 1n);
    }
    // 200 blocks in no time at all is 600 s ahead as well.
    expect(getNextAsertTarget(anchor, 199, anchor.parentTime, OURS)).toBe(anchorTarget >> 1n);
  });

  test('600 s behind schedule doubles the target, 1200 s quadruples it', () => {
    expect(getNextAsertTarget(anchor, 77, onSchedule(77) + 600, OURS)).toBe(anchorTarget * 2n);
    expect(getNextAsertTarget(anchor, 77, onSchedule(77) + 1200, OURS)).toBe(anchorTarget * 4n);
  });

  test('the target is monotonic in the previous block time', () => {
    let last = 0n;
    for (let dt = -1800; dt <= 1800; dt++) {
      const t = getNextAsertTarget(anchor, 500, onSchedule(500) + dt, OURS);
      expect(t >= last).toBe(true);
      last = t;
    }
  });

  test('clamped at powLimit, however far behind schedule', () => {
    const limitAnchor: AsertAnchor = { ...anchor, bits: targetToBits(OUR_POW_LIMIT) };
    const limitTarget = bitsToTarget(limitAnchor.bits);
    expect(limitTarget <= OUR_POW_LIMIT).toBe(true);
    expect(getNextAsertTarget(limitAnchor, 10, onSchedule(10) + 600, OURS)).toBe(OUR_POW_LIMIT);
    expect(getNextAsertTarget(anchor, 10, onSchedule(10) + 600 * 40, OURS)).toBe(OUR_POW_LIMIT);
    // Absurd timestamps stay cheap (no 2^billions shift) and still clamp.
    expect(getNextAsertTarget(anchor, 10, onSchedule(10) + 1e12, OURS)).toBe(OUR_POW_LIMIT);
    expect(getNextAsertBits(anchor, 10, onSchedule(10) + 1e12, OURS)).toBe(targetToBits(OUR_POW_LIMIT));
  });

  test('never 0: far ahead of schedule bottoms out at target 1', () => {
    expect(getNextAsertTarget(anchor, 1_000_000, anchor.parentTime, OURS)).toBe(1n);
    expect(getNextAsertTarget(anchor, 9_000_000_000_000, anchor.parentTime - 1e12, OURS)).toBe(1n);
    const tiny: AsertAnchor = { ...anchor, bits: 0x01010000 }; // target 1
    expect(getNextAsertTarget(tiny, 5, onSchedule(5) - 600, OURS)).toBe(1n);
    expect(getNextAsertBits(tiny, 5, onSchedule(5) - 600, OURS)).toBe(0x01010000);
  });

  test('genesis anchor uses genesis time as the parent time: block 1 is one spacing "late" by construction', () => {
    const genesis = { bits: anchorBits, time: 1_700_000_000 };
    const g = createAsertAnchorFromGenesis(genesis);
    expect(g).toEqual({ height: 0, bits: anchorBits, parentTime: genesis.time });
    // Next after genesis at genesis time: 3 s ahead of schedule, slightly harder than the anchor.
    const next = getNextAsertTarget(g, 0, genesis.time, OURS);
    expect(next < anchorTarget).toBe(true);
    expect(next > (anchorTarget * 996n) / 1000n).toBe(true);
    // Block 1 arriving 3 s after genesis keeps the anchor target for block 2.
    expect(getNextAsertTarget(g, 1, genesis.time + 6, OURS)).toBe(anchorTarget);
  });

  test('a previous block below the anchor is rejected with block_bad_prev', () => {
    const e = thrown(() => getNextAsertTarget({ ...anchor, height: 10 }, 9, onSchedule(9), OURS));
    expect(e).toBeInstanceOf(ValidationError);
    expect(isNodeError(e, BlockErrorCode.BAD_PREV)).toBe(true);
    expect(isNodeError(thrown(() => getNextAsertTarget(anchor, 1.5, 0, OURS)), BlockErrorCode.BAD_PREV)).toBe(true);
  });

  test('anchor bits that are zero, negative, overflowing or above powLimit are rejected with block_bad_bits', () => {
    for (const bits of [0, 0x01003456, 0x04923456, 0xff123456, 0x1f7fffff]) {
      expect(isNodeError(thrown(() => getNextAsertTarget({ ...anchor, bits }, 5, onSchedule(5), OURS)), BlockErrorCode.BAD_BITS)).toBe(true);
    }
    expect(isNodeError(thrown(() => calculateAsert(0n, 0n, 0n, OURS)), BlockErrorCode.BAD_BITS)).toBe(true);
  });

  test('unusable parameters are rejected with asert_bad_params', () => {
    for (const p of [
      { ...OURS, halfLife: 0 },
      { ...OURS, targetSpacing: -3 },
      { ...OURS, targetSpacing: 2.5 },
      { ...OURS, powLimit: 0n },
      { ...OURS, powLimit: 1n << 256n },
    ]) {
      expect(isNodeError(thrown(() => getNextAsertTarget(anchor, 5, onSchedule(5), p)), AsertErrorCode.BAD_PARAMS)).toBe(true);
    }
  });
});
