/** native-staking-rewards: daily, monthly and yearly rewards of a stake across the consensus APR tiers. */
import { COIN } from '../consensus/params.js';
import { defineService } from './define.js';
import { pureHealth } from './health.js';
import { amountFields, parseNative } from './format.js';
import { nativeAmountInput } from './inputs.js';
import { ServiceError, type ServiceContext } from './types.js';

/** Days per year and months per year of the projections (simple, non-compounding interest). */
const DAYS_PER_YEAR = 365n;
const MONTHS_PER_YEAR = 12n;

async function run(ctx: ServiceContext, input: unknown) {
  const text = String(input).replace(/\s*native$/i, '');
  const amount = parseNative(text);
  if (amount === undefined || amount <= 0n) throw new ServiceError('invalid_amount', `amount "${text}" is not a positive NATIVE decimal`);
  const tiers = ctx.params.staking.aprTiers.map((t) => {
    // Rewards in base units, rounded down: yearly = amount × bps / 10 000, daily = yearly / 365, monthly = yearly / 12.
    const yearlyExact = amount * BigInt(t.aprBps);
    return {
      tier: t.name,
      minLockDays: t.minLockDays,
      aprBps: t.aprBps,
      apr: `${(t.aprBps / 100).toString()}%`,
      ...amountFields('daily', yearlyExact / (10_000n * DAYS_PER_YEAR)),
      ...amountFields('monthly', yearlyExact / (10_000n * MONTHS_PER_YEAR)),
      ...amountFields('yearly', yearlyExact / 10_000n),
      ...amountFields('totalAfterYear', amount + yearlyExact / 10_000n),
    };
  });
  const eco = ctx.chain?.economy;
  const chainStaking = eco ? await eco.staking() : undefined;
  return {
    ...amountFields('amount', amount),
    network: ctx.params.network,
    tiers,
    method: 'simple interest, no compounding: yearly = amount × APR; monthly = yearly / 12; daily = yearly / 365; each rounded down to whole base units (1 NATIVE = 100000000)',
    // Staking is a consensus transaction type (stake / unstake) from genesis on.
    stakingActive: true,
    note: 'projection from the consensus APR tiers; a stake accrues amount × APR × blocks / blocks per year per block held (consensus/txTypes/stake.ts), paid at unstake',
    ...(chainStaking
      ? { chain: { height: ctx.chain.tip.height, ...amountFields('staked', chainStaking.staked), ...amountFields('locked', chainStaking.locked), stakes: chainStaking.count, ...amountFields('rewardsPaid', chainStaking.rewardsPaid) } }
      : {}),
    baseUnitsPerNative: COIN.toString(),
  };
}

/** native-staking-rewards. */
export const stakingRewards = defineService({
  id: 'native-staking-rewards',
  name: 'Staking Rewards Calculator',
  category: 'staking-calculator',
  priceBase: 1_200_000n,
  description: 'daily/monthly/yearly rewards across consensus APR tiers',
  tags: ['staking', 'rewards', 'apr', 'yield', 'calculator', 'native'],
  requestFormat: 'positive amount of NATIVE to stake, a decimal with at most 8 decimals, e.g. 1000 or 2500.5',
  requestRequired: true,
  inputSchema: nativeAmountInput(true, 'Positive amount of NATIVE, at most 8 decimals (e.g. 1000 or 2500.5).'),
  run,
  health: pureHealth,
});
