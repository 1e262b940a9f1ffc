/**
 * The on-chain USD price of NATIVE as consensus sees it for a USD stablecoin: the spot price of
 * the coin's own NATIVE pool (stable units per NATIVE base unit = reserveStable / reserveNative),
 * or the genesis reference price while that pool does not exist or is empty. Kept as an exact
 * fraction so collateral checks are integer-exact.
 */
import { COIN, type ChainParams } from './params.js';
import { getPool, poolId, poolKey, type TokenRecord } from './economyState.js';
import { NATIVE } from './ledger.js';
import type { StateView } from './state.js';

/** A price as `num` stable units per `den` NATIVE base units. */
export interface PriceFraction {
  readonly num: bigint;
  readonly den: bigint;
  readonly source: 'pool' | 'reference';
}

/** Micro-USD per NATIVE of a decimal string with at most 6 decimals ("0.5" → 500000). */
export function microUsd(decimal: string): bigint {
  const [whole, frac = ''] = decimal.split('.');
  return BigInt(whole) * 1_000_000n + BigInt(frac.padEnd(6, '0').slice(0, 6));
}

/** State key of the pool that prices a stablecoin (NATIVE / symbol). */
export function stablePoolKey(symbol: string): string {
  return poolKey(poolId(NATIVE, symbol));
}

/** The price of NATIVE in a stablecoin's units (see module comment). */
export function stablePrice(state: StateView, symbol: string, token: TokenRecord, params: ChainParams): PriceFraction {
  const pool = getPool(state, poolId(NATIVE, symbol));
  if (pool && pool.reserveA > 0n && pool.reserveB > 0n) {
    const nativeIsA = pool.a === NATIVE;
    return { num: nativeIsA ? pool.reserveB : pool.reserveA, den: nativeIsA ? pool.reserveA : pool.reserveB, source: 'pool' };
  }
  return { num: microUsd(params.referencePriceUsd) * 10n ** BigInt(token.decimals), den: 1_000_000n * COIN, source: 'reference' };
}
