/**
 * The local-compute services through the real koa app and the real registry (node/api/http.ts +
 * node/api/x402Routes.ts over the paid-call core, on 127.0.0.1): for one service of each family, bad input answers 400
 * `invalid_request` naming the field before any payment (no quote), and valid input gets the
 * 402 quote (the service is available).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { encodeAddress } from '../../consensus/address.js';
import { createDevnetChainParams, getDevPayeeKeyPair } from '../../consensus/devnet.js';
import type { ChainReader, MempoolReader } from '../../chain/types.js';
import { createHttpServer, type HttpServer, type TxSubmitter } from '../../node/api/http.js';
import { createX402Router } from '../../node/api/x402Routes.js';
import { createServiceRegistry } from '../../services/index.js';
import { PAYMENT_HTTP_STATUS } from '../../x402/core/errors.js';
import { createPaidCallCore } from '../../x402/core/paidCall.js';
import type { NativeRail } from '../../x402/core/ports.js';
import { createReferencePriceSource } from '../../x402/core/pricing.js';

const params = createDevnetChainParams({ genesisBits: 0x207fffff });
/** Only `payTo` of the native rail is read before a payment (no payment is made here). */
const native = { payTo: encodeAddress(getDevPayeeKeyPair().address, params.hrp) } as unknown as NativeRail;
let server: HttpServer;

beforeAll(async () => {
  const router = createX402Router(createPaidCallCore({ catalog: createServiceRegistry(), native, params, nativeUsd: createReferencePriceSource(params), requestBudgetMs: 10_000 }));
  server = createHttpServer({ host: '127.0.0.1', port: 0, bodyLimit: 256 * 1024, timeoutMs: 10_000, version: 'test' }, { chain: {} as ChainReader, mempool: {} as MempoolReader & TxSubmitter, params, routers: [router], errorStatuses: PAYMENT_HTTP_STATUS });
  await server.start();
});
afterAll(() => server.stop());

async function post(id: string, request: string | undefined) {
  const res = await fetch(`${server.url}/api/x402/${id}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request === undefined ? {} : { request }) });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

const items = [{ description: 'Consulting', qty: 2, unitPrice: 120 }];

describe.each([
  ['native-invoice-pdf', JSON.stringify({ invoiceNumber: 'INV-1', buyer: { name: 'Acme' }, items: [{ description: 'x', qty: 1 }] }), 'items[0].unitPrice is required', JSON.stringify({ invoiceNumber: 'INV-1', buyer: { name: 'Acme' }, items, vatRate: 19 })],
  ['native-sentiment', 'x'.repeat(5001), 'more than 5000 characters', 'I love how fast this node answers.'],
  ['native-summarize', 'Too short.', 'at least 80 characters or a public http(s) URL', 'x '.repeat(60)],
  ['native-geo-ip', '300.1.1.1', 'must be an IPv4 or IPv6 address', '8.8.8.8'],
  ['native-email-validate', 'no-at-sign.example.com', 'expected format', 'alice@example.com'],
  ['native-aml-sanctions-scan', JSON.stringify({ entity: 'Acme', lists: ['FBI'] }), 'lists[0] must be one of', JSON.stringify({ entity: 'Acme Trading Ltd' })],
  ['native-b2b-compliance-report', JSON.stringify({ txs: [{ id: 'a', amount: 1, counterparty: 'x' }] }), 'txs[0].country is required', JSON.stringify({ txs: [{ id: 'a', amount: 1, counterparty: 'x', country: 'DE' }] })],
])('%s over HTTP', (id, bad, message, good) => {
  test('bad input: 400 invalid_request naming the field, no quote', async () => {
    const r = await post(id, bad);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('invalid_request');
    expect(r.body.error.message).toContain(message);
    expect(r.body.accepts).toBeUndefined();
  });

  test('no request at all: 400 before payment', async () => {
    const r = await post(id, undefined);
    expect(r.status).toBe(400);
    expect(r.body.error.message).toContain('request is required');
  });

  test('valid input: the 402 quote (the service is available)', async () => {
    const r = await post(id, good);
    expect(r.status).toBe(402);
    expect(r.body.accepts[0]).toMatchObject({ resource: expect.stringContaining(id) });
  });
});
