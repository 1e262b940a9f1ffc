/** Slot arithmetic of interval mining (chain/pacing.ts), checked against the consensus ASERT it relies on. */
import { describe, expect, test } from '@jest/globals';
import { msToNextSlot, pacedSlotDecision, slotIndexAt, slotTime } from '../../chain/pacing.js';
import { createDevnetParams, DEVNET_POW_LIMIT_BITS } from '../../consensus/params.js';
import { bitsToTarget } from '../../consensus/pow.js';
import { nextBits } from '../../consensus/validate.js';

const G = 1_800_000_000;

describe('slots', () => {
  test('slot k starts at genesis + k·S and covers [start, start + S)', () => {
    expect(slotIndexAt(G * 1000, G, 2)).toBe(0);
    expect(slotIndexAt(G * 1000 + 1999, G, 2)).toBe(0);
    expect(slotIndexAt(G * 1000 + 2000, G, 2)).toBe(1);
    expect(slotIndexAt(G * 1000 - 1, G, 2)).toBe(-1);
    expect(slotTime(5, G, 2)).toBe(G + 10);
  });
  test('the wait to the next slot ends exactly on its boundary, and is never 0', () => {
    expect(msToNextSlot(G * 1000 + 250, G, 1)).toBe(750);
    expect(msToNextSlot(G * 1000, G, 3)).toBe(3000);
    expect(msToNextSlot(G * 1000 + 2999, G, 3)).toBe(1);
    expect(slotIndexAt(G * 1000 + 250 + msToNextSlot(G * 1000 + 250, G, 1), G, 1)).toBe(1);
  });
});

describe('which slots get a block', () => {
  test('a slot the tip already has is skipped (a peer mined it)', () => {
    expect(pacedSlotDecision(G + 10, { height: 5, time: G + 10 }, G + 8, G, 1)).toEqual({ mine: false, time: G + 10, reason: 'tip_has_slot' });
    expect(pacedSlotDecision(G + 10, { height: 5, time: G + 11 }, G + 8, G, 1)).toMatchObject({ mine: false, reason: 'tip_has_slot' });
  });
  test('a slot before median time past + 1 is skipped', () => {
    expect(pacedSlotDecision(G + 10, { height: 5, time: G + 9 }, G + 11, G, 1)).toMatchObject({ mine: false, reason: 'before_median_time' });
  });
  test('block H waits for slot H + 1 (the ASERT schedule); a chain behind schedule mines at once', () => {
    expect(pacedSlotDecision(G + 1, { height: 0, time: G }, G + 1, G, 1)).toMatchObject({ mine: false, reason: 'ahead_of_schedule' });
    expect(pacedSlotDecision(G + 2, { height: 0, time: G }, G + 1, G, 1)).toEqual({ mine: true, time: G + 2 });
    expect(pacedSlotDecision(G + 500, { height: 7, time: G + 8 }, G + 5, G, 1)).toEqual({ mine: true, time: G + 500 });
  });
  test('blocks on the schedule keep consensus ASERT at the easiest bits from block 2 on; block 1 is 2^(−S/halfLife) of it', () => {
    for (const S of [1, 2, 3]) {
      const params = createDevnetParams({ genesisTime: G, genesisBits: DEVNET_POW_LIMIT_BITS, targetSpacing: S });
      // Block 1 (parent genesis): the one block no timestamp can bring to the floor.
      const first = bitsToTarget(nextBits(0, G, params));
      expect(first).toBeLessThan(params.powLimit);
      const ratio = Number((first * 100_000n) / params.powLimit) / 100_000;
      expect(Math.abs(ratio - 2 ** (-S / params.asertHalfLife))).toBeLessThan(0.001);
      // Mine every slot the decision allows for 40 slots: block h's bits come from block h − 1.
      let tip = { height: 0, time: G };
      for (let k = 1; k <= 40; k++) {
        const d = pacedSlotDecision(slotTime(k, G, S), tip, tip.time + 1, G, S);
        if (!d.mine) continue;
        if (tip.height >= 1) expect(nextBits(tip.height, tip.time, params)).toBe(DEVNET_POW_LIMIT_BITS);
        tip = { height: tip.height + 1, time: d.time };
      }
      expect(tip.height).toBe(39);
      // After downtime (behind schedule) the floor holds too.
      expect(nextBits(tip.height, tip.time + 1000 * S, params)).toBe(DEVNET_POW_LIMIT_BITS);
    }
  });
});
