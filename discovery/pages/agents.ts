/**
 * `/agents`: the node itself (`native-node`) and the provider agents registered on chain, with
 * their capabilities, listed services, settled calls and volume — HTML for browsers, JSON for
 * `Accept: application/json`.
 */
import { formatAmount } from '../../consensus/amount.js';
import type { HealthReason, ServiceDefinition } from '../../services/types.js';
import { PATHS, dollarText, healthReasonOf, provenFields, type CatalogSnapshot } from '../catalog.js';
import { categoryLabel, esc, int, renderPage } from './layout.js';

/** One provider agent and its totals. */
export interface AgentView {
  agentId: string;
  agentName: string;
  nodeOperated: boolean;
  serviceCount: number;
  activeCount: number;
  capabilities: string[];
  /** Registered agents: their address, description and whether they poll their inbox now. */
  address?: string;
  description?: string;
  online?: boolean;
  provenCalls: number;
  provenCallsUsdc: number;
  provenVolumeAman: number;
  provenVolumeBase: string;
  provenVolumeUsdc: number;
  services: { serviceId: string; name: string; category: string; healthStatus: string; healthReason: HealthReason | null; endpoint: string }[];
}

/** The agents of the snapshot's catalog, most services first. */
export function listAgents(snap: CatalogSnapshot): AgentView[] {
  const byAgent = new Map<string, ServiceDefinition[]>();
  // Registered agents are listed even when none of their services is sold now.
  for (const a of snap.agents ?? []) byAgent.set(a.name, []);
  for (const d of snap.services) {
    const list = byAgent.get(d.providerAgent) ?? [];
    list.push(d);
    byAgent.set(d.providerAgent, list);
  }
  return [...byAgent.entries()]
    .sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]))
    .map(([agent, defs]) => {
      let calls = 0;
      let callsUsdc = 0;
      let base = 0n;
      let usdc = 0n;
      for (const d of defs) {
        const p = provenFields(snap.usage, d.id);
        calls += p.provenCalls;
        callsUsdc += p.provenCallsUsdc;
        base += BigInt(p.provenVolumeBase);
        usdc += BigInt(p.provenVolumeUsdcAtomic);
      }
      const registered = snap.agents?.find((a) => a.name === agent);
      return {
        agentId: agent,
        agentName: agent,
        nodeOperated: !registered && defs.every((d) => d.nodeOperated),
        serviceCount: defs.length,
        activeCount: defs.filter((d) => snap.health.get(d.id).status === 'active').length,
        capabilities: [...new Set([...(registered?.capabilities ?? []), ...defs.map((d) => d.category)])].sort(),
        ...(registered ? { address: registered.address, description: registered.description, online: registered.online } : {}),
        provenCalls: calls,
        provenCallsUsdc: callsUsdc,
        provenVolumeAman: Number(base) / 1e8,
        provenVolumeBase: base.toString(),
        provenVolumeUsdc: Number(usdc) / 1e6,
        services: defs.map((d) => {
          const h = snap.health.get(d.id);
          return { serviceId: d.id, name: d.name, category: d.category, healthStatus: h.status, healthReason: healthReasonOf(h), endpoint: `${snap.baseUrl}/api/x402/${d.id}` };
        }),
      };
    });
}

/** `GET /agents` with `Accept: application/json`. */
export function agentsJson(snap: CatalogSnapshot): Record<string, unknown> {
  const agents = listAgents(snap);
  return { network: snap.network, chainId: snap.chainId, updatedAt: snap.now, agentCount: agents.length, agents };
}

/** `GET /agents` for browsers. */
export function renderAgentsPage(snap: CatalogSnapshot): string {
  const agents = listAgents(snap);
  const rows = agents
    .map(
      (a) => `<section aria-labelledby="agent-${esc(a.agentId)}">
<h2 id="agent-${esc(a.agentId)}">${esc(a.agentName)}</h2>
<table>
<caption class="muted">${esc(a.agentName)} in figures</caption>
<tbody>
<tr><th scope="row">Operated by</th><td>${a.nodeOperated ? 'this node' : `a provider agent${a.address ? ` <code>${esc(a.address)}</code>, ${a.online ? 'online' : 'offline'}` : ''}`}</td></tr>
${a.description ? `<tr><th scope="row">About</th><td>${esc(a.description)}</td></tr>` : ''}
<tr><th scope="row">Services</th><td>${int(a.serviceCount)} (${int(a.activeCount)} active)</td></tr>
<tr><th scope="row">Capabilities</th><td>${a.capabilities.map((c) => esc(categoryLabel(c))).join(', ')}</td></tr>
<tr><th scope="row">Settled calls</th><td>${int(a.provenCalls)} native (${esc(formatAmount(BigInt(a.provenVolumeBase)))} NATIVE), ${int(a.provenCallsUsdc)} USDC (${esc(dollarText(BigInt(Math.round(a.provenVolumeUsdc * 1e6))))})</td></tr>
</tbody>
</table>
<details><summary>Its services</summary>
<ul>${a.services.map((s) => `<li><a href="${esc(PATHS.marketplace)}#svc-${esc(s.serviceId)}">${esc(s.name)}</a> <code>${esc(s.serviceId)}</code> <span class="health health-${esc(s.healthStatus)}">${esc(s.healthStatus)}</span>${s.healthReason ? ` <span class="health-reason" data-code="${esc(s.healthReason.code)}">${esc(s.healthReason.message)}</span>` : ''}</li>`).join('')}</ul>
</details>
</section>`,
    )
    .join('\n');
  const body = `<h1>Agents</h1>
<p class="lead">The node itself and the provider agents registered on chain, with the services this node sells for them (<a href="${esc(PATHS.join)}">sell yours</a>). The same list as JSON: <code>curl -H 'accept: application/json' ${esc(snap.baseUrl)}${esc(PATHS.agents)}</code>.</p>
${rows}`;
  return renderPage({ title: 'Agents · native-node x402 services', description: 'Provider agents and their paid services.', current: 'agents', snap, body });
}
