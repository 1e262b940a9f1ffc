/**
 * The live registry: the node's own services plus every provider agent's service that
 * the chain says is approved and not retired (so not suspended, rejected or pending), rebuilt
 * from chain state whenever a block is connected or disconnected. Every node of the network
 * reads the same state, so every node sells the same provider services.
 *
 * A provider service is a `ServiceDefinition` with `nodeOperated: false` and `providerAgent` =
 * the agent's name; its `run` hands the job to the provider inbox (a port: `ProviderJobs`) and
 * waits for the agent's answer within the service's registered timeout. It is available (quoted,
 * sold) only while its agent polls the inbox; otherwise it answers 503 before any payment and
 * reports `down`. After a node restart, a payment already made for a service whose agent was
 * online before the restart is still served during the agent's start-up grace (`isHonorable`):
 * the job waits in the inbox for the agent's next poll instead of being refunded at once.
 */
import { encodeAddress } from '../consensus/address.js';
import { fromHex, toHex } from '../consensus/hash.js';
import {
  decodeAgent,
  decodeService,
  getAddressLabel,
  isServiceListed,
  labelKey,
  REGISTRY_PREFIXES,
  serviceStatusName,
  type AddressLabel,
  type AgentRecord,
  type ServiceRecord,
} from '../consensus/registryState.js';
import type { StateView } from '../consensus/state.js';
import type { Logger } from '../chain/types.js';
import { createRegistryOf, type InputValidation, type ServiceRegistry } from './registry.js';
import type { AddressLabelReader, HealthReason, HealthStatus, ServiceCategory, ServiceDefinition } from './types.js';

/** The provider inbox as the registry uses it (implemented by x402/providers/inbox.ts). */
export interface ProviderJobs {
  run(serviceId: string, agent: string, request: string | undefined, input: unknown, timeoutMs: number, signal: AbortSignal): Promise<unknown>;
  isOnline(agent: string): boolean;
  /** Whether the agent is in its start-up grace: it polled before the node restarted, and the grace window since start is open. */
  inGrace?(agent: string): boolean;
  lastPollAt(agent: string): number;
  statsOf(serviceId: string): { calls: number; failures: number; medianLatencyMs: number };
  readonly version: number;
}

/** What the registry reads of the chain. */
export interface RegistryChain {
  scanState(prefix: string): Promise<Map<string, Uint8Array>>;
  getStateView(keys: readonly string[]): Promise<StateView>;
  on(event: 'connect' | 'disconnect', fn: () => void): unknown;
  off(event: 'connect' | 'disconnect', fn: () => void): unknown;
}

/** A registered agent as /agents and the CLI show it. */
export interface AgentEntry extends AgentRecord {
  /** Owner account id, hex. */
  readonly owner: string;
  readonly address: string;
  readonly payoutAddress: string;
  readonly online: boolean;
  readonly lastPollAt: number;
}

/** A provider service with its chain record (listed or not). */
export interface ProviderServiceEntry {
  readonly record: ServiceRecord;
  readonly agent: AgentEntry | undefined;
  readonly status: string;
  readonly listed: boolean;
}

/** Live health of a provider service (overrides the prober's last round). */
export interface LiveHealth {
  readonly status: HealthStatus;
  readonly lastVerifiedAt: number;
  readonly latencyMs: number;
  /** Why it is down (its agent does not poll its inbox). */
  readonly reason?: HealthReason;
}

/** The health reason of a provider service whose agent is not polling its inbox. */
function agentOffline(agentName: string): HealthReason {
  return { code: 'provider_agent_offline', message: `its provider agent ${agentName} is not polling its inbox` };
}

