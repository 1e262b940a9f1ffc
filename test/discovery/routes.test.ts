/**
 * The discovery router in-process (koa on 127.0.0.1, port 0) with an injected clock and ledger:
 * kept documents are regenerated when a payment settles (not only when their second is up),
 * `updatedAt` is the generation time, gzip is served to clients that ask, and a node without a
 * payee key lists every service as down.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import Koa from 'koa';
import { silentLogger } from '../../chain/types.js';
import { createDevnetChainParams } from '../../consensus/devnet.js';
import { createServiceRegistry } from '../../services/index.js';
import type { ServiceContext, ServiceUsage } from '../../services/types.js';
import { createReferencePriceSource } from '../../x402/core/pricing.js';
import { createPaidCallCore } from '../../x402/core/paidCall.js';
import type { NativeRail } from '../../x402/core/ports.js';
import { createDiscovery, DOCUMENT_TTL_MS, type Discovery } from '../../node/api/discovery.js';

const params = createDevnetChainParams();
const registry = createServiceRegistry();
let clock = 1_800_000_000_000;
let calls = 0;
const usage: ServiceUsage = { volume: (id) => (id === 'native-world-clock' ? { calls, callsUsdc: 0, volumeBase: BigInt(calls) * 200_000n, volumeUsdcAtomic: 0n } : { calls: 0, callsUsdc: 0, volumeBase: 0n, volumeUsdcAtomic: 0n }) };
const context = { log: silentLogger, registry, params } as unknown as Omit<ServiceContext, 'signal'>;

function serve(d: Discovery): Promise<{ server: Server; url: string }> {
  const app = new Koa();
  app.use(d.router.routes());
  const server = createServer(app.callback());
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })));
}

let withPayee: { server: Server; url: string; d: Discovery };
let withoutPayee: { server: Server; url: string; d: Discovery };

beforeAll(async () => {
  const nativeUsd = createReferencePriceSource(params);
  // No call is paid here: the native rail only names the payee.
  const native: NativeRail = { payTo: 'tnative1fq5h86uq8gu52f0elvehyfel7428h33q4pgmde', sellerId: '0123456789abcdef', requiredConfirmations: 1, settle: () => Promise.reject(new Error('not paid here')) };
  const core = (rail?: NativeRail) => createPaidCallCore({ catalog: registry, native: rail, params, nativeUsd, requestBudgetMs: 60_000 });
  const base = { registry, usage, nativeUsd, params, context, now: () => clock };
  const d1 = createDiscovery({ version: '0.1.0' }, { ...base, paidCalls: core(native) });
  const d2 = createDiscovery({ version: '0.1.0' }, { ...base, paidCalls: core() });
  await d1.prober.probeAll();
  await d2.prober.probeAll();
  withPayee = { ...(await serve(d1)), d: d1 };
  withoutPayee = { ...(await serve(d2)), d: d2 };
});

afterAll(async () => {
  for (const s of [withPayee, withoutPayee]) await new Promise((r) => s.server.close(r));
});

const bazaar = async (url: string, q = '?q=clock') => (await (await fetch(`${url}/api/x402/bazaar${q}`)).json()) as { updatedAt: number; resources: { metadata: { provenCalls: number }; healthStatus: string }[]; health: Record<string, number> };

describe('discovery router', () => {
  test('a settled payment shows at once; otherwise a document is kept for its second', async () => {
    const first = await bazaar(withPayee.url);
    expect(first.resources[0].metadata.provenCalls).toBe(0);
    expect(first.updatedAt).toBe(clock);
    clock += 10;
    expect((await bazaar(withPayee.url)).updatedAt).toBe(first.updatedAt); // kept
    calls = 1;
    const after = await bazaar(withPayee.url);
    expect(after.resources[0].metadata.provenCalls).toBe(1); // the settle invalidated it
    expect(after.updatedAt).toBe(clock);
    clock += DOCUMENT_TTL_MS;
    expect((await bazaar(withPayee.url)).updatedAt).toBe(clock); // its second is up
  });

  test('gzip for clients that accept it', async () => {
    const res = await fetch(`${withPayee.url}/api/x402/bazaar`, { headers: { 'accept-encoding': 'gzip' } });
    expect(res.headers.get('content-encoding')).toBe('gzip');
    expect(res.headers.get('vary')).toMatch(/accept-encoding/i);
    const doc = (await res.json()) as { resources: unknown[] };
    expect(doc.resources).toHaveLength(58);
    // Without the header: identity.
    const { request } = await import('node:http');
    const raw = await new Promise<{ encoding?: string; body: Buffer }>((resolve, reject) => {
      request(`${withPayee.url}/api/x402/bazaar`, (r) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => resolve({ encoding: r.headers['content-encoding'], body: Buffer.concat(chunks) }));
      })
        .on('error', reject)
        .end();
    });
    expect(raw.encoding).toBeUndefined();
    expect(JSON.parse(raw.body.toString()).resources).toHaveLength(58);
    expect(() => gunzipSync(raw.body)).toThrow();
  });

  test('without a payee key every service is down', async () => {
    const doc = await bazaar(withoutPayee.url, '');
    expect(doc.health).toMatchObject({ total: 58, active: 0, down: 58 });
    expect(doc.resources.every((r) => r.healthStatus === 'down')).toBe(true);
  });
});
