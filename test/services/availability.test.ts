/**
 * native-agent-roster and native-service-search report the availability the node's health prober
 * sees (the catalog's healthStatus), not merely that a service has an implementation: a service
 * the prober finds `down` (no provider configured, no data pack: it answers 503 before any quote)
 * is listed unavailable, and the search ranks the services that can be bought first.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { silentLogger } from '../../chain/types.js';
import { createDevnetChainParams } from '../../consensus/devnet.js';
import { createHealthProber, type HealthProber } from '../../services/prober.js';
import { createServiceRegistry, executeService, type ServiceContext } from '../../services/index.js';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const params = createDevnetChainParams({ genesisBits: 0x207fffff });
const registry = createServiceRegistry();
/** What the checks and the services read: a chain whose store answers, no providers, no outbound client. */
const base = {
  chain: { getSupply: async () => ({ minted: 0n, burned: 0n }), tip: { height: 0 } },
  mempool: {},
  params,
  now: () => 1_800_000_000_000,
  log: silentLogger,
  registry,
  nativeUsd: { get: () => ({ microUsd: 500_000n, source: 'reference', live: false }) },
} as unknown as Omit<ServiceContext, 'signal'>;
let prober: HealthProber;
let ctx: ServiceContext;

beforeAll(async () => {
  prober = createHealthProber({ services: () => registry.list(), isAvailable: (d) => registry.isAvailable(d), context: base }, { timeoutMs: 2_000 });
  await prober.probeAll();
  ctx = { ...base, health: prober, signal: new AbortController().signal };
});
afterAll(() => prober.stop());

async function call(id: string, request?: string): Promise<Json> {
  const def = registry.get(id)!;
  const v = registry.validateInput(def, request);
  if (!v.ok) throw new Error(v.error.message);
  return executeService(def, ctx, v.input);
}

test('the roster lists each service available exactly when the prober does not see it down', async () => {
  const down = registry.list().filter((d) => prober.get(d.id).status === 'down').map((d) => d.id);
  // Without providers, the provider-backed services (weather, fx, LLM, …) are down here.
  expect(down).toEqual(expect.arrayContaining(['native-weather', 'native-llm-chat', 'native-translate']));
  const r = await call('native-agent-roster');
  const node = r.agents.find((a: Json) => a.agentId === 'native-node');
  expect(r.healthTracked).toBe(true);
  for (const s of node.services) expect({ id: s.serviceId, available: s.available, status: s.healthStatus }).toEqual({ id: s.serviceId, available: !down.includes(s.serviceId), status: prober.get(s.serviceId).status });
  expect(node.availableCount).toBe(node.serviceCount - down.length);
});

test('the search ranks services that can be bought first and labels down ones unavailable', async () => {
  for (const q of ['gas fees', 'weather', 'price', 'translate text']) {
    const r = await call('native-service-search', q);
    const flags = r.results.map((x: Json) => x.available as boolean);
    // Available ones first: no available result after an unavailable one.
    expect({ q, order: flags }).toEqual({ q, order: [...flags].sort((a, b) => Number(b) - Number(a)) });
    for (const x of r.results) expect({ id: x.serviceId, available: x.available }).toEqual({ id: x.serviceId, available: prober.get(x.serviceId).status !== 'down' });
  }
  const gas = await call('native-service-search', 'gas fees');
  expect(gas.results[0]).toMatchObject({ serviceId: 'native-gas-tracker', available: true });
  expect(gas.results.find((x: Json) => x.serviceId === 'native-gas-price')).toMatchObject({ available: false, healthStatus: 'down' });
});
