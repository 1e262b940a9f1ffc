/** native-crypto-whale-watch: one wallet's large movements with relative alert levels and a holding analysis (concentration, changes over 1 h and 24 h) of an address of this chain. */
import { defineService } from './define.js';
import { nativeAddressInput } from './inputs.js';
import { tryDecodeAddress } from '../consensus/address.js';
import { NATIVE } from '../consensus/ledger.js';
import { chainHealth } from './health.js';
import { addressOf, economyOf, foreignAddressReason, formatUnits, round, thisChainAddress } from './market/economy.js';
import { valuePortfolio } from './market/portfolio.js';
import { createPastPrices } from './market/pastPrices.js';
import { ServiceError, type ServiceContext } from './types.js';


/**
 * Alert levels, relative (lowest first). A movement is rated against the wallet's own value now
 * (`minWalletPct`: its share of the wallet, capped at 100 %) once it is at least
 * `WALLET_ALERT_MIN_SUPPLY_PCT` of the circulating NATIVE supply (dust in a small wallet is no
 * whale), and against the market (`minSupplyPct`: its share of the circulating NATIVE supply,
 * minted − burned); its level is the higher of the two. Smaller movements are not listed.
 */
export const WALLET_ALERT_LEVELS = [
  { level: 'medium', minWalletPct: 10, minSupplyPct: 0.1 },
  { level: 'high', minWalletPct: 25, minSupplyPct: 1 },
  { level: 'critical', minWalletPct: 50, minSupplyPct: 5 },
] as const;
/** Least share of the circulating NATIVE supply (%) a movement needs to be rated against the wallet. */
export const WALLET_ALERT_MIN_SUPPLY_PCT = 0.01;

/** The alert level of a movement worth `sharePct` % of the wallet and `supplyPct` % of the circulating supply, or undefined. */
export function alertLevel(walletPct: number, supplyPct: number): (typeof WALLET_ALERT_LEVELS)[number]['level'] | undefined {
  let out: (typeof WALLET_ALERT_LEVELS)[number]['level'] | undefined;
  for (const l of WALLET_ALERT_LEVELS) {
    if (supplyPct >= l.minSupplyPct || (supplyPct >= WALLET_ALERT_MIN_SUPPLY_PCT && walletPct >= l.minWalletPct)) out = l.level;
  }
  return out;
}

/** Activity entries read (newest first). */
export const WALLET_ACTIVITY_LIMIT = 500;
/** Windows of the flow analysis, in blocks (1 h and 24 h at 3 s). */
export const WALLET_FLOW_WINDOWS = [1_200, 28_800] as const;

