/**
 * `stake`: lock NATIVE in one of the APR tiers of the chain parameters. The stake is recorded
 * under the tx id; it unlocks `ceil(minLockDays · 86400 / targetSpacing)` blocks later.
 * Payload: u8 tier ‖ varint amount.
 */
import { Writer, decodeAll } from '../codec.js';
import { EconomyErrorCode } from '../errors.js';
import { encodeStake, encodeStakeTotals, getStakeTotals, stakeKey, STAKE_TOTALS_KEY } from '../economyState.js';
import { checkedAdd, debit, NATIVE } from '../ledger.js';
import { TxType } from '../tx.js';
import { reject, requirePositive } from './economyRules.js';
import type { ChainParams } from '../params.js';
import type { TxTypeModule } from './types.js';

/** Payload of a stake. */
export interface StakePayload {
  /** Index into `params.staking.aprTiers`. */
  readonly tier: number;
  /** NATIVE base units, > 0. */
  readonly amount: bigint;
}

/** Blocks a tier locks a stake for. */
export function lockBlocks(params: ChainParams, tier: number): number {
  return Math.ceil((params.staking.aprTiers[tier].minLockDays * 86_400) / params.targetSpacing);
}

/** Blocks in a year (365 days) at the target spacing: the APR's time base. */
export function blocksPerYear(params: ChainParams): bigint {
  return BigInt(Math.floor((365 * 86_400) / params.targetSpacing));
}

/** Reward of a stake held `blocks` blocks: ⌊amount · aprBps · blocks / (10000 · blocksPerYear)⌋. */
export function stakeReward(amount: bigint, aprBps: number, blocks: number, params: ChainParams): bigint {
  return (amount * BigInt(aprBps) * BigInt(blocks)) / (10_000n * blocksPerYear(params));
}

/** The stake type module. */
export const stake: TxTypeModule<StakePayload> = {
  type: TxType.stake,
  name: 'stake',
  encodePayload(p) {
    return new Writer(16).u8(p.tier).varint(p.amount).finish();
  },
  decodePayload(bytes) {
    return decodeAll(bytes, (r) => ({ tier: r.u8(), amount: r.varint() }));
  },
  validatePayload(p, _tx, params) {
    if (p.tier >= params.staking.aprTiers.length) throw reject(EconomyErrorCode.BAD_TIER, `no staking tier ${p.tier} (tiers 0-${params.staking.aprTiers.length - 1})`);
    requirePositive(p.amount, 'stake amount');
  },
  apply(state, tx, p, ctx) {
    debit(state, tx.from, NATIVE, p.amount, 'stake amount');
    const unlockHeight = ctx.height + lockBlocks(ctx.params, p.tier);
    state.set(stakeKey(ctx.txId), encodeStake({ owner: tx.from, amount: p.amount, tier: p.tier, startHeight: ctx.height, unlockHeight }));
    const t = getStakeTotals(state);
    const locked = ctx.params.staking.aprTiers[p.tier].minLockDays > 0;
    state.set(STAKE_TOTALS_KEY, encodeStakeTotals({ ...t, staked: checkedAdd(t.staked, p.amount, 'staked total'), locked: locked ? t.locked + p.amount : t.locked, count: t.count + 1 }));
    ctx.emit?.({ kind: 'stake', id: ctx.txId, owner: tx.from, amount: p.amount, tier: p.tier, unlockHeight });
  },
  touchedKeys() {
    // The stake key is new (the tx id), so absent from any prefetched view: only the totals.
    return [STAKE_TOTALS_KEY];
  },
  toJson(p, params) {
    return { tier: p.tier, tierName: params.staking.aprTiers[p.tier]?.name, amount: p.amount.toString() };
  },
};