/** The registry of node and provider services (see module comment). */
export interface LiveRegistry extends ServiceRegistry {
  /** Changes whenever the listed services or a provider's availability change. */
  readonly version: number;
  /** Whether a payment already made for `def` may still be served: available, or its agent in its start-up grace (x402/core/ports.ts ServiceCatalog). */
  isHonorable(def: ServiceDefinition): boolean;
  /** Re-reads the registry from chain state (also done on every block). */
  refresh(): Promise<void>;
  agents(): readonly AgentEntry[];
  agentOf(owner: string): AgentEntry | undefined;
  /** Every provider service on chain, listed or not (CLI, /agents). */
  providerServices(): readonly ProviderServiceEntry[];
  /** A provider service's chain record (payouts read the owner's payout address from it). */
  providerService(id: string): ProviderServiceEntry | undefined;
  /** Live health of a provider service; undefined for the node's own services. */
  liveHealth(id: string): LiveHealth | undefined;
  /** The moderation label of an address (read by risk scoring), from the tip's state. */
  addressLabel(id: Uint8Array): Promise<AddressLabel | undefined>;
  start(): Promise<void>;
  stop(): void;
}

/** The moderation labels of addresses on `chain` (ServiceContext.addressLabels): one state read for all of them. */
export function chainAddressLabels(chain: Pick<RegistryChain, 'getStateView'>): AddressLabelReader {
  return {
    async getMany(ids) {
      const view = await chain.getStateView(ids.map(labelKey));
      return ids.map((id) => getAddressLabel(view, id));
    },
  };
}

