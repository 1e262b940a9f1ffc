/**
 * The health prober: statuses (unknown before, down without run or payee, active without a
 * check, degraded when slow, down on a throw or a timeout with its signal aborted), bounded
 * concurrency, jittered scheduling, the summary block, and stop. Then health and the pre-payment
 * check as one state, over HTTP: native-ens-resolve against a JSON-RPC provider on 127.0.0.1
 * that fails and comes back, with an injected clock — refused before any quote exactly while the
 * bazaar shows it `down`, with the bazaar's reason, and shown `active` the moment it is quotable.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bodyParser } from '@koa/bodyparser';
import Koa from 'koa';
// Loaded up front: under jest's ESM modules the service's lazy import of viem would miss it.
import 'viem';
import { silentLogger } from '../../chain/types.js';
import { createDevnetChainParams } from '../../consensus/devnet.js';
import { createDiscovery, type Discovery } from '../../node/api/discovery.js';
import { createX402Router } from '../../node/api/x402Routes.js';
import { ensResolve } from '../../services/ens-resolve.js';
import { createServiceRegistry, executeService } from '../../services/index.js';
import { createOutboundClient } from '../../services/outbound/client.js';
import type { HealthStatus, ServiceContext, ServiceDefinition, ServiceHealthReader, ServiceUsage } from '../../services/types.js';
import { createHealthProber } from '../../services/prober.js';
import { createPaidCallCore } from '../../x402/core/paidCall.js';
import type { NativeRail } from '../../x402/core/ports.js';
import { createReferencePriceSource } from '../../x402/core/pricing.js';
import { startFake, type Fake } from '../services/outboundFakes.js';

function def(id: string, o: { run?: boolean; health?: ServiceDefinition['health'] } = {}): ServiceDefinition {
  return {
    id,
    name: id,
    category: 'utility',
    priceBase: 100_000n,
    description: id,
    tags: [],
    requestFormat: '',
    requestRequired: false,
    inputSchema: { type: 'string' },
    providerAgent: 'native-node',
    nodeOperated: true,
    timeoutMs: 1000,
    ...(o.run === false ? {} : { run: async () => ({ ok: true }) }),
    ...(o.health ? { health: o.health } : {}),
  };
}

const context = { log: silentLogger } as unknown as Omit<ServiceContext, 'signal'>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('health prober', () => {
  test('statuses of one round, latency and the summary', async () => {
    let clock = 1_000;
    const aborted: boolean[] = [];
    const defs = [
      def('native-a', { health: async () => 'active' }),
      def('native-no-run', { run: false, health: async () => 'active' }),
      def('native-no-check'),
      def('native-slow', {
        health: async () => {
          clock += 50; // the injected clock says this check took 50 ms
          return 'active';
        },
      }),
      def('native-throws', {
        health: async () => {
          throw new Error('disk gone');
        },
      }),
      def('native-hangs', {
        health: (ctx) =>
          new Promise<HealthStatus>(() => {
            ctx.signal.addEventListener('abort', () => aborted.push(true));
          }),
      }),
      def('native-says-degraded', { health: async () => 'degraded' }),
      def('native-says-why', { health: async () => ({ status: 'down', reason: { code: 'data_not_installed', message: 'the pack is not installed' } }) }),
      def('native-not-for-sale', { health: async () => 'active' }),
    ];
    const prober = createHealthProber({ services: () => defs, isAvailable: (d) => d.run !== undefined && d.id !== 'native-not-for-sale', context, now: () => clock }, { timeoutMs: 1_000, slowMs: 20, concurrency: 1 });
    expect(prober.get('native-a')).toEqual({ status: 'unknown', lastVerifiedAt: 0, latencyMs: 0 });
    expect(prober.summary(clock)).toMatchObject({ total: 9, unknown: 9, checkedAt: 0, ageMs: 0 });
    await prober.probeAll();
    const status = Object.fromEntries(defs.map((d) => [d.id, prober.get(d.id).status]));
    expect(status).toEqual({
      'native-a': 'active',
      'native-no-run': 'down',
      'native-no-check': 'active',
      'native-slow': 'degraded',
      'native-throws': 'down',
      'native-hangs': 'down',
      'native-says-degraded': 'degraded',
      'native-says-why': 'down',
      'native-not-for-sale': 'down',
    });
    // Every down or degraded service says why (the catalog's healthReason): the check's own reason, else the prober's.
    const reasons = Object.fromEntries(defs.map((d) => [d.id, prober.get(d.id).reason?.code ?? null]));
    expect(reasons).toEqual({
      'native-a': null,
      'native-no-run': 'not_implemented',
      'native-no-check': null,
      'native-slow': 'slow',
      'native-throws': 'health_check_failed',
      'native-hangs': 'health_timeout',
      'native-says-degraded': 'health_check_down',
      'native-says-why': 'data_not_installed',
      'native-not-for-sale': 'not_for_sale',
    });
    expect(prober.get('native-throws').reason?.message).toBe('its health check failed: disk gone');
    expect(prober.get('native-hangs').reason?.message).toBe('health check of native-hangs took longer than 1000 ms');
    expect(prober.get('native-says-why').reason?.message).toBe('the pack is not installed');
    expect(aborted).toEqual([true]);
    expect(prober.get('native-slow').latencyMs).toBe(50);
    expect(prober.get('native-a').lastVerifiedAt).toBeGreaterThanOrEqual(1000);
    expect(prober.rounds).toBe(1);
    clock += 250;
    expect(prober.summary(clock)).toEqual({ total: 9, active: 2, degraded: 2, down: 5, unknown: 0, checkedAt: 1050, ageMs: 250 });
  });

  test('at most `concurrency` checks in flight', async () => {
    let inFlight = 0;
    let peak = 0;
    const check = async (): Promise<HealthStatus> => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await sleep(5);
      inFlight--;
      return 'active';
    };
    const defs = Array.from({ length: 20 }, (_, i) => def(`native-s${i}`, { health: check }));
    const prober = createHealthProber({ services: () => defs, isAvailable: () => true, context }, { concurrency: 4 });
    await prober.probeAll();
    expect(peak).toBe(4);
    expect(defs.every((d) => prober.get(d.id).status === 'active')).toBe(true);
  });

  test('jittered interval: intervalMs × (1 ± jitter)', () => {
    let r = 0;
    const prober = createHealthProber({ services: () => [], isAvailable: () => true, context, random: () => r }, { intervalMs: 10_000, jitter: 0.2 });
    r = 0;
    expect(prober.nextDelay()).toBe(8_000);
    r = 0.5;
    expect(prober.nextDelay()).toBe(10_000);
    r = 0.999999;
    expect(prober.nextDelay()).toBe(12_000);
    expect(() => createHealthProber({ services: () => [], isAvailable: () => true, context }, { jitter: 1 })).toThrow(RangeError);
    expect(() => createHealthProber({ services: () => [], isAvailable: () => true, context }, { concurrency: 0 })).toThrow(RangeError);
  });

  test('start runs rounds on the jittered schedule; stop ends them and aborts checks in flight', async () => {
    let calls = 0;
    let abortedOnStop = false;
    const defs = [
      def('native-count', {
        health: async () => {
          calls++;
          return 'active';
        },
      }),
      def('native-long', {
        health: (ctx) =>
          new Promise<HealthStatus>((resolve) => {
            // Finishes quickly in early rounds; the last one hangs until stop aborts it.
            if (calls < 3) return void setTimeout(() => resolve('active'), 1);
            ctx.signal.addEventListener('abort', () => {
              abortedOnStop = true;
              resolve('down');
            });
          }),
      }),
    ];
    const prober = createHealthProber({ services: () => defs, isAvailable: () => true, context, random: () => 0.5 }, { intervalMs: 20, jitter: 0.5, timeoutMs: 10_000 });
    prober.start();
    prober.start(); // idempotent
    const deadline = Date.now() + 5_000;
    while (calls < 3 && Date.now() < deadline) await sleep(5);
    expect(calls).toBeGreaterThanOrEqual(3);
    await sleep(10);
    const t0 = Date.now();
    await prober.stop();
    expect(Date.now() - t0).toBeLessThan(5_000); // the hanging check (10 s timeout) is cut, not waited out (typically ~1 ms)
    expect(abortedOnStop).toBe(true);
    const after = calls;
    await sleep(80);
    expect(calls).toBe(after);
  });
});

describe('health and the pre-payment check are one state', () => {
  const params = createDevnetChainParams();
  const registry = createServiceRegistry([ensResolve]);
  const nativeUsd = createReferencePriceSource(params);
  const usage: ServiceUsage = { volume: () => ({ calls: 0, callsUsdc: 0, volumeBase: 0n, volumeUsdcAtomic: 0n }) };
  // No call is paid here: the native rail only names the payee (the quotes are what is checked).
  const native: NativeRail = { payTo: 'tnative1fq5h86uq8gu52f0elvehyfel7428h33q4pgmde', sellerId: '0123456789abcdef', requiredConfirmations: 1, settle: () => Promise.reject(new Error('not paid here')) };
  let clock = 1_800_000_000_000;
  let failing = true;
  let rpc: Fake;
  let server: Server;
  let url: string;
  let discovery: Discovery;
  let context: Omit<ServiceContext, 'signal'>;

  beforeAll(async () => {
    // The operator's Ethereum JSON-RPC: HTTP 500 while failing, else chain id 1 (the probe's one call).
    rpc = await startFake((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        if (failing) {
          res.writeHead(500, { 'content-type': 'application/json' });
          return res.end('{"error":"upstream down"}');
        }
        const id = (JSON.parse(body) as { id?: unknown }).id ?? 1;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id, result: '0x1' }));
      });
    }, '127.0.0.1');
    // The node's wiring (node/payments.ts): the services' context reads the health the catalog shows, bound once the prober exists.
    let shown: ServiceHealthReader['get'] = () => ({ status: 'unknown', lastVerifiedAt: 0 });
    context = { log: silentLogger, registry, params, nativeUsd, now: () => clock, outbound: createOutboundClient(), providers: { ethereumRpcUrl: rpc.url }, health: { get: (id: string) => shown(id) } } as unknown as Omit<ServiceContext, 'signal'>;
    const core = createPaidCallCore({ catalog: registry, native, params, nativeUsd, requestBudgetMs: 60_000, context });
    discovery = createDiscovery({ version: '0.1.0', health: { downRecheckMs: 0 } }, { registry, usage, nativeUsd, paidCalls: core, params, context, now: () => clock });
    shown = (id) => discovery.prober.get(id);
    const app = new Koa();
    app.use(bodyParser());
    app.use(discovery.router.routes());
    app.use(createX402Router(core).routes());
    server = createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await discovery.prober.stop();
    await new Promise((r) => server.close(r));
    await rpc.close();
  });

  /** What the bazaar shows of native-ens-resolve. */
  const shown = async () => {
    const doc = (await (await fetch(`${url}/api/x402/bazaar`)).json()) as { resources: { serviceId: string; healthStatus: string; healthReason: { code: string } | null }[] };
    const r = doc.resources.find((x) => x.serviceId === 'native-ens-resolve')!;
    return { status: r.healthStatus, reason: r.healthReason?.code ?? null };
  };
  /** What an unpaid call of native-ens-resolve answers: the quote (402) or the refusal before any payment. */
  const quote = async () => {
    const res = await fetch(`${url}/api/x402/native-ens-resolve`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ request: 'vitalik.eth' }) });
    const body = (await res.json()) as { error?: { code: string; reason?: string } };
    return { status: res.status, code: body.error?.code ?? null, reason: body.error?.reason ?? null };
  };
  /** Both views at one moment: a service is quoted exactly when it is not shown down, and refused with the reason shown. */
  const both = async () => {
    const [s, q] = [await shown(), await quote()];
    if (s.status === 'down') expect(q).toEqual({ status: 503, code: 'service_unavailable', reason: s.reason });
    else expect(q).toEqual({ status: 402, code: null, reason: null });
    return s;
  };

  test('a provider down at the check: refused while shown down, also after its retry time, until a probe finds it back', async () => {
    await discovery.prober.probeAll();
    expect(await both()).toEqual({ status: 'down', reason: 'provider_down' });
    // Its retry time (60 s) is up, the prober has not looked again: still one state (before, it was quoted here while shown down).
    clock += 61_000;
    expect(await both()).toEqual({ status: 'down', reason: 'provider_down' });
    // Rechecked while the provider still fails: down, refused.
    await discovery.prober.recheckDown();
    expect(await both()).toEqual({ status: 'down', reason: 'provider_down' });
    // The provider is back: the next recheck after the retry time probes it, and at that moment both say so.
    failing = false;
    clock += 61_000;
    await discovery.prober.recheckDown();
    expect(await both()).toEqual({ status: 'active', reason: null });
  });

  test('a real call that fails shows the service down at once (not at the next round), and it is refused from then on', async () => {
    expect(await both()).toEqual({ status: 'active', reason: null });
    failing = true;
    clock += 1_000;
    const def = registry.get('native-ens-resolve')!;
    await expect(executeService(def, context, 'vitalik.eth')).rejects.toMatchObject({ code: 'provider_error' });
    expect(await both()).toEqual({ status: 'down', reason: 'provider_down' });
    // Still refused once the retry time is up and no probe ran.
    clock += 61_000;
    expect(await both()).toEqual({ status: 'down', reason: 'provider_down' });
    failing = false;
    await discovery.prober.recheckDown();
    expect(await both()).toEqual({ status: 'active', reason: null });
  });
});
