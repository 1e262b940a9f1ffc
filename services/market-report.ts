/** native-market-report: a composite markdown report of this chain's market (price, pools, movers, stablecoins, staking, bridges, notable transfers). */
import { defineService } from './define.js';
import { noInput } from './inputs.js';
import { chainHealth } from './health.js';
import { economyOf, formatUnits, round } from './market/economy.js';
import { marketSummary } from './market-summary.js';
import { stableHealth } from './stable-health.js';
import { bridgeStatus } from './bridge-status.js';
import { whaleWatch } from './whale-watch.js';
import type { ServiceContext } from './types.js';


type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Threshold of the report's notable transfers, NATIVE. */
export const REPORT_TRANSFER_THRESHOLD = '100';

async function run(ctx: ServiceContext) {
  const eco = economyOf(ctx);
  const [summary, stables, bridges, whales, staking, pools] = (await Promise.all([
    marketSummary.run!(ctx, ''),
    stableHealth.run!(ctx, ''),
    bridgeStatus.run!(ctx, ''),
    whaleWatch.run!(ctx, REPORT_TRANSFER_THRESHOLD),
    eco.staking(),
    eco.listPools(),
  ])) as [Json, Json, Json, Json, Awaited<ReturnType<typeof eco.staking>>, Awaited<ReturnType<typeof eco.listPools>>];
  // Movers: each pool's price change over its last 24 hourly candles (first open → last close).
  const movers = [];
  for (const p of pools) {
    const cs = await eco.recentCandles(p.id, 24);
    if (!cs.length || cs[0].o === 0) continue;
    movers.push({ pool: p.id, changePct: round(((cs[cs.length - 1].c - cs[0].o) / cs[0].o) * 100, 4), swaps: cs.reduce((s, c) => s + c.n, 0) });
  }
  movers.sort((x, y) => Math.abs(y.changePct) - Math.abs(x.changePct));
  const height = ctx.chain.tip.height;
  const usd = (x: number | null) => (x === null ? 'n/a' : `$${x.toLocaleString('en-US', { maximumFractionDigits: 2 })}`);
  const pct = (x: number | null) => (x === null ? 'n/a' : `${x >= 0 ? '+' : ''}${x}%`);
  const lines = [
    `# Market report — ${ctx.params.network} at height ${height}`,
    '',
    '## Price',
    `NATIVE = ${usd(summary.priceUsd)} (${summary.priceSource === 'pool' ? 'deepest NATIVE/USD-stablecoin pool' : 'genesis reference price'}), 24h ${pct(summary.change24hPct)}. TVL ${usd(summary.tvlUsd)}, 24h volume ${usd(summary.volume24hUsd)} over ${summary.swaps24h} swaps.`,
    '',
    '## Pools',
    '| pool | price | TVL | 24h volume |',
    '|---|---|---|---|',
    ...(summary.topPools as Json[]).map((p) => `| ${p.id} | ${p.price} ${p.priceNote} | ${usd(p.tvlUsd)} | ${usd(p.volume24hUsd)} |`),
    '',
    '## Movers (24h)',
    ...(movers.length ? movers.slice(0, 5).map((m) => `- ${m.pool}: ${pct(m.changePct)} (${m.swaps} swaps)`) : ['- no swaps in the last 24 hours']),
    '',
    '## Stablecoins',
    ...((stables.stablecoins as Json[]).length ? (stables.stablecoins as Json[]).map((s) => `- ${s.symbol}: supply ${s.supply}, backing ${s.backingPct ?? 'n/a'}%, ${s.health}`) : ['- none issued']),
    '',
    '## Staking',
    `- staked ${formatUnits(staking.staked, 8)} NATIVE in ${staking.count} stakes; tiers ${staking.tiers.map((t) => `${t.name} ${t.aprBps / 100}%`).join(', ')}`,
    '',
    '## Bridges',
    `- total custody float ${bridges.totalCustodyFloat} NATIVE`,
    ...(bridges.networks as Json[]).filter((n) => n.inRecords + n.outRecords > 0).map((n) => `- ${n.network}: float ${n.custodyFloat}, ${n.inRecords} in / ${n.outRecords} out`),
    '',
    `## Notable transfers (≥ ${REPORT_TRANSFER_THRESHOLD} NATIVE, last ${whales.window.blocks} blocks)`,
    ...((whales.transfers as Json[]).length ? (whales.transfers as Json[]).slice(0, 10).map((t) => `- ${t.amount} ${t.asset}: ${t.from} → ${t.to} (height ${t.height})`) : ['- none']),
  ];
  return {
    markdown: lines.join('\n'),
    height,
    sections: ['price', 'pools', 'movers', 'stablecoins', 'staking', 'bridges', 'notable transfers'],
    data: { priceUsd: summary.priceUsd, tvlUsd: summary.tvlUsd, volume24hUsd: summary.volume24hUsd, movers: movers.slice(0, 5), stakedNative: formatUnits(staking.staked, 8), notableTransfers: whales.count },
  };
}

/** native-market-report. */
export const marketReport = defineService({
  id: 'native-market-report',
  name: 'Market Report',
  category: 'reports',
  priceBase: 5_000_000n,
  description: 'composite markdown report',
  tags: ['market', 'report', 'markdown', 'summary', 'analysis'],
  requestFormat: '',
  requestRequired: false,
  inputSchema: noInput(),
  run,
  health: chainHealth,
});
