import { describe, expect, test } from '@jest/globals';
import { formatAmount, MAX_AMOUNT, parseAmount, parseBaseUnits, parsePositiveAmount } from '../../consensus/amount.js';
import { isNodeError } from '../../consensus/errors.js';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return isNodeError(e) ? e.code : 'not_coded';
  }
  return undefined;
}

describe('parseAmount', () => {
  test.each([
    ['0', 0n],
    ['1', 100_000_000n],
    ['1.5', 150_000_000n],
    ['0.00000001', 1n],
    ['12.34567890', 1_234_567_890n],
    ['007.1', 710_000_000n],
    ['184467440737.09551615', MAX_AMOUNT],
  ])('%s → %s base units', (text, base) => {
    expect(parseAmount(text)).toBe(base);
  });

  test.each([
    ['more than 8 decimals', '0.000000001'],
    ['negative', '-1'],
    ['plus sign', '+1'],
    ['exponent', '1e8'],
    ['empty', ''],
    ['blank', ' 1'],
    ['trailing dot', '1.'],
    ['leading dot', '.5'],
    ['comma', '1,5'],
    ['above 2^64 - 1 base units', '184467440737.09551616'],
    ['hex', '0x10'],
  ])('rejects %s with invalid_amount', (_name, text) => {
    expect(codeOf(() => parseAmount(text))).toBe('invalid_amount');
  });

  test('parsePositiveAmount rejects zero', () => {
    expect(codeOf(() => parsePositiveAmount('0.0'))).toBe('invalid_amount');
    expect(parsePositiveAmount('0.1')).toBe(10_000_000n);
  });
});

describe('formatAmount', () => {
  test.each([
    [0n, '0'],
    [1n, '0.00000001'],
    [150_000_000n, '1.5'],
    [100_000_000n, '1'],
    [123_456_789_012n, '1234.56789012'],
    [-150_000_000n, '-1.5'],
    [MAX_AMOUNT, '184467440737.09551615'],
  ])('%s → %s', (base, text) => {
    expect(formatAmount(base)).toBe(text);
  });

  test('round-trips exactly', () => {
    for (const v of [1n, 99n, 100_000_001n, 2_100_000_000_000_000n, 123_456_789n]) expect(parseAmount(formatAmount(v))).toBe(v);
  });
});

test('parseBaseUnits accepts integers only', () => {
  expect(parseBaseUnits('150000000')).toBe(150_000_000n);
  expect(codeOf(() => parseBaseUnits('1.5'))).toBe('invalid_amount');
  expect(codeOf(() => parseBaseUnits('18446744073709551616'))).toBe('invalid_amount');
});
