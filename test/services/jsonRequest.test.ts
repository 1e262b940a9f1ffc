/**
 * A JSON-input service takes its request as a JSON object as well as the same JSON as a
 * string, on `POST /api/x402/:serviceId` and `POST /api/x402`, as MCP already did. The node turns
 * the object into one string, `JSON.stringify(object)` as received: the input check reads it, the
 * quote prices it and a native payment must commit to it (x402/core/paidCall.ts requestTextOf). Before,
 * an object was refused with 400 `request must be a string`.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { requestTextOf } from '../../x402/core/paidCall.js';
import { cleanupTmp } from '../helpers/tmp.js';
import { tableResolver } from './outboundFakes.js';
import { startPaidHarness, type PaidHarness } from './paidHarness.js';

let h: PaidHarness;
beforeAll(async () => {
  h = await startPaidHarness({ resolver: tableResolver({}) });
});
afterAll(async () => {
  await h.close();
  await cleanupTmp();
});

const invoice = { invoiceNumber: 'INV-OBJ-1', buyer: { name: 'ACME GmbH', address: 'Hauptstr. 1, Berlin' }, items: [{ description: 'Consulting', qty: 1.5, unitPrice: 33.335 }], vatRate: 19 };

describe('requestTextOf', () => {
  test('a string as sent; a JSON value of a JSON-input service as its JSON.stringify; absent as undefined', () => {
    const json = { id: 'native-invoice-pdf', inputIsJson: true };
    expect(requestTextOf(json, ' {"a": 1} ')).toEqual({ request: ' {"a": 1} ' });
    expect(requestTextOf(json, { b: 2, a: [1, 'x'] })).toEqual({ request: '{"b":2,"a":[1,"x"]}' });
    expect(requestTextOf(json, [1, 2])).toEqual({ request: '[1,2]' });
    expect(requestTextOf(json, null)).toEqual({ request: undefined });
    expect(requestTextOf(json, undefined)).toEqual({ request: undefined });
    expect(requestTextOf(json, 42)).toEqual({ refused: expect.stringContaining('JSON object') });
    expect(requestTextOf({ id: 'native-world-clock' }, { tz: 'UTC' })).toEqual({ refused: 'request must be a string for native-world-clock' });
  });
});

describe('a JSON object as request over HTTP', () => {
  test('quoted like the same JSON as a string, on both paid endpoints', async () => {
    const asString = await h.post('/api/x402/native-invoice-pdf', { request: JSON.stringify(invoice) });
    const asObject = await h.post('/api/x402/native-invoice-pdf', { request: invoice });
    const generic = await h.post('/api/x402', { serviceId: 'native-invoice-pdf', request: invoice });
    expect([asString.status, asObject.status, generic.status]).toEqual([402, 402, 402]);
    const price = (b: Record<string, any>) => b.accepts.find((a: { scheme: string }) => a.scheme === 'native-x402').maxAmountRequired;
    expect(price(asObject.body)).toBe(price(asString.body));
    expect(price(generic.body)).toBe(price(asString.body));
  });

  test('an object the schema refuses is a 400 naming the field, before any quote', async () => {
    const r = await h.post('/api/x402/native-invoice-pdf', { request: { ...invoice, items: [{ description: 'x', unitPrice: 1 }] } });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('items[0].qty is required') });
  });

  test('an object for a text service is still refused', async () => {
    const r = await h.post('/api/x402/native-world-clock', { request: { tz: 'Europe/Berlin' } });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'invalid_request', message: 'request must be a string for native-world-clock' });
  });

  test('paid with the object, committing to JSON.stringify(object): the same document as the string form', async () => {
    const obj = await h.paidCall('native-invoice-pdf', invoice);
    expect(obj.status).toBe(200);
    const str = await h.paidCall('native-invoice-pdf', JSON.stringify(invoice));
    expect(str.status).toBe(200);
    expect(obj.body.result.totals).toEqual(str.body.result.totals);
    expect(obj.body.result.totals).toMatchObject({ net: '50.00', currency: 'EUR' });
    expect(obj.body.result.pdfBase64).toBe(str.body.result.pdfBase64);
  });

  test('another JSON service: quoted on the generic endpoint, paid with the object', async () => {
    const quote = await h.post('/api/x402', { serviceId: 'native-aml-sanctions-scan', request: { entity: 'ACME Corp', lists: ['OFAC'] } });
    expect(quote.status).toBe(402);
    const out = await h.paidCall('native-aml-sanctions-scan', { entity: 'ACME Corp', lists: ['OFAC'] });
    expect(out.status).toBe(200);
    expect(out.body.receipt).toMatchObject({ serviceId: 'native-aml-sanctions-scan', txId: out.txId });
  });

  test('a payment committed to another spelling of the same JSON does not settle the object', async () => {
    // Pay for the pretty-printed text, then settle with the object: the node's string is the compact one.
    const pretty = JSON.stringify(invoice, null, 2);
    const paid = await h.paidCall('native-invoice-pdf', pretty);
    expect(paid.status).toBe(200);
    const again = await h.post('/api/x402/native-invoice-pdf?wait=0', { request: invoice, payment: { txId: paid.txId, salt: paid.salt } });
    expect(again.status).not.toBe(200);
    expect(again.body.result).toBeUndefined();
  });
});
