/**
 * Slot arithmetic of interval mining (`--block-time`, chain/pacedMiner.ts). Pure: clock readings
 * and the tip come in as arguments.
 *
 * Slot k of a paced devnet starts at `genesisTime + k·S` seconds (wall clock) and a block mined
 * in it carries that time. Which slots get a block (`pacedSlotDecision`):
 * - not one the tip already has (its time is the slot's or later, e.g. a peer's block);
 * - not one before the median-time-past rule allows (MTP + 1);
 * - not one ahead of the ASERT schedule. aserti3-2d anchored at genesis (with genesis's own time
 *   as the anchor's parent time, consensus/asert.ts) requires the block after height h at the
 *   anchor's target exactly when block h's time is at least `genesisTime + (h + 1)·S`; so block
 *   H waits for slot H + 1. A chain that never runs ahead stays at the easiest target (ASERT
 *   clamps a chain behind schedule to it). Block 1 is the exception no timestamp can mend: its
 *   parent is genesis, one spacing "early" by that rule, so its target is 2^(−S/halfLife) of the
 *   easiest (S = 1, half-life 120 s: 0.6 % harder), and every later block is at the easiest.
 */

/** Milliseconds from `nowMs` to the start of the next slot (> 0). */
export function msToNextSlot(nowMs: number, genesisTime: number, spacing: number): number {
  const next = slotIndexAt(nowMs, genesisTime, spacing) + 1;
  return Math.max(1, (genesisTime + next * spacing) * 1000 - nowMs);
}

/** The slot whose start is the latest at or before `nowMs` (negative before genesis). */
export function slotIndexAt(nowMs: number, genesisTime: number, spacing: number): number {
  return Math.floor((nowMs / 1000 - genesisTime) / spacing);
}

/** Start of slot `k`, Unix seconds (the time of a block mined in it). */
export function slotTime(k: number, genesisTime: number, spacing: number): number {
  return genesisTime + k * spacing;
}

/** What the paced miner does in a slot. */
export type PacedSlotDecision =
  | { readonly mine: true; readonly time: number }
  | { readonly mine: false; readonly time: number; readonly reason: 'tip_has_slot' | 'before_median_time' | 'ahead_of_schedule' };

/**
 * Whether to mine in the slot starting at `time` on top of `tip` (see module comment);
 * `minTime` is the median-time-past rule's earliest block time (MTP + 1).
 */
export function pacedSlotDecision(time: number, tip: { readonly height: number; readonly time: number }, minTime: number, genesisTime: number, spacing: number): PacedSlotDecision {
  if (tip.time >= time) return { mine: false, time, reason: 'tip_has_slot' };
  if (time < minTime) return { mine: false, time, reason: 'before_median_time' };
  if (time < genesisTime + (tip.height + 2) * spacing) return { mine: false, time, reason: 'ahead_of_schedule' };
  return { mine: true, time };
}