async function run(ctx: ServiceContext, input: unknown) {
  const eco = economyOf(ctx);
  const address = String(input).trim();
  const id = tryDecodeAddress(address.toLowerCase(), ctx.params.hrp);
  // Reached only by a paid call whose payment skipped the precheck: no answer, so a refund.
  if (!id) throw new ServiceError('foreign_address', foreignAddressReason(address, ctx.params.hrp));
  const [p, activity, records, tokens, supply, usd] = await Promise.all([valuePortfolio(ctx.chain, eco, id), eco.activity(id, { limit: WALLET_ACTIVITY_LIMIT }), eco.poolRecords(), eco.tokenRecords(), ctx.chain.getSupply(), eco.nativeUsd()]);
  const circulating = Number(supply.minted - supply.burned) / 1e8;
  // Each movement at the price of its time (the chain's swap log), not today's.
  const priceAt = createPastPrices(eco, records);
  const dec = (a: string) => (a === NATIVE ? 8 : (tokens.get(a)?.decimals ?? 0));
  const valueOf = async (asset: string, amount: unknown, height: number) => {
    const v = await priceAt(asset, height);
    return v === undefined ? null : (Number(amount as string) * v) / 1e8;
  };
  // NATIVE's USD price then: the same stablecoin pool as today's price, at that height (the reference price has no history).
  const stableDecimals = usd.source === 'pool' && usd.stablecoin ? tokens.get(usd.stablecoin)?.decimals : undefined;
  const usdPerNativeAt = async (height: number) => {
    if (stableDecimals === undefined) return usd.price;
    const perUnit = await priceAt(usd.stablecoin!, height);
    return perUnit ? 1e8 / (perUnit * 10 ** stableDecimals) : usd.price;
  };
  const tip = ctx.chain.tip.height;
  const flows = WALLET_FLOW_WINDOWS.map((blocks) => ({ blocks, fromHeight: Math.max(0, tip - blocks + 1), inNative: 0, outNative: 0 }));
  const movements = [];
  let movementsRead = 0;
  let unpriced = 0;
  for (const a of activity) {
    const kind = a.kind as string;
    const height = a.height as number;
    let asset = NATIVE;
    let amount = '0';
    let direction: 'in' | 'out' | 'swap' | 'lock' = 'in';
    let counterparty: string | null = null;
    if (kind === 'transfer_in' || kind === 'transfer_out') {
      asset = a.asset as string;
      amount = a.amount as string;
      direction = kind === 'transfer_in' ? 'in' : 'out';
      counterparty = addressOf(a.counterparty as string, ctx.params.hrp);
    } else if (kind === 'swap') {
      asset = a.assetIn as string;
      amount = a.amountIn as string;
      direction = 'swap';
    } else if (kind === 'bridge_in' || kind === 'bridge_out') {
      amount = a.amount as string;
      direction = kind === 'bridge_in' ? 'in' : 'out';
      counterparty = `bridge:${a.network as string}`;
    } else if (kind === 'stake' || kind === 'unstake') {
      amount = a.amount as string;
      direction = 'lock';
    } else if (kind === 'liquidity_add' || kind === 'liquidity_remove') {
      // Both sides of the position, valued together as NATIVE.
      const [pa, pb] = (a.pool as string).split('-');
      const [va, vb] = await Promise.all([valueOf(pa, a.amountA, height), valueOf(pb, a.amountB, height)]);
      if (va === null || vb === null) {
        unpriced++;
        continue;
      }
      amount = String(Math.round((va + vb) * 1e8));
      direction = 'lock';
    } else if (kind.startsWith('token_') && a.native !== undefined && a.native !== '0') {
      // Collateral or backing moved in NATIVE (stablecoin mint/redeem, token back).
      amount = a.native as string;
      direction = 'lock';
    } else continue;
    const v = await valueOf(asset, amount, height);
    if (v === null) {
      unpriced++;
      continue;
    }
    movementsRead++;
    for (const f of flows) {
      if (height < f.fromHeight) continue;
      if (direction === 'in') f.inNative += v;
      if (direction === 'out') f.outNative += v;
    }
    // Share of the wallet's value now, capped at 100 % (a wallet that sent out more than it holds now).
    const walletPct = v > 0 ? (v / Math.max(p.totalNative, v)) * 100 : 0;
    const supplyPct = circulating > 0 ? (v / circulating) * 100 : 0;
    const level = alertLevel(walletPct, supplyPct);
    if (!level) continue;
    movements.push({ height, tx: a.tx as string, kind, direction, asset, amount: formatUnits(BigInt(amount), dec(asset)), valueNative: round(v, 8), valueUsd: round(v * (await usdPerNativeAt(height)), 2), counterparty, alertLevel: level, shareOfPortfolioPct: round(walletPct, 4), shareOfSupplyPct: round(supplyPct, 6) });
  }
  const valued = p.all.filter((h) => h.valueNative !== null && h.valueNative > 0);
  const shares = valued.map((h) => h.valueNative! / (p.totalNative || 1));
  const largest = valued.length ? valued.reduce((x, y) => (y.valueNative! > x.valueNative! ? y : x)) : null;
  const hhi = shares.reduce((s, x) => s + (100 * x) ** 2, 0);
  return {
    address: address.toLowerCase(),
    found: true,
    totalValueNative: p.totalNative,
    totalValueUsd: p.totalUsd,
    alertCount: movements.length,
    movements,
    holdingAnalysis: {
      holdings: valued.map((h) => ({ kind: h.kind, asset: h.asset, amount: h.amount, valueNative: h.valueNative, sharePct: round((h.valueNative! / (p.totalNative || 1)) * 100, 4) })),
      largestHolding: largest ? { kind: largest.kind, asset: largest.asset, sharePct: round((largest.valueNative! / (p.totalNative || 1)) * 100, 4) } : null,
      concentrationHhi: round(hhi, 2),
      changes: flows.map((f) => ({ windowBlocks: f.blocks, fromHeight: f.fromHeight, inNative: round(f.inNative, 8), outNative: round(f.outNative, 8), netNative: round(f.inNative - f.outNative, 8), netPctOfHoldings: p.totalNative > 0 ? round(((f.inNative - f.outNative) / p.totalNative) * 100, 4) : null })),
    },
    thresholds: { levels: WALLET_ALERT_LEVELS, walletRatingMinSupplyPct: WALLET_ALERT_MIN_SUPPLY_PCT, circulatingNative: round(circulating, 8) },
    movementsRead: movementsRead,
    movementsUnpriced: unpriced,
    activityRead: activity.length,
    method: 'movements are the wallet\'s transfers, swaps (the side given), bridge records, stakes, liquidity (both sides) and collateral moves among its newest 500 activity entries, valued in NATIVE at the price of their time (the asset\'s NATIVE pool just before the first swap at or after the movement\'s height, from the chain\'s swap log; a movement before its asset had a NATIVE pool is counted in movementsUnpriced) and in USD at NATIVE\'s USD price of that time; holdings at today\'s spot prices; alert level relative to the wallet and the market: the higher of its share of the circulating NATIVE supply (medium >= 0.1 %, high >= 1 %, critical >= 5 %) and, for movements of at least 0.01 % of that supply, its share of the wallet\'s value now capped at 100 % (medium >= 10 %, high >= 25 %, critical >= 50 %); smaller movements are counted in movementsRead but not listed; concentration = HHI of the holdings\' value shares; changes = value in and out over the last 1,200 and 28,800 blocks (1 h and 24 h)',
    height: tip,
  };
}

/** native-crypto-whale-watch. */
export const cryptoWhaleWatch = defineService({
  id: 'native-crypto-whale-watch',
  name: 'Crypto Whale Watch',
  category: 'whale-watch',
  priceBase: 2_500_000_000n,
  description: 'large-wallet movement alert and holding analysis',
  tags: ['whale', 'wallet', 'movements', 'holdings', 'alerts'],
  requestFormat: 'wallet address of this chain (native1… on mainnet, tnative1… elsewhere); other chains\' addresses are refused before payment',
  requestRequired: false,
  needsInput: true,
  inputSchema: nativeAddressInput(),
  precheck: thisChainAddress,
  run,
  health: chainHealth,
});
