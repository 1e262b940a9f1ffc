/** native-crypto-portfolio-tracker: holdings with USD values, allocation % and profit/loss (average cost from the wallet's own swaps) of an address of this chain (other chains' addresses are refused before payment). */
import { defineService } from './define.js';
import { tryDecodeAddress } from '../consensus/address.js';
import { NATIVE } from '../consensus/ledger.js';
import { chainHealth } from './health.js';
import { economyOf, foreignAddressReason, formatUnits, round, thisChainAddress } from './market/economy.js';
import { valuePortfolio } from './market/portfolio.js';
import { ServiceError, type ServiceContext } from './types.js';


/** Swaps of the wallet read for the cost basis (its newest activity entries). */
export const PNL_ACTIVITY_LIMIT = 1_000;

/** Average-cost positions from a wallet's swaps, oldest first: cost in NATIVE base units per asset. */
export function averageCost(swaps: readonly { assetIn: string; assetOut: string; amountIn: bigint; amountOut: bigint }[]) {
  const pos = new Map<string, { units: bigint; cost: number; realized: number }>();
  const get = (a: string) => pos.get(a) ?? pos.set(a, { units: 0n, cost: 0, realized: 0 }).get(a)!;
  for (const s of swaps) {
    // What was given up, in NATIVE: NATIVE itself, or the average cost of the token units sold.
    let given: number;
    if (s.assetIn === NATIVE) given = Number(s.amountIn);
    else {
      const p = get(s.assetIn);
      const sold = s.amountIn < p.units ? s.amountIn : p.units;
      given = p.units > 0n ? (p.cost * Number(sold)) / Number(p.units) : 0;
      p.cost -= given;
      p.units -= sold;
      // Sold into NATIVE: the proceeds against the cost of the units sold is realized P/L.
      if (s.assetOut === NATIVE) p.realized += Number(s.amountOut) - given;
    }
    if (s.assetOut !== NATIVE) {
      const p = get(s.assetOut);
      p.units += s.amountOut;
      p.cost += given;
    }
  }
  return pos;
}

async function run(ctx: ServiceContext, input: unknown) {
  const eco = economyOf(ctx);
  const address = String(input).trim().replace(/^portfolio:\s*/i, '');
  const id = tryDecodeAddress(address.toLowerCase(), ctx.params.hrp);
  // Reached only by a paid call whose payment skipped the precheck: no answer, so a refund.
  if (!id) throw new ServiceError('foreign_address', foreignAddressReason(address, ctx.params.hrp));
  const [p, activity, tokens] = await Promise.all([valuePortfolio(ctx.chain, eco, id), eco.activity(id, { limit: PNL_ACTIVITY_LIMIT }), eco.tokenRecords()]);
  const swaps = activity
    .filter((a) => a.kind === 'swap')
    .reverse()
    .map((a) => ({ assetIn: a.assetIn as string, assetOut: a.assetOut as string, amountIn: BigInt(a.amountIn as string), amountOut: BigInt(a.amountOut as string) }));
  const cost = averageCost(swaps);
  const dec = (a: string) => (a === NATIVE ? 8 : (tokens.get(a)?.decimals ?? 0));
  const usd = p.nativeUsd;
  const total = p.totalNative;
  const holdings = p.all
    .filter((h) => h.valueNative === null || h.valueNative > 0)
    .map((h) => ({ ...h, allocationPct: total > 0 && h.valueNative !== null ? round((h.valueNative / total) * 100, 4) : null }))
    .sort((x, y) => (y.valueNative ?? 0) - (x.valueNative ?? 0));
  let unrealizedNative = 0;
  let realizedNative = 0;
  const positions = [];
  for (const [asset, c] of cost) {
    realizedNative += c.realized / 1e8;
    const held = p.tokens.find((t) => t.asset === asset);
    // Only units bought by swaps carry a cost; mark those still held (at most the balance) at spot.
    const balanceUnits = held ? BigInt(held.units) : 0n;
    const tracked = c.units < balanceUnits ? c.units : balanceUnits;
    const trackedCost = c.units > 0n ? (c.cost * Number(tracked)) / Number(c.units) : 0;
    const perUnit = held && held.valueNative !== null && balanceUnits > 0n ? held.valueNative / Number(balanceUnits) : null;
    const marketNative = perUnit === null ? null : perUnit * Number(tracked);
    const u = marketNative === null ? null : marketNative - trackedCost / 1e8;
    if (u !== null) unrealizedNative += u;
    positions.push({
      asset,
      unitsFromSwaps: formatUnits(tracked, dec(asset)),
      averageCostNative: tracked > 0n ? round(trackedCost / 1e8 / (Number(tracked) / 10 ** dec(asset)), 10) : null,
      costNative: round(trackedCost / 1e8, 8),
      marketValueNative: marketNative === null ? null : round(marketNative, 8),
      unrealizedPnlNative: u === null ? null : round(u, 8),
      unrealizedPnlUsd: u === null ? null : round(u * usd, 4),
      realizedPnlNative: round(c.realized / 1e8, 8),
    });
  }
  return {
    address: address.toLowerCase(),
    found: true,
    totalValueNative: p.totalNative,
    totalValueUsd: p.totalUsd,
    holdings,
    topHoldings: holdings.slice(0, 5).map((h) => ({ asset: h.asset, kind: h.kind, valueUsd: h.valueUsd, allocationPct: h.allocationPct })),
    pnl: {
      positions,
      unrealizedNative: round(unrealizedNative, 8),
      unrealizedUsd: round(unrealizedNative * usd, 4),
      realizedNative: round(realizedNative, 8),
      realizedUsd: round(realizedNative * usd, 4),
      swapsRead: swaps.length,
      costBasisMethod: 'average cost in NATIVE from the wallet\'s own swaps (oldest first): a swap from NATIVE adds its NATIVE to the bought asset\'s cost; a token sold moves its average cost to what it bought, and realizes proceeds - cost when sold for NATIVE; units received otherwise (transfers, mints) carry no cost and are left out of P/L; positions are marked at the NATIVE-pool spot price, USD at the current on-chain NATIVE/USD price',
    },
    nativeUsd: round(usd, 8),
    height: ctx.chain.tip.height,
  };
}

/** native-crypto-portfolio-tracker. */
export const cryptoPortfolioTracker = defineService({
  id: 'native-crypto-portfolio-tracker',
  name: 'Crypto Portfolio Tracker',
  category: 'portfolio',
  priceBase: 500_000_000n,
  description: 'profit/loss, allocation, top holdings with USD values',
  tags: ['portfolio', 'pnl', 'allocation', 'holdings', 'usd', 'wallet'],
  requestFormat: 'wallet address of this chain (native1… on mainnet, tnative1… elsewhere), or "portfolio:" followed by it; other chains\' addresses are refused before payment',
  requestRequired: false,
  needsInput: true,
  inputSchema: { type: 'string', maxLength: 100, pattern: '^([Pp][Oo][Rr][Tt][Ff][Oo][Ll][Ii][Oo]:\\s*)?(t?native|T?NATIVE)1[02-9ac-hj-np-zAC-HJ-NP-Z]{6,83}$', description: 'Wallet address of this chain (native1… / tnative1…), optionally prefixed with portfolio:.' },
  precheck: (ctx, input) => thisChainAddress(ctx, String(input).trim().replace(/^portfolio:\s*/i, '')),
  run,
  health: chainHealth,
});
