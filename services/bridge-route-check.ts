/** native-bridge-route-check: feasibility, estimated time and fees of `source-destination-amount` through this chain's bridge vaults, from the bridge records and the block time. */
import { BRIDGE_NETWORK_NAMES } from '../consensus/params.js';
import { defineService } from './define.js';
import { chainHealth } from './health.js';
import { economyOf, formatUnits, parseUnits, round, servable, Unservable } from './market/economy.js';
import type { ServiceContext } from './types.js';


/** Name of this chain as a route end. */
const HOME = 'native';
/** Records read per network to estimate the authority's recording cadence. */
export const ROUTE_RECORD_SAMPLE = 50;

async function leg(ctx: ServiceContext, network: string, direction: 'in' | 'out', amount: bigint) {
  const eco = economyOf(ctx);
  const net = (await eco.bridgeNetworks()).find((n) => n.name === network)!;
  const recs = (await eco.bridgeRecords(network, { limit: ROUTE_RECORD_SAMPLE })) as { height: number; direction: string }[];
  const moved = BigInt(net.inAmount) + BigInt(net.outAmount);
  const feeRate = moved > 0n ? Number(net.fees) / Number(moved) : null;
  const float = BigInt(net.float);
  const problems: string[] = [];
  if (!net.vault) problems.push(`the ${network} vault is not set on this chain`);
  if (direction === 'out' && amount > float) problems.push(`the ${network} vault's custody float is ${formatUnits(float, 8)} NATIVE, below ${formatUnits(amount, 8)} NATIVE`);
  // Cadence: blocks between the sampled records (newest first) → average wait for the authority to record, in seconds.
  const heights = recs.map((r) => r.height);
  const gaps = heights.length >= 2 ? (heights[0] - heights[heights.length - 1]) / (heights.length - 1) : null;
  const spacing = ctx.params.targetSpacing;
  const recordWaitSeconds = gaps === null ? null : round(gaps * spacing, 1);
  return {
    network,
    direction,
    vault: net.vault || null,
    custodyFloat: formatUnits(float, 8),
    records: { in: net.inCount, out: net.outCount, sampled: recs.length },
    feeRatePct: feeRate === null ? null : round(feeRate * 100, 6),
    // Exact: ⌈amount · fees / volume⌉.
    estimatedFee: moved === 0n ? null : formatUnits((amount * BigInt(net.fees) + moved - 1n) / moved, 8),
    estimatedSeconds: (recordWaitSeconds ?? 0) + spacing,
    timeBasis: recordWaitSeconds === null ? `one block (${spacing} s); too few records to measure the authority's cadence` : `average gap between the last ${recs.length} records (${recordWaitSeconds} s) plus one block (${spacing} s)`,
    feasible: problems.length === 0,
    problems,
  };
}

/** The route's ends and amount, or why it is no route of this chain's bridge (400 before any quote: a network it does not bridge, the same network twice, no amount). */
const route = servable(async (ctx: ServiceContext, input: unknown) => {
  const [srcRaw, dstRaw, amountRaw] = String(input).split('-');
  const [src, dst] = [srcRaw.toLowerCase(), dstRaw.toLowerCase()];
  const names = ctx.params.economy.bridgeNetworks.map((n) => n.name);
  const unknown = [src, dst].filter((n) => n !== HOME && !names.includes(n));
  if (unknown.length) return new Unservable('unknown_network', `${unknown.join(' and ')} ${unknown.length > 1 ? 'are not bridge networks' : 'is not a bridge network'} of this chain (networks: ${[HOME, ...names].join(', ')})`);
  if (src === dst) return new Unservable('same_network', 'source and destination are the same network');
  const amount = parseUnits(amountRaw, 8);
  if (amount === undefined) return new Unservable('too_many_decimals', 'the amount is NATIVE: at most 8 decimals');
  if (amount === 0n) return new Unservable('zero_amount', 'the amount is zero');
  return { src, dst, amountRaw, amount, names };
});

async function run(ctx: ServiceContext, input: unknown) {
  economyOf(ctx);
  const { src, dst, amountRaw, amount, names } = await route.resolved(ctx, input);
  const base = { source: src, destination: dst, amount: amountRaw, unit: 'NATIVE', networks: [HOME, ...names], height: ctx.chain.tip.height };
  const legs = [];
  if (src !== HOME) legs.push(await leg(ctx, src, 'in', amount));
  if (dst !== HOME) legs.push(await leg(ctx, dst, 'out', amount));
  const reasons = legs.flatMap((l) => l.problems);
  const fees = legs.every((l) => l.estimatedFee !== null) ? formatUnits(legs.reduce((s, l) => s + (parseUnits(l.estimatedFee!, 8) ?? 0n), 0n), 8) : null;
  return {
    ...base,
    feasible: reasons.length === 0,
    reasons,
    route: [src, ...(src !== HOME && dst !== HOME ? [HOME] : []), dst].join(' -> '),
    legs,
    estimatedFee: fees,
    estimatedSeconds: legs.reduce((s, l) => s + l.estimatedSeconds, 0),
    method: 'every route passes through this chain: in through the source vault, out of the destination vault (limited by its custody float); fee rate per network = recorded fees / recorded volume; time = the bridge authority\'s recording cadence from the records plus one block of this chain; the external chains\' own confirmation times are not included',
  };
}

/** native-bridge-route-check. */
export const bridgeRouteCheck = defineService({
  id: 'native-bridge-route-check',
  name: 'Bridge Route Check',
  category: 'bridge',
  priceBase: 500_000_000n,
  description: 'feasibility, estimated time and fees of a cross-chain route',
  tags: ['bridge', 'route', 'cross-chain', 'fees', 'feasibility'],
  requestFormat: `source chain, destination chain and a positive NATIVE amount joined by hyphens, e.g. "ethereum-solana-100"; chains: native (this chain) and ${BRIDGE_NETWORK_NAMES.join(', ')}`,
  requestRequired: false,
  needsInput: true,
  inputSchema: { type: 'string', maxLength: 80, pattern: '^[A-Za-z0-9]{2,20}-[A-Za-z0-9]{2,20}-[0-9]{1,15}(\\.[0-9]{1,18})?$', description: 'source-destination-amount, e.g. ethereum-solana-100.' },
  precheck: route.precheck,
  run,
  health: chainHealth,
});
