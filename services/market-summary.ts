/** native-market-summary: NATIVE's price, total TVL, 24h volume, the deepest pools and the latest swaps. */
import { defineService } from './define.js';
import { noInput } from './inputs.js';
import { chainHealth } from './health.js';
import { addressOf, economyOf, formatUnits, round } from './market/economy.js';
import type { ServiceContext } from './types.js';


/** Pools and swaps listed. */
export const SUMMARY_TOP_POOLS = 5;
export const SUMMARY_LATEST_SWAPS = 10;

async function run(ctx: ServiceContext) {
  const eco = economyOf(ctx);
  const [usd, pools, records, tokens, swaps] = await Promise.all([eco.nativeUsd(), eco.listPools(), eco.poolRecords(), eco.tokenRecords(), eco.swaps({ limit: SUMMARY_LATEST_SWAPS })]);
  const values = eco.nativeValues(records);
  const dec = (a: string) => (a === 'NATIVE' ? 8 : (tokens.get(a)?.decimals ?? 0));
  const vols = await Promise.all(pools.map((p) => eco.volume24h(p.id)));
  let volumeNative = 0;
  let swaps24h = 0;
  const top = pools.slice(0, SUMMARY_TOP_POOLS).map((p) => ({ id: p.id, price: round(p.price, 10), priceNote: `${p.b} per ${p.a}`, tvlUsd: round(p.tvlUsd, 2), volume24hUsd: 0 as number | null, swaps24h: 0 }));
  pools.forEach((p, i) => {
    const va = values.get(p.a);
    const vb = values.get(p.b);
    // One side of each trade, valued through whichever asset a NATIVE pool prices.
    const v = va !== undefined ? Number(vols[i].a) * va : vb !== undefined ? Number(vols[i].b) * vb : null;
    if (v !== null) volumeNative += v / 1e8;
    swaps24h += vols[i].swaps;
    if (i < top.length) {
      top[i].volume24hUsd = v === null ? null : round((v / 1e8) * usd.price, 2);
      top[i].swaps24h = vols[i].swaps;
    }
  });
  const tvlUsd = pools.reduce((s, p) => s + p.tvlUsd, 0);
  return {
    priceUsd: round(usd.price, 8),
    priceSource: usd.source,
    change24hPct: usd.change24h === null ? null : round(usd.change24h, 4),
    tvlUsd: round(tvlUsd, 2),
    volume24hUsd: round(volumeNative * usd.price, 2),
    volume24hNative: round(volumeNative, 8),
    swaps24h,
    poolCount: pools.length,
    topPools: top,
    latestSwaps: swaps.map((s) => ({ height: s.height, time: s.time, tx: s.tx, pool: s.pool, sender: addressOf(s.sender, ctx.params.hrp), sold: `${formatUnits(BigInt(s.amountIn), dec(s.assetIn))} ${s.assetIn}`, bought: `${formatUnits(BigInt(s.amountOut), dec(s.assetOut))} ${s.assetOut}` })),
    window: 'volume: the 24 hourly candles ending with the tip\'s hour',
    height: ctx.chain.tip.height,
  };
}

/** native-market-summary. */
export const marketSummary = defineService({
  id: 'native-market-summary',
  name: 'Market Summary',
  category: 'market-data',
  priceBase: 1_500_000n,
  description: 'price, TVL, 24h volume, top pools, latest swaps',
  tags: ['market', 'price', 'tvl', 'volume', 'pools', 'swaps', 'amm'],
  requestFormat: '',
  requestRequired: false,
  inputSchema: noInput(),
  run,
  health: chainHealth,
});
