/** native-pool-analytics: reserves, TVL, 24h volume, LP APR estimate from fees and a five-size price-impact table of a pool (or of a token's deepest pool). */
import { defineService } from './define.js';
import { tokenOrPoolInput } from './inputs.js';
import type { PoolView } from '../chain/economyReader.js';
import { chainHealth } from './health.js';
import { decimalsOf, economyOf, formatUnits, resolveAssetRef, round, servable, Unservable } from './market/economy.js';
import { quoteOnPools } from './market/quote.js';
import type { ServiceContext } from './types.js';


/** Sizes of the price-impact table, as percent of the input side's reserve. */
export const IMPACT_TABLE_PCT = [0.1, 0.5, 1, 5, 10] as const;

/** The pool the input names (an asset: its deepest pool), or why this chain has none (400 before any quote; a refund at settle). */
const target = servable(async (ctx: ServiceContext, input: unknown): Promise<PoolView | Unservable> => {
  const eco = economyOf(ctx);
  const ref = await resolveAssetRef(eco, String(input));
  if (ref.kind === 'unknown') return new Unservable(ref.code, ref.reason);
  if (ref.kind === 'pool') return ref.pool;
  const asset = ref.kind === 'token' ? ref.symbol : 'NATIVE';
  const [pool] = await eco.listPools({ asset, limit: 1 });
  return pool ?? new Unservable('no_pool', `no pool trades ${asset} on this chain`);
});

async function run(ctx: ServiceContext, input: unknown) {
  const eco = economyOf(ctx);
  const height = ctx.chain.tip.height;
  const pool = await target.resolved(ctx, input);
  const record = (await eco.getPoolRecord(pool.id))!;
  const [da, db, vol, usd] = await Promise.all([decimalsOf(eco, pool.a), decimalsOf(eco, pool.b), eco.volume24h(pool.id), eco.nativeUsd()]);
  const feeBps = ctx.params.economy.swapFeeBps;
  // 24h volume valued through side a (a trade moves equal value on both sides at the price it executes at).
  const volumeUsd = Number(BigInt(pool.reserveA)) > 0 ? (Number(vol.a) / Number(BigInt(pool.reserveA))) * (pool.tvlUsd / 2) : 0;
  const fees24hUsd = (volumeUsd * feeBps) / 10_000;
  const aprPct = pool.tvlUsd > 0 ? ((fees24hUsd * 365) / pool.tvlUsd) * 100 : null;
  const table = IMPACT_TABLE_PCT.map((pct) => {
    const amountIn = (BigInt(pool.reserveA) * BigInt(Math.round(pct * 1000))) / 100_000n;
    const q = amountIn > 0n ? quoteOnPools(new Map([[pool.id, record]]), [pool.a, pool.b], amountIn, feeBps) : undefined;
    return {
      sizePctOfReserve: pct,
      amountIn: formatUnits(amountIn, da!),
      assetIn: pool.a,
      amountOut: q ? formatUnits(q.amountOut, db!) : '0',
      assetOut: pool.b,
      priceImpactPct: q ? round(q.priceImpactPct, 4) : null,
    };
  });
  return {
    found: true,
    pool: pool.id,
    a: pool.a,
    b: pool.b,
    reserves: { [pool.a]: formatUnits(BigInt(pool.reserveA), da!), [pool.b]: formatUnits(BigInt(pool.reserveB), db!) },
    reservesUnits: { a: pool.reserveA, b: pool.reserveB },
    price: round(pool.price, 10),
    priceNote: `${pool.b} per ${pool.a}`,
    lpSupply: pool.lpSupply,
    tvlNative: round(pool.tvlNative, 8),
    tvlUsd: round(pool.tvlUsd, 2),
    volume24h: { [pool.a]: formatUnits(vol.a, da!), [pool.b]: formatUnits(vol.b, db!), usd: round(volumeUsd, 2), swaps: vol.swaps },
    feeBps,
    fees24hUsd: round(fees24hUsd, 4),
    lpAprPct: aprPct === null ? null : round(aprPct, 4),
    aprMethod: 'APR = 24h volume (USD) x fee rate x 365 / TVL (USD); fees stay in the pool for its LPs; no compounding',
    impactTable: table,
    impactMethod: `selling ${pool.a} for ${pool.b}: sizes are 0.1%, 0.5%, 1%, 5% and 10% of the ${pool.a} reserve; impact = 1 - exact output / output at the spot price after the ${feeBps} bps fee`,
    nativeUsd: round(usd.price, 8),
    window: 'the 24 hourly candles ending with the tip\'s hour',
    height,
  };
}

/** native-pool-analytics. */
export const poolAnalytics = defineService({
  id: 'native-pool-analytics',
  name: 'Pool Analytics',
  category: 'analytics',
  priceBase: 1_500_000n,
  description: 'reserves, TVL, volume, LP APR estimate, five-size price-impact table',
  tags: ['pool', 'amm', 'reserves', 'tvl', 'volume', 'apr', 'price-impact', 'liquidity'],
  requestFormat: 'a pool of this chain as TOKEN/TOKEN, or an asset of this chain (NATIVE or a token symbol) for its deepest pool',
  requestRequired: false,
  needsInput: true,
  inputSchema: tokenOrPoolInput(),
  precheck: target.precheck,
  run,
  health: chainHealth,
});
