/** native-stable-health: collateral backing %, redeemable supply and a health flag for every on-chain USD stablecoin. */
import { defineService } from './define.js';
import { chainHealth } from './health.js';
import { noInput } from './inputs.js';
import { economyOf, formatUnits, round } from './market/economy.js';
import type { ServiceContext } from './types.js';

async function run(ctx: ServiceContext) {
  const eco = economyOf(ctx);
  const tokens = (await eco.listTokens({ includeHidden: true })).filter((t) => t.kind === 'usd-stable');
  const stablecoins = [];
  for (const t of tokens) {
    const h = (await eco.stableHealth(t.symbol))!;
    const supply = BigInt(h.supply);
    const value = BigInt(h.collateralValue);
    // Redemption pays par at the on-chain price, capped at the pro-rata share: only the part of the
    // supply the collateral covers at par is redeemable at par.
    const redeemable = supply < value ? supply : value;
    stablecoins.push({
      symbol: t.symbol,
      name: t.name,
      decimals: t.decimals,
      supply: formatUnits(supply, t.decimals),
      supplyUnits: h.supply,
      collateralNative: formatUnits(BigInt(h.collateral), 8),
      collateralBase: h.collateral,
      collateralValueUsd: formatUnits(value, t.decimals),
      backingPct: h.ratio === null ? null : round(h.ratio * 100, 4),
      redeemableSupply: formatUnits(redeemable, t.decimals),
      redeemableUnits: redeemable.toString(),
      health: h.health,
      minRatioPct: round(h.minRatio * 100, 4),
      priceSource: h.priceSource,
      frozen: t.frozen,
      holders: t.holders,
    });
  }
  return {
    height: ctx.chain.tip.height,
    count: stablecoins.length,
    stablecoins,
    method:
      'backing % = collateral (NATIVE) valued at the coin\'s own NATIVE pool spot price (the reference price without that pool) / supply; healthy at or above the minimum mint ratio, at-risk between 100% and it, under-collateralized below 100%; redeemable supply = the supply the collateral covers at par',
    ...(stablecoins.length === 0 ? { note: 'no USD stablecoin has been issued on this chain' } : {}),
  };
}

/** native-stable-health. */
export const stableHealth = defineService({
  id: 'native-stable-health',
  name: 'Stablecoin Health',
  category: 'audit',
  priceBase: 1_500_000n,
  description: 'collateral backing %, redeemable supply, health flag per on-chain stablecoin',
  tags: ['stablecoin', 'collateral', 'backing', 'redeemable', 'health', 'audit'],
  requestFormat: '',
  requestRequired: false,
  inputSchema: noInput(),
  run,
  health: chainHealth,
});
