/** Network hashrate estimated from the best chain's recent work. */
import type { ChainReader } from './types.js';

/** Blocks the estimate looks back over. */
export const HASHRATE_WINDOW = 60;

/** Estimated network hashrate (hashes/s): chain work over the last `window` blocks divided by their time span. */
export function estimateHashrate(chain: ChainReader, window = HASHRATE_WINDOW): number {
  const tip = chain.tip;
  const n = Math.min(window, tip.height);
  if (n <= 0) return 0;
  const start = chain.getEntryByHeight(tip.height - n);
  if (!start) return 0;
  const span = tip.header.time - start.header.time;
  if (span <= 0) return 0;
  return Number(tip.chainWork - start.chainWork) / span;
}
