/** native-token-audit: on-chain audit of a token (backing %, frozen/hidden flags, holders, pool depth, risk flags with reasons). */
import { defineService } from './define.js';
import { tokenSymbolInput } from './inputs.js';
import { chainHealth } from './health.js';
import { economyOf, formatUnits, round, servable, Unservable } from './market/economy.js';
import { holderStatsOf } from './holder-stats.js';
import type { ServiceContext } from './types.js';


/** Default thresholds of the risk flags (documented in docs/agents-guide.md). */
export const TOKEN_AUDIT_THRESHOLDS = { issuerSharePct: 50, top10SharePct: 90, thinLiquidityUsd: 1_000, mintHeadroomPct: 50 } as const;

/** The token the input names, or why this chain has none by that name (400 before any quote; a refund at settle). */
const token = servable(async (ctx: ServiceContext, input: unknown) => {
  const symbol = String(input).trim().toUpperCase();
  const t = await economyOf(ctx).getToken(symbol);
  if (t) return t;
  return symbol === 'NATIVE' ? new Unservable('not_a_token', 'NATIVE is the chain\'s coin, not an issued token: see native-network-stats') : new Unservable('unknown_token', `no token ${symbol} on this chain`);
});

async function run(ctx: ServiceContext, input: unknown) {
  const eco = economyOf(ctx);
  const t = await token.resolved(ctx, input);
  const symbol = t.symbol;
  const [pools, records, stats, usd] = await Promise.all([eco.listPools({ asset: symbol }), eco.poolRecords(), holderStatsOf(eco, symbol), eco.nativeUsd()]);
  const supply = BigInt(t.supply);
  const reserve = BigInt(t.reserve);
  // Backing: collateral value / supply value. A stablecoin's supply is worth par (1 USD a coin) and its
  // collateral is valued at the coin's own pool price (consensus/stablePrice.ts); a plain token's supply
  // is valued at its NATIVE-pool spot price and its reserve is NATIVE.
  let backingPct: number | null = null;
  let backingMethod: string;
  if (t.kind === 'usd-stable') {
    const h = (await eco.stableHealth(symbol))!;
    backingPct = h.ratio === null ? null : round(h.ratio * 100, 4);
    backingMethod = `collateral ${formatUnits(reserve, 8)} NATIVE at the ${h.priceSource} price / supply at par`;
  } else {
    const unitValue = eco.nativeValues(records).get(symbol);
    if (supply === 0n) backingMethod = 'no supply';
    else if (unitValue === undefined) backingMethod = 'no NATIVE pool prices the token, so its supply has no on-chain value';
    else {
      backingPct = round((Number(reserve) / (Number(supply) * unitValue)) * 100, 4);
      backingMethod = 'NATIVE reserve / (supply x NATIVE-pool spot price)';
    }
  }
  const depthNative = pools.reduce((s, p) => s + p.tvlNative, 0);
  const depthUsd = depthNative * usd.price;
  const issuerSharePct = supply > 0n ? stats.largestWallets.find((w) => w.address === t.issuer)?.sharePct ?? 0 : 0;
  const max = BigInt(t.maxSupply);
  const headroomPct = round((Number(max - BigInt(t.minted)) / Number(max)) * 100, 4);
  const th = TOKEN_AUDIT_THRESHOLDS;
  const flags: { flag: string; severity: 'high' | 'medium' | 'low'; reason: string }[] = [];
  if (t.frozen) flags.push({ flag: 'frozen', severity: 'high', reason: 'the issuer froze the token: transfers, swaps and redemptions are refused' });
  if (t.hidden) flags.push({ flag: 'hidden', severity: 'medium', reason: 'moderation hid the token from listings' });
  if (reserve === 0n) flags.push({ flag: 'noBacking', severity: t.kind === 'usd-stable' ? 'high' : 'medium', reason: 'no NATIVE reserve backs the token: holders cannot redeem' });
  else if (t.kind === 'usd-stable' && backingPct !== null && backingPct < 100) flags.push({ flag: 'underCollateralized', severity: 'high', reason: `backing ${backingPct}% is below 100%` });
  if (issuerSharePct > th.issuerSharePct) flags.push({ flag: 'issuerConcentration', severity: 'medium', reason: `the issuer holds ${issuerSharePct}% of the supply (> ${th.issuerSharePct}%)` });
  if (stats.top10ConcentrationPct > th.top10SharePct) flags.push({ flag: 'holderConcentration', severity: 'low', reason: `the 10 largest wallets hold ${stats.top10ConcentrationPct}% (> ${th.top10SharePct}%); HHI ${stats.hhi}` });
  if (depthUsd < th.thinLiquidityUsd) flags.push({ flag: 'thinLiquidity', severity: 'medium', reason: pools.length === 0 ? 'no pool trades the token' : `pool depth $${round(depthUsd, 2)} is below $${th.thinLiquidityUsd}` });
  if (t.kind === 'token' && headroomPct > th.mintHeadroomPct) flags.push({ flag: 'mintHeadroom', severity: 'low', reason: `the issuer can still mint ${headroomPct}% of the max supply` });
  return {
    symbol,
    found: true,
    name: t.name,
    kind: t.kind,
    issuer: t.issuer,
    decimals: t.decimals,
    supply: formatUnits(supply, t.decimals),
    maxSupply: formatUnits(max, t.decimals),
    backingPct,
    backingMethod,
    reserveNative: formatUnits(reserve, 8),
    frozen: t.frozen,
    hidden: t.hidden,
    holders: t.holders,
    top10ConcentrationPct: stats.top10ConcentrationPct,
    issuerSharePct,
    poolDepth: { pools: pools.map((p) => ({ id: p.id, tvlNative: round(p.tvlNative, 8), tvlUsd: round(p.tvlUsd, 2) })), tvlNative: round(depthNative, 8), tvlUsd: round(depthUsd, 2) },
    mintHeadroomPct: headroomPct,
    riskFlags: flags,
    riskLevel: flags.some((f) => f.severity === 'high') ? 'high' : flags.some((f) => f.severity === 'medium') ? 'medium' : flags.length ? 'low' : 'none',
    thresholds: th,
    height: ctx.chain.tip.height,
  };
}

/** native-token-audit. */
export const tokenAudit = defineService({
  id: 'native-token-audit',
  name: 'Token Audit',
  category: 'audit',
  priceBase: 4_000_000n,
  description: 'on-chain audit of a token (backing %, frozen/hidden flags, holders, pool depth, risk flags)',
  tags: ['token', 'audit', 'backing', 'holders', 'liquidity', 'risk', 'security'],
  requestFormat: 'symbol of a token issued on this chain, e.g. USDN',
  requestRequired: true,
  inputSchema: tokenSymbolInput(),
  precheck: token.precheck,
  run,
  health: chainHealth,
});
