/** native-price-feed: NATIVE's USD price from the deepest NATIVE/USD-stablecoin pool, with 24h change, TVL, 24h volume and the pool used. */
import { defineService } from './define.js';
import { noInput } from './inputs.js';
import { chainHealth } from './health.js';
import { economyOf, formatUnits, round } from './market/economy.js';
import type { ServiceContext } from './types.js';


async function run(ctx: ServiceContext) {
  const eco = economyOf(ctx);
  const usd = await eco.nativeUsd();
  const height = ctx.chain.tip.height;
  if (usd.source !== 'pool' || !usd.pool) {
    return { priceUsd: usd.price, source: 'reference', pool: null, change24hPct: null, tvlUsd: null, volume24h: null, height, note: 'no NATIVE/USD-stablecoin pool has liquidity: this is the genesis reference price' };
  }
  const [pool, vol, stable] = await Promise.all([eco.getPool(usd.pool), eco.volume24h(usd.pool), eco.getTokenRecord(usd.stablecoin!)]);
  const nativeIsA = pool!.a === 'NATIVE';
  const volNative = nativeIsA ? vol.a : vol.b;
  const volStable = nativeIsA ? vol.b : vol.a;
  const d = stable!.decimals;
  return {
    priceUsd: round(usd.price, 8),
    source: 'pool',
    pool: { id: usd.pool, stablecoin: usd.stablecoin, reserveNative: formatUnits(BigInt(nativeIsA ? pool!.reserveA : pool!.reserveB), 8), reserveStable: formatUnits(BigInt(nativeIsA ? pool!.reserveB : pool!.reserveA), d) },
    change24hPct: usd.change24h === null ? null : round(usd.change24h, 4),
    tvlUsd: round(usd.tvlUsd!, 2),
    volume24h: { native: formatUnits(volNative, 8), usd: round(Number(volStable) / 10 ** d, 2), swaps: vol.swaps },
    window: 'the 24 hourly candles ending with the tip\'s hour',
    height,
  };
}

/** native-price-feed. */
export const priceFeed = defineService({
  id: 'native-price-feed',
  name: 'Native Price Feed',
  category: 'pricing',
  priceBase: 600_000n,
  description: 'live native price from deepest AMM pool with 24h change, TVL, volume',
  tags: ['price', 'native', 'amm', 'pool', 'tvl', 'volume', '24h'],
  requestFormat: '',
  requestRequired: false,
  inputSchema: noInput(),
  run,
  health: chainHealth,
});
