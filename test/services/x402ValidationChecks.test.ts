/**
 * native-x402-validation's checks: a 404 endpoint does not pass `root`, and zero 402
 * challenges do not pass `challenges` (every() of nothing was true). Against a loopback fake.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createOutboundClient } from '../../services/outbound/client.js';
import { validateX402Endpoint } from '../../services/web/x402Probe.js';
import { FAKE_PUBLIC_IP, startFake, tableResolver, testPolicy, type Fake } from './outboundFakes.js';

let x: Fake;
const outbound = createOutboundClient({ userAgent: 'native-node/test', timeoutMs: 5000, connectTimeoutMs: 2000 }, { resolver: tableResolver({ 'x402.test': [FAKE_PUBLIC_IP] }), addressPolicy: testPolicy });

beforeAll(async () => {
  x = await startFake((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (path === '/health' || path === '/ready' || path === '/free') return json(200, { ok: true });
    json(404, { error: 'not found' });
  });
});
afterAll(async () => x.close());

describe('native-x402-validation checks', () => {
  test('a 404 endpoint: root false, no challenge: challenges false, not passed', async () => {
    const r = (await validateX402Endpoint(outbound, { url: `http://x402.test:${x.port}/missing`, mcp: false, correlation: false, includeBody: false }, { version: 'test' })) as Record<string, any>;
    expect(r.probes[0]).toMatchObject({ status: 404 });
    expect(r).toMatchObject({ passed: false, challenges: 0, checks: { reachable: true, root: false, health: true, ready: true, challenges: false } });
    expect(r.problems).toContain('no probe answered with a 402 payment challenge');
  });

  test('a 200 endpoint without any 402: root true, challenges still false', async () => {
    const r = (await validateX402Endpoint(outbound, { url: `http://x402.test:${x.port}/free`, mcp: false, correlation: false, includeBody: false }, { version: 'test' })) as Record<string, any>;
    expect(r).toMatchObject({ passed: false, challenges: 0, checks: { root: true, challenges: false } });
  });
});
