/** native-holder-stats: holder count, top-10 concentration, HHI and largest wallets of a token (or of a pool's tokens). */
import type { EconomyReader } from '../chain/economyReader.js';
import { defineService } from './define.js';
import { chainHealth } from './health.js';
import { tokenOrPoolInput } from './inputs.js';
import { economyOf, formatUnits, round, servable, tokensOfRef } from './market/economy.js';
import type { ServiceContext } from './types.js';

/** Most holders read for the HHI (one bounded scan of the holders index, largest first). */
export const HHI_HOLDER_LIMIT = 10_000;

/**
 * Concentration of a token: shares s_i = balance_i / supply; HHI = Σ (100·s_i)² = 10⁴·Σ balance² /
 * supply² on the 0–10,000 scale, from the index's running Σ balance² (one read). On a database
 * indexed before that aggregate existed, over the largest `HHI_HOLDER_LIMIT` holders of the holders
 * index instead (`hhiComplete: false` when there are more).
 */
export async function holderStatsOf(eco: EconomyReader, symbol: string) {
  const t = (await eco.getToken(symbol))!;
  const supply = BigInt(t.supply);
  const [holders, squares] = await Promise.all([eco.topHolders(symbol, 10), eco.holderSquares(symbol, t.holders)]);
  const share = (b: bigint) => (supply > 0n ? Number(b) / Number(supply) : 0);
  let hhi = 0;
  let complete = true;
  if (squares !== undefined) hhi = supply > 0n ? Number((squares * 10n ** 10n) / (supply * supply)) / 1e6 : 0;
  else {
    const balances = await eco.holderBalances(symbol, HHI_HOLDER_LIMIT);
    for (const b of balances) hhi += (100 * share(b)) ** 2;
    complete = balances.length >= t.holders;
  }
  const top10 = holders.slice(0, 10);
  const top10Sum = top10.reduce((s, h) => s + BigInt(h.balance), 0n);
  return {
    symbol,
    decimals: t.decimals,
    supply: formatUnits(supply, t.decimals),
    holders: t.holders,
    top10ConcentrationPct: round(share(top10Sum) * 100, 4),
    hhi: round(hhi, 2),
    hhiComplete: complete,
    concentration: hhi >= 2500 ? 'highly concentrated' : hhi >= 1500 ? 'moderately concentrated' : 'unconcentrated',
    largestWallets: top10.map((h, i) => ({ rank: i + 1, address: h.address, balance: formatUnits(BigInt(h.balance), t.decimals), balanceUnits: h.balance, sharePct: round(share(BigInt(h.balance)) * 100, 4) })),
  };
}

/** The tokens the input names (all of them when empty), or why this chain has none by that name (400 before any quote; a refund at settle). */
const target = servable((ctx: ServiceContext, input: unknown) => tokensOfRef(economyOf(ctx), String(input ?? ''), 'NATIVE balances are accounts, not token holdings: pass a token symbol or a pool'));

async function run(ctx: ServiceContext, input: unknown) {
  const eco = economyOf(ctx);
  const height = ctx.chain.tip.height;
  const method = 'HHI = sum over holders of (100 x balance / supply)^2, 0-10,000 (>= 2,500 highly concentrated, >= 1,500 moderately); top-10 concentration = the 10 largest balances / supply';
  const ref = await target.resolved(ctx, input);
  if (ref.scope === 'all') {
    const tokens = await eco.listTokens();
    return { height, scope: 'all', tokens: await Promise.all(tokens.map((t) => holderStatsOf(eco, t.symbol))), method };
  }
  return { height, scope: ref.scope, ...(ref.scope === 'pool' ? { pool: ref.pool.id } : {}), tokens: await Promise.all(ref.symbols.map((s) => holderStatsOf(eco, s))), method };
}

/** native-holder-stats. */
export const holderStats = defineService({
  id: 'native-holder-stats',
  name: 'Holder Stats',
  category: 'analytics',
  priceBase: 2_000_000n,
  description: 'holder count, top-10 concentration, HHI, largest wallets',
  tags: ['holders', 'concentration', 'hhi', 'whales', 'distribution', 'token'],
  requestFormat: 'symbol of a token issued on this chain, or a pool of this chain as TOKEN/TOKEN; empty: all tokens',
  requestRequired: false,
  inputSchema: tokenOrPoolInput(),
  precheck: target.precheck,
  run,
  health: chainHealth,
});
