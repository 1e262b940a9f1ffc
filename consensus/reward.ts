/** Block subsidy schedule and the fee split between burn and miner. */
import type { ChainParams } from './params.js';

/** Scheduled subsidy of the block at `height` (base units), before the max-supply cap. Genesis has none. */
export function scheduledSubsidy(height: number, params: ChainParams): bigint {
  if (height <= 0) return 0n;
  const halvings = Math.floor((height - 1) / params.reward.halvingInterval);
  if (halvings >= 64) return 0n;
  return params.reward.initial >> BigInt(halvings);
}

/** Subsidy actually paid at `height` given what was minted before: never exceeds the max supply. */
export function blockSubsidy(height: number, mintedBefore: bigint, params: ChainParams): bigint {
  const scheduled = scheduledSubsidy(height, params);
  const room = params.reward.maxSupply - mintedBefore;
  if (room <= 0n) return 0n;
  return scheduled < room ? scheduled : room;
}

/** Splits total fees into the burned part (rounded down) and the miner's part. */
export function splitFees(totalFees: bigint, params: ChainParams): { burned: bigint; miner: bigint } {
  const burned = (totalFees * BigInt(params.burnShareBps)) / 10_000n;
  return { burned, miner: totalFees - burned };
}
