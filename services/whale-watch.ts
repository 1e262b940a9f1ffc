/** native-whale-watch: NATIVE and token transfers at or above a threshold (NATIVE value at the time of the transfer) over the last 1,200 blocks. */
import { defineService } from './define.js';
import { nativeAmountInput } from './inputs.js';
import { NATIVE } from '../consensus/ledger.js';
import { chainHealth } from './health.js';
import { addressOf, economyOf, formatUnits, parseUnits, round } from './market/economy.js';
import { createPastPrices } from './market/pastPrices.js';
import type { ServiceContext } from './types.js';


/** Default threshold, NATIVE (a token transfer counts at its NATIVE-pool value). */
export const WHALE_DEFAULT_THRESHOLD = '1000';
/** Blocks scanned back from the tip (one hour at 3 s). */
export const WHALE_WINDOW_BLOCKS = 1_200;
/** Most transfers listed (the largest). */
export const WHALE_MAX_LISTED = 100;

async function run(ctx: ServiceContext, input: unknown) {
  const eco = economyOf(ctx);
  const text = String(input ?? '').trim().replace(/\s*native$/i, '') || WHALE_DEFAULT_THRESHOLD;
  const threshold = parseUnits(text, 8)!;
  const tip = ctx.chain.tip.height;
  const fromHeight = Math.max(0, tip - WHALE_WINDOW_BLOCKS + 1);
  const [rows, records, tokens] = await Promise.all([eco.transfers({ fromHeight, toHeight: tip }), eco.poolRecords(), eco.tokenRecords()]);
  // Each transfer at the price of its time (the chain's swap log), not today's.
  const priceAt = createPastPrices(eco, records);
  const large = [];
  let unpriced = 0;
  for (const t of rows) {
    const per = await priceAt(t.asset, t.height);
    if (per === undefined) {
      unpriced++;
      continue;
    }
    const valueBase = Number(t.amount) * per;
    if (valueBase < Number(threshold)) continue;
    large.push({ t, valueNative: round(valueBase / 1e8, 8) });
  }
  large.sort((x, y) => y.valueNative - x.valueNative || y.t.height - x.t.height);
  // Only the listed ones are formatted (addresses are the costly part of a wide window).
  const listed = large.slice(0, WHALE_MAX_LISTED).map(({ t, valueNative }) => {
    const d = t.asset === NATIVE ? 8 : (tokens.get(t.asset)?.decimals ?? 0);
    return { height: t.height, time: t.time, tx: t.tx, asset: t.asset, from: addressOf(t.from, ctx.params.hrp), to: addressOf(t.to, ctx.params.hrp), amount: formatUnits(BigInt(t.amount), d), valueNative };
  });
  return {
    threshold: formatUnits(threshold, 8),
    thresholdUnit: 'NATIVE',
    defaultThreshold: WHALE_DEFAULT_THRESHOLD,
    window: { fromHeight, toHeight: tip, blocks: tip - fromHeight + 1 },
    scanned: rows.length,
    count: large.length,
    transfers: listed,
    truncated: large.length > WHALE_MAX_LISTED,
    unpricedTokenTransfers: unpriced,
    method: 'NATIVE and token transfers in the window; a token transfer is valued at the price of its time: its NATIVE pool\'s reserve ratio just before the first swap at or after the transfer\'s height, from the chain\'s swap log (today\'s ratio when no swap came since); a token without a NATIVE pool then is counted as unpriced, not listed',
  };
}

/** native-whale-watch. */
export const whaleWatch = defineService({
  id: 'native-whale-watch',
  name: 'Whale Watch',
  category: 'whale-watch',
  priceBase: 2_000_000n,
  description: 'large-transfer scan over blocks',
  tags: ['whale', 'large-transfer', 'scan', 'blocks', 'alerts'],
  requestFormat: 'threshold in NATIVE, e.g. 10000; empty: the default threshold',
  requestRequired: false,
  inputSchema: nativeAmountInput(true, 'Threshold in NATIVE (positive decimal, at most 8 decimals).'),
  run,
  health: chainHealth,
});
