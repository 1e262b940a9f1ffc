/** native-arb-scan: implied prices of each asset across pools (directly and via NATIVE), the widest spot spread and the route that would capture it. */
import { defineService } from './define.js';
import { noInput } from './inputs.js';
import type { PoolRecord } from '../consensus/economyState.js';
import { NATIVE } from '../consensus/ledger.js';
import { chainHealth } from './health.js';
import { economyOf, round } from './market/economy.js';
import type { ServiceContext } from './types.js';


/** One implied price of an asset, in NATIVE per whole unit. */
interface Implied {
  readonly source: string;
  readonly via: string | null;
  readonly priceNative: number;
  /** Pools the price runs through, from NATIVE to the asset. */
  readonly pools: string[];
}

async function run(ctx: ServiceContext) {
  const eco = economyOf(ctx);
  const [records, tokens] = await Promise.all([eco.poolRecords(), eco.tokenRecords()]);
  const live = records.filter((p) => p.reserveA > 0n && p.reserveB > 0n);
  const dec = (a: string) => (a === NATIVE ? 8 : (tokens.get(a)?.decimals ?? 0));
  // Units of `y` per whole unit of `x` at the pool's spot.
  const spot = (p: PoolRecord, x: string) => {
    const [rx, ry] = p.a === x ? [p.reserveA, p.reserveB] : [p.reserveB, p.reserveA];
    const y = p.a === x ? p.b : p.a;
    return Number(ry) / 10 ** dec(y) / (Number(rx) / 10 ** dec(x));
  };
  const direct = new Map<string, Implied>();
  for (const p of live) {
    if (p.a !== NATIVE && p.b !== NATIVE) continue;
    const asset = p.a === NATIVE ? p.b : p.a;
    direct.set(asset, { source: `${p.a}-${p.b}`, via: null, priceNative: spot(p, asset), pools: [`${p.a}-${p.b}`] });
  }
  const implied = new Map<string, Implied[]>();
  for (const [asset, d] of direct) implied.set(asset, [d]);
  for (const p of live) {
    if (p.a === NATIVE || p.b === NATIVE) continue;
    for (const [x, y] of [[p.a, p.b], [p.b, p.a]]) {
      const dy = direct.get(y);
      if (!dy) continue;
      const list = implied.get(x) ?? [];
      list.push({ source: `${p.a}-${p.b}`, via: y, priceNative: spot(p, x) * dy.priceNative, pools: [...dy.pools, `${p.a}-${p.b}`] });
      implied.set(x, list);
    }
  }
  const feeBps = ctx.params.economy.swapFeeBps;
  const assets = [...implied.entries()].map(([asset, prices]) => {
    const sorted = [...prices].sort((u, v) => u.priceNative - v.priceNative);
    const lo = sorted[0];
    const hi = sorted[sorted.length - 1];
    const spreadPct = sorted.length > 1 ? ((hi.priceNative - lo.priceNative) / lo.priceNative) * 100 : 0;
    return { asset, prices: prices.map((x) => ({ ...x, priceNative: round(x.priceNative, 10) })), spreadPct: round(spreadPct, 4), cheapest: lo, dearest: hi };
  });
  const widest = assets.filter((a) => a.prices.length > 1).sort((u, v) => v.spreadPct - u.spreadPct)[0];
  let route = null;
  if (widest) {
    // Buy the asset where it is cheap, sell it where it is dear: NATIVE → (cheap path) → asset → (dear path, reversed) → NATIVE.
    const buy = widest.cheapest.via === null ? [NATIVE, widest.asset] : [NATIVE, widest.cheapest.via, widest.asset];
    const sell = widest.dearest.via === null ? [NATIVE] : [widest.dearest.via, NATIVE];
    const path = [...buy, ...sell];
    const hops = path.length - 1;
    const feeCostPct = (1 - (1 - feeBps / 10_000) ** hops) * 100;
    route = {
      asset: widest.asset,
      spreadPct: widest.spreadPct,
      buyAt: widest.cheapest.source,
      sellAt: widest.dearest.source,
      path,
      hops,
      feeCostPct: round(feeCostPct, 4),
      profitableAtSpot: widest.spreadPct > feeCostPct,
    };
  }
  return {
    assets: assets.map(({ asset, prices, spreadPct }) => ({ asset, prices, spreadPct })),
    widestSpread: route,
    unit: 'NATIVE per whole unit of the asset',
    method: 'spot prices (reserve ratios): directly from each asset\'s NATIVE pool, and implied through each token/token pool times the other token\'s NATIVE price; spread = (dearest - cheapest) / cheapest; the route buys where the asset is cheap and sells where it is dear, its fee cost is 1 - (1 - fee)^hops; size effects (price impact) are not included: quote a size with native-swap-quote',
    height: ctx.chain.tip.height,
  };
}

/** native-arb-scan. */
export const arbScan = defineService({
  id: 'native-arb-scan',
  name: 'Arbitrage Scan',
  category: 'trading',
  priceBase: 2_000_000n,
  description: 'cross-pool implied prices and widest spot spread',
  tags: ['arbitrage', 'spread', 'pools', 'prices', 'trading', 'amm'],
  requestFormat: '',
  requestRequired: false,
  inputSchema: noInput(),
  run,
  health: chainHealth,
});
