/** native-agent-roster: the registered provider agents (today only the node's own, `native-node`) with their services. */
import { formatAmount } from '../consensus/amount.js';
import { defineService } from './define.js';
import { pureHealth } from './health.js';
import { priceFields } from './pricing.js';
import { noInput } from './inputs.js';
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
      availableCount: defs.filter((d) => typeof d.run === 'function').length,
      capabilities: [...new Set(defs.map((d) => d.category))].sort(),
      services: defs.map((d) => ({ serviceId: d.id, name: d.name, category: d.category, ...priceFields(d, ctx.nativeUsd), available: typeof d.run === 'function' })),
      ...usageOf(ctx, defs),
    }));
  return {
    network: ctx.params.network,
    agentCount: agents.length,
    agents,
    callStatsTracked: ctx.usage !== undefined,
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
