/**
 * `unstake`: the owner closes a stake at or after its unlock height and receives the amount
 * plus the reward accrued per block since it started, ⌊amount · aprBps · blocks /
 * (10000 · blocksPerYear)⌋, minted (counted in the supply, capped by maxSupply).
 * Payload: stakeId(32) (the staking tx id).
 */
import { Writer, decodeAll } from '../codec.js';
import { EconomyErrorCode } from '../errors.js';
import { toHex, bytesEqual } from '../hash.js';
import { decodeStake, encodeStakeTotals, getStakeTotals, stakeKey, STAKE_TOTALS_KEY } from '../economyState.js';
import { credit, NATIVE } from '../ledger.js';
import { SUPPLY_KEY } from '../state.js';
import { TxType } from '../tx.js';
import { refuse } from './economyRules.js';
import { stakeReward } from './stake.js';
import type { TxTypeModule } from './types.js';

/** Payload of an unstake. */
export interface UnstakePayload {
  readonly stakeId: Uint8Array;
}

/** The unstake type module. */
export const unstake: TxTypeModule<UnstakePayload> = {
  type: TxType.unstake,
  name: 'unstake',
  encodePayload(p) {
    return new Writer(32).raw(p.stakeId).finish();
  },
  decodePayload(bytes) {
    return decodeAll(bytes, (r) => ({ stakeId: r.raw(32).slice() }));
  },
  validatePayload() {},
  apply(state, tx, p, ctx) {
    const raw = state.get(stakeKey(p.stakeId));
    if (!raw) throw refuse(EconomyErrorCode.UNKNOWN_STAKE, `no open stake ${toHex(p.stakeId)}`);
    const s = decodeStake(raw);
    if (!bytesEqual(s.owner, tx.from)) throw refuse(EconomyErrorCode.NOT_STAKE_OWNER, 'only the owner of a stake can unstake it');
    if (ctx.height < s.unlockHeight) throw refuse(EconomyErrorCode.STAKE_LOCKED, `stake is locked until height ${s.unlockHeight} (block is ${ctx.height})`, { unlockHeight: s.unlockHeight });
    const tier = ctx.params.staking.aprTiers[s.tier];
    const supply = state.getSupply();
    const room = ctx.params.reward.maxSupply > supply.minted ? ctx.params.reward.maxSupply - supply.minted : 0n;
    const accrued = stakeReward(s.amount, tier?.aprBps ?? 0, ctx.height - s.startHeight, ctx.params);
    const reward = accrued < room ? accrued : room;
    state.set(stakeKey(p.stakeId), null);
    credit(state, tx.from, NATIVE, s.amount + reward);
    if (reward > 0n) state.setSupply({ ...supply, minted: supply.minted + reward });
    const t = getStakeTotals(state);
    const locked = (tier?.minLockDays ?? 0) > 0;
    state.set(STAKE_TOTALS_KEY, encodeStakeTotals({ staked: t.staked - s.amount, locked: locked ? t.locked - s.amount : t.locked, count: t.count - 1, rewardsPaid: t.rewardsPaid + reward }));
    ctx.emit?.({ kind: 'unstake', id: p.stakeId, owner: tx.from, amount: s.amount, reward });
  },
  touchedKeys(_tx, p) {
    return [stakeKey(p.stakeId), STAKE_TOTALS_KEY, SUPPLY_KEY];
  },
  toJson(p) {
    return { stakeId: toHex(p.stakeId) };
  },
};
