/** `/health` and `/ready` over HTTP with the node's readiness rule, its inputs stubbed: 503 with the reason while syncing, closing, not yet serving or owing refunds the payee cannot cover. */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createRouterServer, type HttpServer } from '../../node/api/app.js';
import { createOpsRouter, nodeReadiness } from '../../node/api/opsRoutes.js';

const state = { chainOpen: true, syncing: false, serving: true, refundsStuck: 0, payeeFloatLow: false };
let server: HttpServer;

beforeAll(async () => {
  const router = createOpsRouter({
    version: '9.9.9',
    uptime: () => 12.3456,
    readiness: nodeReadiness({ chainOpen: () => state.chainOpen, syncing: () => state.syncing, serving: () => state.serving, refundsStuck: () => state.refundsStuck, payeeFloatLow: () => state.payeeFloatLow }),
  });
  server = createRouterServer({ host: '127.0.0.1', port: 0, bodyLimit: 1024, timeoutMs: 5_000, version: '9.9.9' }, [router]);
  await server.start();
});

afterAll(() => server.stop());

async function ready(): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${server.url}/ready`);
  return { status: res.status, body: await res.json() };
}

describe('/health and /ready', () => {
  test('/health answers whatever the readiness', async () => {
    state.syncing = true;
    const res = await fetch(`${server.url}/health`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.json()).toEqual({ status: 'ok', version: '9.9.9', uptime: 12.346 });
    state.syncing = false;
  });

  test('/ready is 503 node_syncing while the node syncs, then 200 once it has caught up', async () => {
    state.syncing = true;
    expect(await ready()).toEqual({ status: 503, body: { ready: false, reason: 'node_syncing', checks: { chain: 'ok', sync: 'node_syncing', http: 'ok', refunds: 'ok' } } });
    state.syncing = false;
    expect(await ready()).toEqual({ status: 200, body: { ready: true, checks: { chain: 'ok', sync: 'ok', http: 'ok', refunds: 'ok' } } });
  });

  test('/ready is 503 before the API serves (start not finished, or stopping) and once the chain is closed', async () => {
    state.serving = false;
    expect(await ready()).toMatchObject({ status: 503, body: { ready: false, reason: 'http_not_serving' } });
    state.chainOpen = false;
    expect(await ready()).toMatchObject({ status: 503, body: { ready: false, reason: 'chain_closed', checks: { chain: 'chain_closed', http: 'http_not_serving' } } });
    state.serving = true;
    state.chainOpen = true;
    expect((await ready()).status).toBe(200);
  });

  test('/ready stays 200 while refunds are stuck on the payee\'s balance or the payee holds less than a refund\'s fee, and warns', async () => {
    // The node still sells what its payee could refund: a load balancer must not take it out.
    state.refundsStuck = 2;
    expect(await ready()).toEqual({ status: 200, body: { ready: true, checks: { chain: 'ok', sync: 'ok', http: 'ok', refunds: 'ok' }, warnings: { refunds: 'payee_underfunded' } } });
    state.refundsStuck = 0;
    state.payeeFloatLow = true;
    expect(await ready()).toEqual({ status: 200, body: { ready: true, checks: { chain: 'ok', sync: 'ok', http: 'ok', refunds: 'ok', payee: 'ok' }, warnings: { payee: 'payee_float_low' } } });
    state.payeeFloatLow = false;
    expect(await ready()).toEqual({ status: 200, body: { ready: true, checks: { chain: 'ok', sync: 'ok', http: 'ok', refunds: 'ok' } } });
  });
});

describe('/ready and the ledger', () => {
  test('/ready is 503 ledger_unavailable while the ledger cannot be reached (every quote is refused then), 200 once it is back', async () => {
    let reachable = true;
    const router = createOpsRouter({ version: '9.9.9', readiness: nodeReadiness({ chainOpen: () => true, syncing: () => false, serving: () => true, refundsStuck: () => 0, ledgerAvailable: () => reachable }) });
    const s = createRouterServer({ host: '127.0.0.1', port: 0, bodyLimit: 1024, timeoutMs: 5_000, version: '9.9.9' }, [router]);
    await s.start();
    try {
      const get = async () => {
        const res = await fetch(`${s.url}/ready`);
        return { status: res.status, body: await res.json() };
      };
      expect(await get()).toEqual({ status: 200, body: { ready: true, checks: { chain: 'ok', ledger: 'ok', sync: 'ok', http: 'ok', refunds: 'ok' } } });
      reachable = false;
      expect(await get()).toEqual({ status: 503, body: { ready: false, reason: 'ledger_unavailable', checks: { chain: 'ok', ledger: 'ledger_unavailable', sync: 'ok', http: 'ok', refunds: 'ok' } } });
      reachable = true;
      expect((await get()).status).toBe(200);
    } finally {
      await s.stop();
    }
  });
});
