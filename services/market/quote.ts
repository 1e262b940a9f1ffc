/** Exact AMM quotes over the chain's pools for the trading services: routes, output, fees, price impact. */
import type { EconomyReader } from '../../chain/economyReader.js';
import { poolId, type PoolRecord } from '../../consensus/economyState.js';
import { NATIVE } from '../../consensus/ledger.js';
import { simulateSwap, type SwapHop } from '../../consensus/txTypes/swap.js';

/** An exact quote of a path. */
export interface PathQuote {
  readonly path: readonly string[];
  readonly hops: readonly SwapHop[];
  readonly amountOut: bigint;
  /** Output at the pools' spot prices after the fee, without the curve's slippage (smallest units, float). */
  readonly idealOut: number;
  /** Percent of the ideal output lost to the curve: (1 − out / ideal) · 100; fees excluded. */
  readonly priceImpactPct: number;
}

/** The pools a path needs, or undefined when one is missing or empty. */
async function poolsOf(eco: EconomyReader, path: readonly string[]): Promise<Map<string, PoolRecord> | undefined> {
  const out = new Map<string, PoolRecord>();
  for (let i = 0; i + 1 < path.length; i++) {
    const id = poolId(path[i], path[i + 1]);
    const p = await eco.getPoolRecord(id);
    if (!p || p.reserveA === 0n || p.reserveB === 0n) return undefined;
    out.set(id, p);
  }
  return out;
}

/** Quotes `amountIn` over `path` against the pool states `pools` (see PathQuote), or undefined when a pool cannot pay out. */
export function quoteOnPools(pools: Map<string, PoolRecord>, path: readonly string[], amountIn: bigint, feeBps: number): PathQuote | undefined {
  let hops: SwapHop[];
  try {
    hops = simulateSwap((x, y) => pools.get(poolId(x, y))!, path, amountIn, feeBps);
  } catch {
    return undefined;
  }
  let ideal = Number(amountIn);
  for (const h of hops) {
    const inIsA = h.pool.a === h.assetIn;
    const [rIn, rOut] = inIsA ? [h.pool.reserveA, h.pool.reserveB] : [h.pool.reserveB, h.pool.reserveA];
    ideal = (ideal * (10_000 - feeBps)) / 10_000 * (Number(rOut) / Number(rIn));
  }
  const amountOut = hops[hops.length - 1].amountOut;
  return { path, hops, amountOut, idealOut: ideal, priceImpactPct: ideal > 0 ? (1 - Number(amountOut) / ideal) * 100 : 0 };
}

/** Candidate routes of `from → to`: the direct pool and the route via NATIVE. */
export function candidatePaths(from: string, to: string): string[][] {
  const paths = [[from, to]];
  if (from !== NATIVE && to !== NATIVE) paths.push([from, NATIVE, to]);
  return paths;
}

/** The best exact quote of `from → to` among the candidate routes, with the routes that exist. */
export async function bestQuote(eco: EconomyReader, from: string, to: string, amountIn: bigint, feeBps: number): Promise<{ best?: PathQuote; considered: { path: string[]; available: boolean; amountOut?: string }[] }> {
  const considered: { path: string[]; available: boolean; amountOut?: string }[] = [];
  let best: PathQuote | undefined;
  for (const path of candidatePaths(from, to)) {
    const pools = await poolsOf(eco, path);
    const q = pools && quoteOnPools(pools, path, amountIn, feeBps);
    considered.push({ path, available: !!q, ...(q ? { amountOut: q.amountOut.toString() } : {}) });
    if (q && (!best || q.amountOut > best.amountOut)) best = q;
  }
  return { best, considered };
}
