/** native-agent-roster: the registered provider agents (the node's own, `native-node`, and provider agents) with their services and each one's real availability (the health prober's). */
import { formatAmount } from '../consensus/amount.js';
import { defineService } from './define.js';
import { pureHealth } from './health.js';
import { priceFields } from './pricing.js';
import { noInput } from './inputs.js';
import { availabilityOf } from './availability.js';
import type { ServiceContext, ServiceDefinition } from './types.js';

async function run(ctx: ServiceContext) {
  const byAgent = new Map<string, ServiceDefinition[]>();
  for (const def of ctx.registry.list()) {
    const list = byAgent.get(def.providerAgent) ?? [];
    list.push(def);
    byAgent.set(def.providerAgent, list);
  }
  const agents = [...byAgent.entries()]
    .sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]))
    .map(([agent, defs]) => ({
      agentId: agent,
      agentName: agent,
      nodeOperated: defs.every((d) => d.nodeOperated),
      network: ctx.params.network,
      serviceCount: defs.length,
      availableCount: defs.filter((d) => availabilityOf(ctx, d).available).length,
      capabilities: [...new Set(defs.map((d) => d.category))].sort(),
      services: defs.map((d) => ({ serviceId: d.id, name: d.name, category: d.category, ...priceFields(d, ctx.nativeUsd), ...availabilityOf(ctx, d) })),
      ...usageOf(ctx, defs),
    }));
  return {
    network: ctx.params.network,
    agentCount: agents.length,
    agents,
    callStatsTracked: ctx.usage !== undefined,
    healthTracked: ctx.health !== undefined,
    availability: 'available = implemented on this node and not seen down by its health prober (a down service answers 503 before any quote); healthStatus is the prober\'s last status',
    ...(ctx.usage ? {} : { note: 'no settlement ledger runs here: call counts and volumes are null' }),
  };
}

/** Settled calls and volume summed over an agent's services (null without a ledger). */
function usageOf(ctx: ServiceContext, defs: readonly ServiceDefinition[]) {
  if (!ctx.usage) return { calls: null, callsUsdc: null, volumeNative: null, volumeNativeBase: null, volumeUsdc: null };
  let calls = 0;
  let callsUsdc = 0;
  let base = 0n;
  let usdc = 0n;
  for (const d of defs) {
    const v = ctx.usage.volume(d.id);
    calls += v.calls;
    callsUsdc += v.callsUsdc;
    base += v.volumeBase;
    usdc += v.volumeUsdcAtomic;
  }
  return { calls, callsUsdc, volumeNative: formatAmount(base), volumeNativeBase: base.toString(), volumeUsdc: Number(usdc) / 1e6 };
}

/** native-agent-roster. */
export const agentRoster = defineService({
  id: 'native-agent-roster',
  name: 'Agent Roster',
  category: 'search',
  priceBase: 400_000n,
  description: 'registered agents with capabilities, call counts, volume',
  tags: ['agents', 'roster', 'providers', 'capabilities', 'directory', 'search'],
  requestFormat: '',
  requestRequired: false,
  inputSchema: noInput(),
  run,
  health: pureHealth,
});
