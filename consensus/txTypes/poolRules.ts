/** Helpers shared by the pool types: the pair in pool order, LP share balances, pool keys. */
import { EconomyErrorCode } from '../errors.js';
import { getPool, lpKey, poolId, poolKey, type PoolRecord } from '../economyState.js';
import { checkedAdd, decodeVarintValue, encodeVarintValue } from '../ledger.js';
import type { StateOverlay } from '../state.js';
import { assetKeys, refuse, reject, validateAsset } from './economyRules.js';

/** Checks a pair of assets: each well-formed, and not the same (`pool_identical_assets`). */
export function validatePair(x: string, y: string): void {
  validateAsset(x);
  validateAsset(y);
  if (x === y) throw reject(EconomyErrorCode.IDENTICAL_ASSETS, `a pool needs two different assets, got ${x} twice`);
}

/** The pool of a pair or `pool_unknown`. */
export function requirePool(state: StateOverlay, x: string, y: string): PoolRecord {
  const id = poolId(x, y);
  const p = getPool(state, id);
  if (!p) throw refuse(EconomyErrorCode.UNKNOWN_POOL, `no pool ${id} on this chain`, { pool: id });
  return p;
}


/** LP shares an account holds in a pool. */
export function lpBalance(state: StateOverlay, id: string, owner: Uint8Array): bigint {
  const raw = state.get(lpKey(id, owner));
  return raw ? decodeVarintValue(raw) : 0n;
}

/** Sets an account's LP shares (absent when zero). */
export function setLpBalance(state: StateOverlay, id: string, owner: Uint8Array, shares: bigint): void {
  state.set(lpKey(id, owner), shares === 0n ? null : encodeVarintValue(checkedAdd(shares, 0n, 'LP shares')));
}

/** Keys a liquidity operation touches: the pool, both assets' records and the owner's balances, the owner's LP shares. */
export function liquidityKeys(x: string, y: string, owner: Uint8Array): string[] {
  const id = poolId(x, y);
  return [poolKey(id), ...assetKeys(x, owner), ...assetKeys(y, owner), lpKey(id, owner)];
}
