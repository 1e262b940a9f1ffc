/** Exact AMM quotes over the chain's pools for the trading services: routes, output, fees, price impact. */
import type { EconomyReader } from '../../chain/economyReader.js';
import { poolId, TokenFlag, type PoolRecord } from '../../consensus/economyState.js';
import { MAX_SWAP_PATH, simulateSwap, type SwapHop } from '../../consensus/txTypes/swap.js';

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

/**
 * Every path of 1 to `MAX_SWAP_PATH - 1` hops from `from` to `to` over the non-empty pools, each
 * asset at most once. The chain's swap also accepts paths that revisit an asset (A → B → A → C),
 * but such a path is never better: a round trip gives back less than it put in (every hop keeps
 * its fee and rounds down) and a hop's output grows with its input, so dropping the cycle pays
 * at least as much.
 */
export function candidatePaths(pools: readonly PoolRecord[], from: string, to: string): string[][] {
  const next = new Map<string, string[]>();
  const link = (x: string, y: string) => (next.get(x) ?? next.set(x, []).get(x)!).push(y);
  for (const p of pools) {
    if (p.reserveA === 0n || p.reserveB === 0n) continue;
    link(p.a, p.b);
    link(p.b, p.a);
  }
  const out: string[][] = [];
  const walk = (path: string[]) => {
    const last = path[path.length - 1];
    if (last === to) {
      out.push(path);
      return;
    }
    if (path.length === MAX_SWAP_PATH) return;
    for (const y of [...(next.get(last) ?? [])].sort()) if (!path.includes(y)) walk([...path, y]);
  };
  if (from !== to) walk([from]);
  // Shorter paths first, then by name: the order routes are listed in.
  return out.sort((x, y) => x.length - y.length || x.join('>').localeCompare(y.join('>')));
}

/** One route considered: its path, whether its pools can fill the amount, and what it pays. */
export interface ConsideredRoute {
  readonly path: string[];
  readonly available: boolean;
  readonly amountOut?: string;
}

/** Symbols of the tokens their issuers froze: the chain refuses any swap whose path holds one (`token_frozen`). */
export async function frozenTokens(eco: EconomyReader): Promise<Set<string>> {
  const out = new Set<string>();
  for (const [symbol, t] of await eco.tokenRecords()) if (t.flags & TokenFlag.frozen) out.add(symbol);
  return out;
}

/**
 * The best exact quote of `from → to` over every path the chain's swap accepts (1-3 hops, see
 * `candidatePaths`), with every route considered; ties go to the shorter path. Pools of a frozen
 * token are left out: the chain refuses a swap whose path holds one.
 */
export async function bestQuote(eco: EconomyReader, from: string, to: string, amountIn: bigint, feeBps: number): Promise<{ best?: PathQuote; considered: ConsideredRoute[] }> {
  const frozen = await frozenTokens(eco);
  const records = (await eco.poolRecords()).filter((p) => !frozen.has(p.a) && !frozen.has(p.b));
  const pools = new Map(records.map((p) => [poolId(p.a, p.b), p]));
  const considered: ConsideredRoute[] = [];
  let best: PathQuote | undefined;
  for (const path of candidatePaths(records, from, to)) {
    const q = quoteOnPools(pools, path, amountIn, feeBps);
    considered.push({ path, available: !!q, ...(q ? { amountOut: q.amountOut.toString() } : {}) });
    if (q && (!best || q.amountOut > best.amountOut)) best = q;
  }
  return { best, considered };
}
