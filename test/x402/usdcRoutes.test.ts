/**
 * The paid endpoints' USDC branch over HTTP in-process (koa app of node/api/http.ts on 127.0.0.1,
 * port 0) with stub services that count their runs: a failing service is answered 502 and never
 * settled, a hanging facilitator leaves the service unrun, bad input is a 400 before any payment,
 * and with the rail off the quote and the native behaviour are what they were.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import type { ChainReader, MempoolReader } from '../../chain/types.js';
import { createHttpServer, type HttpServer, type TxSubmitter } from '../../node/api/http.js';
import { createX402Router } from '../../node/api/x402Routes.js';
import { PAYMENT_HTTP_STATUS } from '../../x402/core/errors.js';
import { decodeHeader, NODE_PAY_TO, paymentHeader, referenceViem } from '../helpers/facilitatorPayments.js';

// Payments are signed with viem from reference/ (installed on first use); without it these suites skip.
const describeUsdc = referenceViem.ok ? describe : describe.skip;
import { startUsdcCalls, type UsdcCalls } from '../helpers/usdcCalls.js';

const chainStub = {} as unknown as ChainReader;
const mempoolStub = {} as unknown as MempoolReader & TxSubmitter;

let u: UsdcCalls;
let f: UsdcCalls['facilitator'];
let on: HttpServer;
let off: HttpServer;
let runs: () => number;

async function serve(usdc: boolean): Promise<HttpServer> {
  const router = createX402Router(u.core({ usdc }));
  const server = createHttpServer({ host: '127.0.0.1', port: 0, bodyLimit: 64 * 1024, timeoutMs: 10_000, version: 'test' }, { chain: chainStub, mempool: mempoolStub, params: u.params, routers: [router], errorStatuses: PAYMENT_HTTP_STATUS });
  await server.start();
  return server;
}

beforeAll(async () => {
  // 3 s: the hanging-facilitator test waits it out; an answering facilitator on a loaded machine is never cut.
  u = await startUsdcCalls({ verifyTimeoutMs: 3_000, settleTimeoutMs: 3_000, retryDelayMs: 20 });
  f = u.facilitator;
  runs = u.runs;
  on = await serve(true);
  off = await serve(false);
});
afterAll(async () => {
  await on.stop();
  await off.stop();
  await u.stop();
});
beforeEach(() => u.reset());

async function post(server: HttpServer, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, any>, headers: res.headers };
}

describeUsdc('USDC branch of the paid endpoints', () => {
  test('a paid call on both endpoints runs once each and carries the payment-response headers', async () => {
    const a = await post(on, '/api/x402/native-echo', { request: 'hi' }, { 'x-payment': await paymentHeader({ payTo: NODE_PAY_TO, value: '1000' }) });
    const b = await post(on, '/api/x402', { serviceId: 'native-echo', request: 'hi' }, { 'payment-signature': await paymentHeader({ payTo: NODE_PAY_TO, value: '1000', version: 2 }) });
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(decodeHeader(a.headers.get('x-payment-response'))).toMatchObject({ success: true, network: 'base' });
    expect(decodeHeader(b.headers.get('payment-response'))).toMatchObject({ success: true, network: 'eip155:8453' });
    expect({ runs: runs(), settle: f.calls.settle }).toEqual({ runs: 2, settle: 2 });
  });

  test('a failing service: 502, not paid, and no settle call is made', async () => {
    const out = await post(on, '/api/x402/native-broken', { request: 'hi' }, { 'x-payment': await paymentHeader({ payTo: NODE_PAY_TO, value: '1000' }) });
    expect(out.status).toBe(502);
    expect(out.body).toMatchObject({ paid: false, error: { code: 'service_failed' } });
    expect(out.headers.get('x-payment-response')).toBeNull();
    expect({ runs: runs(), verify: f.calls.verify, settle: f.calls.settle }).toEqual({ runs: 1, verify: 1, settle: 0 });
  });

  test('a facilitator timing out on /verify: 504 facilitator_unavailable and the service never runs', async () => {
    f.modes.verify = 'hang';
    const out = await post(on, '/api/x402/native-echo', { request: 'hi' }, { 'x-payment': await paymentHeader({ payTo: NODE_PAY_TO, value: '1000' }) });
    expect({ status: out.status, code: out.body.error.code }).toEqual({ status: 504, code: 'facilitator_unavailable' });
    expect({ runs: runs(), settle: f.calls.settle }).toEqual({ runs: 0, settle: 0 });
  });

  test('invalid input is a 400 before any payment is looked at', async () => {
    const out = await post(on, '/api/x402/native-echo', { request: 'bad' }, { 'x-payment': await paymentHeader({ payTo: NODE_PAY_TO, value: '1000' }) });
    expect(out.status).toBe(400);
    expect(f.calls.verify).toBe(0);
  });
});

describeUsdc('with the USDC rail off', () => {
  test('quotes carry only the native option, in the body and in the v2 header; a payment header is refused without a facilitator call', async () => {
    const q = await post(off, '/api/x402/native-echo?rail=usdc', { request: 'hi' }, { prefer: 'rail=usdc' });
    expect(q.status).toBe(402);
    expect(q.body.accepts.map((a: { scheme: string }) => a.scheme)).toEqual(['native-x402']);
    expect(q.body).toMatchObject({ x402: true, x402Version: 1, error: 'Payment Required' });
    expect(decodeHeader<{ accepts: { scheme: string; network: string }[] }>(q.headers.get('payment-required')).accepts).toEqual([expect.objectContaining({ scheme: 'native-x402', network: 'native:1337' })]);
    const paid = await post(off, '/api/x402/native-echo', { request: 'hi' }, { 'x-payment': await paymentHeader({ payTo: NODE_PAY_TO, value: '1000' }) });
    expect({ status: paid.status, code: paid.body.error.code }).toEqual({ status: 402, code: 'unsupported_scheme' });
    expect({ runs: runs(), verify: f.calls.verify }).toEqual({ runs: 0, verify: 0 });
  });
});
