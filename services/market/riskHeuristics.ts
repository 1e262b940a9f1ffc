/**
 * The on-chain heuristics of native-risk-score over a wallet's activity entries (chain/economyIndex.ts),
 * pure so they can be checked by hand. Definitions (also in docs/agents-guide.md):
 * - wash trading: round trips — a swap followed, within WASH_WINDOW_BLOCKS, by the opposite swap in
 *   the same pool, or a transfer to a counterparty answered by a transfer back of the same asset —
 *   at least WASH_MIN_ROUND_TRIPS of them, with at most WASH_MAX_COUNTERPARTIES distinct pools/counterparties.
 * There is no flash-loan heuristic: this chain has no flash loans (no contracts, no borrowing within
 * a transaction), and opposite trades in one block are ordinary round trips.
 */

/** Blocks within which a reversal counts as a round trip (5 minutes at 3 s). */
export const WASH_WINDOW_BLOCKS = 100;
/** Round trips needed for the wash-trading flag. */
export const WASH_MIN_ROUND_TRIPS = 3;
/** Most distinct pools/counterparties of the round trips for the flag ("few counterparties"). */
export const WASH_MAX_COUNTERPARTIES = 3;

/** An activity entry as the index stores it (the fields the heuristics read). */
export type ActivityEntry = Record<string, unknown> & { height: number; kind: string };

/** Round trips of `entries` (any order). */
export function washTrading(entries: readonly ActivityEntry[]) {
  const sorted = [...entries].sort((a, b) => a.height - b.height);
  const trips: { kind: 'swap' | 'transfer'; with: string; heights: [number, number] }[] = [];
  const used = new Set<number>();
  sorted.forEach((a, i) => {
    if (used.has(i)) return;
    for (let j = i + 1; j < sorted.length && sorted[j].height - a.height <= WASH_WINDOW_BLOCKS; j++) {
      if (used.has(j)) continue;
      const b = sorted[j];
      const swapBack = a.kind === 'swap' && b.kind === 'swap' && a.pool === b.pool && a.assetIn === b.assetOut && a.assetOut === b.assetIn;
      const sendBack = a.kind === 'transfer_out' && b.kind === 'transfer_in' && a.counterparty === b.counterparty && a.asset === b.asset;
      if (swapBack || sendBack) {
        used.add(i).add(j);
        trips.push({ kind: swapBack ? 'swap' : 'transfer', with: String(swapBack ? a.pool : a.counterparty), heights: [a.height, b.height] });
        return;
      }
    }
  });
  const counterparties = new Set(trips.map((t) => t.with));
  const flagged = trips.length >= WASH_MIN_ROUND_TRIPS && counterparties.size <= WASH_MAX_COUNTERPARTIES;
  return { flagged, roundTrips: trips.length, counterparties: [...counterparties], examples: trips.slice(0, 5) };
}
