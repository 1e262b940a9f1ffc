/** native-price-history: hourly OHLC candles (open, high, low, close, volume, swap count) of NATIVE's price pool from executed swaps, over the last 24 hours. */
import { defineService } from './define.js';
import { noInput } from './inputs.js';
import { NATIVE } from '../consensus/ledger.js';
import { chainHealth } from './health.js';
import { decimalsOf, economyOf, formatUnits, round } from './market/economy.js';
import type { ServiceContext } from './types.js';


/** Hours of candles returned. */
export const PRICE_HISTORY_HOURS = 24;

async function run(ctx: ServiceContext) {
  const eco = economyOf(ctx);
  const tipTime = ctx.chain.tip.header.time;
  const usd = await eco.nativeUsd();
  // The NATIVE/USD-stablecoin pool that prices NATIVE; without one, the deepest NATIVE pool.
  const poolId = usd.pool ?? (await eco.listPools({ asset: NATIVE, limit: 1 }))[0]?.id;
  const window = { hours: PRICE_HISTORY_HOURS, from: tipTime - (tipTime % 3600) - (PRICE_HISTORY_HOURS - 1) * 3600, to: tipTime, candle: '1h' };
  if (!poolId) return { pool: null, candles: [], window, note: 'no pool trades NATIVE yet: there are no executed swaps to chart' };
  const pool = (await eco.getPoolRecord(poolId))!;
  const other = pool.a === NATIVE ? pool.b : pool.a;
  const dOther = (await decimalsOf(eco, other))!;
  // Candles hold reserve b / reserve a in smallest units; show the price of one NATIVE in the other asset.
  const toPrice = (raw: number) => (pool.a === NATIVE ? (raw * 1e8) / 10 ** dOther : 1e8 / (raw * 10 ** dOther));
  const cs = await eco.recentCandles(poolId, PRICE_HISTORY_HOURS);
  const candles = cs.map((c) => {
    const [o, h, l, cl] = [c.o, c.h, c.l, c.c].map(toPrice);
    const volNative = pool.a === NATIVE ? BigInt(c.va) : BigInt(c.vb);
    const volOther = pool.a === NATIVE ? BigInt(c.vb) : BigInt(c.va);
    return {
      time: c.t,
      timeIso: new Date(c.t * 1000).toISOString(),
      open: round(o, 8),
      // An inverted price swaps high and low.
      high: round(pool.a === NATIVE ? h : l, 8),
      low: round(pool.a === NATIVE ? l : h, 8),
      close: round(cl, 8),
      volumeNative: formatUnits(volNative, 8),
      volumeQuote: formatUnits(volOther, dOther),
      swaps: c.n,
    };
  });
  return {
    pool: poolId,
    base: NATIVE,
    quote: other,
    priceNote: `${other} per ${NATIVE}, after each executed swap`,
    window,
    candles,
    note: 'hours without swaps have no candle; prices are the pool price after each swap',
    height: ctx.chain.tip.height,
  };
}

/** native-price-history. */
export const priceHistory = defineService({
  id: 'native-price-history',
  name: 'Price History',
  category: 'market-data',
  priceBase: 1_500_000n,
  description: 'hourly OHLC candles from executed swaps',
  tags: ['price', 'history', 'ohlc', 'candles', 'hourly', 'swaps', 'chart'],
  requestFormat: '',
  requestRequired: false,
  inputSchema: noInput(),
  run,
  health: chainHealth,
});
