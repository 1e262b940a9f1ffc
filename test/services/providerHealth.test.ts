/**
 * The generic provider health of provider-backed services: `down` without configuration (no
 * call made), probes against a real loopback provider at most once per interval, `down` after a
 * failing real call, latency from the real call, and the prober reporting that latency.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { silentLogger } from '../../chain/types.js';
import { createOutboundClient } from '../../services/outbound/client.js';
import { createProviderMonitor } from '../../services/outbound/providerHealth.js';
import type { ServiceContext, ServiceDefinition } from '../../services/types.js';
import { HealthProber } from '../../services/prober.js';
import { startFake, type Fake } from './outboundFakes.js';

let provider: Fake;
let failing = false;
beforeAll(async () => {
  provider = await startFake((_req, res) => {
    if (failing) {
      res.writeHead(500, { 'content-type': 'application/json' });
      return res.end('{"error":"down"}');
    }
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    }, 30);
  }, '127.0.0.1');
});
afterAll(() => provider.close());

function contextWith(providers: Record<string, string | undefined>, now: () => number): ServiceContext {
  return { outbound: createOutboundClient(), providers, now, log: silentLogger, signal: new AbortController().signal } as unknown as ServiceContext;
}

const monitor = createProviderMonitor({
  name: 'fake',
  configured: (ctx) => typeof ctx.providers?.fakeUrl === 'string',
  probe: async (ctx) => {
    const res = await ctx.outbound!.fetchProvider({ url: `${String(ctx.providers!.fakeUrl)}/probe`, accept: ['application/json'] });
    if (res.status !== 200) throw new Error(`status ${res.status}`);
  },
  minIntervalMs: 60_000,
});

test('not configured: down, refused before payment, and no request is made', async () => {
  const before = provider.hits;
  const ctx = contextWith({}, () => 0);
  expect(await monitor.health(ctx)).toEqual({ status: 'down', latencyMs: 0, reason: { code: 'provider_not_configured', message: expect.stringMatching(/ is not configured on this node$/) } });
  expect(() => monitor.assertAvailable(ctx)).toThrow(expect.objectContaining({ code: 'provider_not_configured' }));
  expect(provider.hits).toBe(before);
});

test('probes at most once per interval; a failing real call makes it down until the next probe', async () => {
  let t = 1_000_000;
  failing = false;
  const ctx = contextWith({ fakeUrl: provider.url }, () => t);
  const before = provider.hits;
  const [a, b] = await Promise.all([monitor.health(ctx), monitor.health(ctx)]);
  expect(provider.hits).toBe(before + 1); // concurrent checks share one probe
  expect(a.status).toBe('active');
  expect(a.latencyMs).toBeGreaterThanOrEqual(25);
  expect(b).toEqual(a);
  t += 30_000;
  expect(await monitor.health(ctx)).toEqual(a);
  expect(provider.hits).toBe(before + 1);

  // A real call fails: the next check says down without probing.
  failing = true;
  await expect(
    monitor.track(ctx, async () => {
      const res = await ctx.outbound!.fetchProvider({ url: `${provider.url}/x` });
      if (res.status !== 200) throw new Error('provider failed');
    }),
  ).rejects.toThrow('provider failed');
  expect(await monitor.health(ctx)).toMatchObject({ status: 'down', reason: { code: 'provider_down', message: expect.stringMatching(/ failed its last call$/) } });
  expect(() => monitor.assertAvailable(ctx)).toThrow(expect.objectContaining({ code: 'provider_down' }));
  expect(provider.hits).toBe(before + 2);

  // After the interval a new probe runs and sees the provider back.
  failing = false;
  t += 61_000;
  expect((await monitor.health(ctx)).status).toBe('active');
  expect(() => monitor.assertAvailable(ctx)).not.toThrow();
  expect(provider.hits).toBe(before + 3);
});

test('the health prober reports the latency of the real call behind a check', async () => {
  const def = { id: 'native-fake', run: async () => 1, health: async () => ({ status: 'active' as const, latencyMs: 1234 }) } as unknown as ServiceDefinition;
  const prober = new HealthProber({ services: () => [def], isAvailable: () => true, context: {} as Omit<ServiceContext, 'signal'> }, { slowMs: 5000 });
  expect(await prober.probe(def)).toMatchObject({ status: 'active', latencyMs: 1234 });
  const slow = new HealthProber({ services: () => [def], isAvailable: () => true, context: {} as Omit<ServiceContext, 'signal'> }, { slowMs: 1000 });
  expect(await slow.probe(def)).toMatchObject({ status: 'degraded', latencyMs: 1234 });
});
