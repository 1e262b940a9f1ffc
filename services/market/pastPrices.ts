/**
 * Prices of the past from the chain's own swap log: what an asset was worth in NATIVE when a
 * movement happened, for valuing old movements at the price of their time rather than today's.
 */
import type { EconomyReader } from '../../chain/economyReader.js';
import { poolId, type PoolRecord } from '../../consensus/economyState.js';
import { NATIVE } from '../../consensus/ledger.js';

/** NATIVE base units per smallest unit of an asset at a height, or undefined when it had no NATIVE pool then. */
export type PastPriceReader = (asset: string, height: number) => Promise<number | undefined>;

/**
 * A reader of past prices over the pools `records` (the tip's): the price of `asset` at the start of
 * block `height` is its NATIVE pool's reserve ratio just before the first swap at or after that
 * height (the swap log keeps each swap's reserves after it; the swap's own amounts give them
 * before it), or the pool's ratio now when no swap came since (adding or removing liquidity keeps
 * the ratio). A pool created after `height` gives no price: the asset had no market then.
 */
export function createPastPrices(eco: EconomyReader, records: readonly PoolRecord[]): PastPriceReader {
  const pools = new Map(records.map((p) => [poolId(p.a, p.b), p]));
  const cache = new Map<string, Promise<number | undefined>>();
  async function read(asset: string, height: number): Promise<number | undefined> {
    const pool = pools.get(poolId(asset, NATIVE));
    if (!pool || pool.createdHeight > height) return undefined;
    const [next] = await eco.swaps({ pool: `${pool.a}-${pool.b}`, since: height, limit: 1 });
    let [ra, rb] = [pool.reserveA, pool.reserveB];
    if (next) {
      // The pool keeps the whole input (fee included) and pays out amountOut.
      const [inA, amountIn, amountOut] = [next.assetIn === pool.a, BigInt(next.amountIn), BigInt(next.amountOut)];
      ra = BigInt(next.reserveA) + (inA ? -amountIn : amountOut);
      rb = BigInt(next.reserveB) + (inA ? amountOut : -amountIn);
    }
    const [rNative, rAsset] = pool.a === NATIVE ? [ra, rb] : [rb, ra];
    return rAsset > 0n ? Number(rNative) / Number(rAsset) : undefined;
  }
  return (asset, height) => {
    if (asset === NATIVE) return Promise.resolve(1);
    const key = `${asset}@${height}`;
    let p = cache.get(key);
    if (!p) cache.set(key, (p = read(asset, height)));
    return p;
  };
}
