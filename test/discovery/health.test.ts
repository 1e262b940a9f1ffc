/**
 * The health prober: statuses (unknown before, down without run or payee, active without a
 * check, degraded when slow, down on a throw or a timeout with its signal aborted), bounded
 * concurrency, jittered scheduling, the summary block, and stop.
 */
import { describe, expect, test } from '@jest/globals';
import { silentLogger } from '../../chain/types.js';
import type { HealthStatus, ServiceContext, ServiceDefinition } from '../../services/types.js';
import { createHealthProber } from '../../services/prober.js';

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
