/**
 * NATIVE amounts at the edges (CLI, JSON): exact conversion between bigint base units and
 * decimal strings such as "1.5" (1 NATIVE = 100_000_000 base units, 8 decimals). No floats.
 */
import { NodeError } from './errors.js';

/** Decimal places of NATIVE. */
export const NATIVE_DECIMALS = 8;
/** Base units per NATIVE (10^8). */
export const COIN = 100_000_000n;
/** Largest amount a consensus varint can carry (2^64 - 1 base units). */
export const MAX_AMOUNT = (1n << 64n) - 1n;

/** Error codes of amount parsing. */
export const AmountErrorCode = {
  INVALID: 'invalid_amount',
} as const;

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/**
 * Parses a non-negative NATIVE decimal string ("1", "1.5", "0.00000001") into base units.
 * Rejects signs, exponents, blanks, more than 8 decimals and values above 2^64 - 1 base units
 * with `invalid_amount`; `what` names the field in the message.
 */
export function parseAmount(text: string, what = 'amount'): bigint {
  if (typeof text !== 'string') throw new NodeError(AmountErrorCode.INVALID, `${what} must be a decimal string`);
  const m = DECIMAL.exec(text);
  if (!m) throw new NodeError(AmountErrorCode.INVALID, `${what} "${text}" is not a decimal number of NATIVE (e.g. 1.5)`);
  const [, whole, frac = ''] = m;
  if (frac.length > NATIVE_DECIMALS) {
    throw new NodeError(AmountErrorCode.INVALID, `${what} "${text}" has more than ${NATIVE_DECIMALS} decimals`);
  }
  const base = BigInt(whole) * COIN + BigInt(frac.padEnd(NATIVE_DECIMALS, '0'));
  if (base > MAX_AMOUNT) throw new NodeError(AmountErrorCode.INVALID, `${what} "${text}" is too large`);
  return base;
}

/** Parses a positive NATIVE decimal string (zero rejected with `invalid_amount`). */
export function parsePositiveAmount(text: string, what = 'amount'): bigint {
  const v = parseAmount(text, what);
  if (v === 0n) throw new NodeError(AmountErrorCode.INVALID, `${what} must be greater than zero`);
  return v;
}

/** Formats base units as the shortest exact NATIVE decimal string: 150000000n → "1.5", 1n → "0.00000001". */
export function formatAmount(base: bigint): string {
  const neg = base < 0n;
  const abs = neg ? -base : base;
  const whole = abs / COIN;
  const frac = (abs % COIN).toString().padStart(NATIVE_DECIMALS, '0').replace(/0+$/, '');
  return `${neg ? '-' : ''}${whole}${frac ? `.${frac}` : ''}`;
}

/** Parses a string of base units ("150000000") as returned beside decimal amounts by the API. */
export function parseBaseUnits(text: string, what = 'amount'): bigint {
  if (typeof text !== 'string' || !/^\d{1,20}$/.test(text)) throw new NodeError(AmountErrorCode.INVALID, `${what} "${text}" is not a base-unit integer`);
  const v = BigInt(text);
  if (v > MAX_AMOUNT) throw new NodeError(AmountErrorCode.INVALID, `${what} "${text}" is too large`);
  return v;
}