/** Creates the live registry over the node's own registry. */
export function createLiveRegistry(base: ServiceRegistry, chain: RegistryChain, jobs: ProviderJobs, hrp: string, log?: Logger): LiveRegistry {
  // The input rules of a provider definition are the base registry's, over a registry of that
  // one definition (the base compiled only the catalog it was built with).
  const checkers = new WeakMap<ServiceDefinition, ServiceRegistry>();
  let agents = new Map<string, AgentEntry>();
  let services = new Map<string, ProviderServiceEntry>();
  let listed = new Map<string, ServiceDefinition>();
  let rawById = new Map<string, string>();
  /** The owner of a listed provider service's registered agent. */
  const listedOwnerOf = (def: ServiceDefinition): string | undefined => {
    const entry = services.get(def.id);
    return entry?.listed && entry.agent ? entry.agent.owner : undefined;
  };
  let list: readonly ServiceDefinition[] = base.list();
  let stateVersion = 0;
  let refreshing: Promise<void> = Promise.resolve();
  let dirty = false;

  const agentEntry = (owner: string, a: AgentRecord): AgentEntry => ({
    ...a,
    owner,
    address: encodeAddress(fromHex(owner), hrp),
    payoutAddress: encodeAddress(a.payout, hrp),
    get online() {
      return jobs.isOnline(owner);
    },
    get lastPollAt() {
      return jobs.lastPollAt(owner);
    },
  });

  const defOf = (s: ServiceRecord, agent: AgentEntry): ServiceDefinition => {
    const owner = toHex(s.owner);
    return Object.freeze({
      id: s.id,
      name: s.name,
      category: s.category as ServiceCategory,
      priceBase: s.price,
      description: s.description,
      tags: Object.freeze([...s.tags]),
      requestFormat: s.requestFormat,
      requestRequired: s.requestRequired,
      inputSchema: JSON.parse(s.inputSchema) as Record<string, unknown>,
      inputIsJson: s.inputIsJson,
      providerAgent: agent.name,
      nodeOperated: false,
      timeoutMs: s.timeoutMs,
      run: (ctx, input) => jobs.run(s.id, owner, typeof input === 'string' ? input : input === undefined ? undefined : JSON.stringify(input), input, s.timeoutMs, ctx.signal),
      health: async () => (jobs.isOnline(owner) ? 'active' : { status: 'down', reason: agentOffline(agent.name) }),
    } satisfies ServiceDefinition);
  };

  async function load(): Promise<void> {
    const [agentRows, serviceRows] = await Promise.all([chain.scanState(REGISTRY_PREFIXES.agent), chain.scanState(REGISTRY_PREFIXES.service)]);
    const nextAgents = new Map<string, AgentEntry>();
    for (const [k, v] of agentRows) nextAgents.set(k.slice(1), agentEntry(k.slice(1), decodeAgent(v)));
    const nextServices = new Map<string, ProviderServiceEntry>();
    const nextListed = new Map<string, ServiceDefinition>();
    const nextRaw = new Map<string, string>();
    for (const [, v] of serviceRows) {
      const record = decodeService(v);
      const raw = toHex(v);
      nextRaw.set(record.id, raw);
      const agent = nextAgents.get(toHex(record.owner));
      let isListed = isServiceListed(record) && agent !== undefined && base.get(record.id) === undefined;
      if (isListed && agent) {
        // Keep the same definition object while its record's bytes are unchanged (compiled validators, caches).
        const prev = listed.get(record.id);
        const def = prev && rawById.get(record.id) === raw ? prev : defOf(record, agent);
        if (!checkers.has(def)) {
          try {
            checkers.set(def, createRegistryOf([def]));
          } catch (e) {
            // Consensus compiled this schema; the node's ajv (with its extra keywords) did not: not sold here.
            log?.warn({ serviceId: record.id, err: (e as Error).message }, 'provider service schema does not compile on this node');
            isListed = false;
          }
        }
        if (isListed) nextListed.set(record.id, def);
      }
      nextServices.set(record.id, { record, agent, status: record.retired ? 'retired' : serviceStatusName(record.status), listed: isListed });
    }
    rawById = nextRaw;
    agents = nextAgents;
    services = nextServices;
    listed = nextListed;
    list = Object.freeze([...base.list(), ...[...nextListed.values()].sort((a, b) => a.id.localeCompare(b.id))]);
    stateVersion++;
  }

  function refresh(): Promise<void> {
    // One load at a time; blocks that arrive meanwhile cause exactly one more.
    dirty = true;
    refreshing = refreshing.then(async () => {
      if (!dirty) return;
      dirty = false;
      try {
        await load();
      } catch (e) {
        log?.error({ err: e }, 'provider registry refresh failed');
      }
    });
    return refreshing;
  }
  const onBlock = () => void refresh();

  return {
    get version() {
      return stateVersion * 1_000_003 + jobs.version;
    },
    list: () => list,
    get: (id) => base.get(id) ?? listed.get(id),
    validateInput(def, request): InputValidation {
      const own = checkers.get(def);
      return own ? own.validateInput(def, request) : base.validateInput(def, request);
    },
    isAvailable(def) {
      if (def.nodeOperated) return base.isAvailable(def);
      const owner = listedOwnerOf(def);
      return owner !== undefined && jobs.isOnline(owner);
    },
    isHonorable(def) {
      if (def.nodeOperated) return base.isAvailable(def);
      const owner = listedOwnerOf(def);
      return owner !== undefined && (jobs.isOnline(owner) || jobs.inGrace?.(owner) === true);
    },
    refresh,
    agents: () => [...agents.values()],
    agentOf: (owner) => agents.get(owner),
    providerServices: () => [...services.values()],
    providerService: (id) => services.get(id),
    liveHealth(id) {
      const entry = services.get(id);
      if (!entry?.listed || !entry.agent) return undefined;
      const online = jobs.isOnline(entry.agent.owner);
      const live = { status: online ? 'active' : 'down', lastVerifiedAt: jobs.lastPollAt(entry.agent.owner), latencyMs: jobs.statsOf(id).medianLatencyMs } as const;
      return online ? live : { ...live, reason: agentOffline(entry.agent.name) };
    },
    async addressLabel(id) {
      return (await chainAddressLabels(chain).getMany([id]))[0];
    },
    async start() {
      chain.on('connect', onBlock);
      chain.on('disconnect', onBlock);
      await refresh();
    },
    stop() {
      chain.off('connect', onBlock);
      chain.off('disconnect', onBlock);
    },
  };
}
