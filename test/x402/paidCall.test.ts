/**
 * The paid-call core (x402/core/paidCall.ts) on its own, with rails that record what they are asked:
 * the order of the checks before a quote, one quote per call bound to the request, refusals
 * carrying the quote (a native 402 reaches the HTTP client with its `accepts`), the syncing and
 * rail-off refusals, the clipped block wait, and a decoded USDC payload handed on as is.
 */
import { describe, expect, test } from '@jest/globals';
import type { ChainReader, MempoolReader } from '../../chain/types.js';
import { createDevnetChainParams } from '../../consensus/devnet.js';
import { createHttpServer, type HttpServer, type TxSubmitter } from '../../node/api/http.js';
import { createX402Router } from '../../node/api/x402Routes.js';
import type { ServiceDefinition } from '../../services/types.js';
import { PAYMENT_HTTP_STATUS } from '../../x402/core/errors.js';
import { outcomeBody, refusal, type PaidCallOutcome, type SettleOutcome } from '../../x402/core/outcome.js';
import { createPaidCallCore, type PaidCallModules } from '../../x402/core/paidCall.js';
import type { NativeRail, ServiceCatalog, UsdcRail } from '../../x402/core/ports.js';
import { createReferencePriceSource } from '../../x402/core/pricing.js';
import { COMMITMENT_SCHEME, type PaymentRequirements } from '../../x402/core/wire.js';
import { stubService } from '../helpers/stubService.js';

const params = createDevnetChainParams({ genesisBits: 0x207fffff });
const echo = { ...stubService('native-echo', async () => 'ok'), timeoutMs: 5_000 };
const down = stubService('native-down', async () => 'ok');
const catalog: ServiceCatalog = {
  get: (id) => (id === echo.id ? echo : id === down.id ? down : undefined),
  validateInput: (_def, request) => (request === 'bad' ? { ok: false, error: { code: 'invalid_request', message: 'bad input', details: { at: 0 } } } : { ok: true, input: `input:${request}` }),
  isAvailable: (def) => def.id !== down.id,
};

/** A native rail that answers `next` and records its arguments. */
function recordingNative(next: SettleOutcome): NativeRail & { calls: { def: ServiceDefinition; request?: string; input: unknown; txId: string; salt?: string; waitMs: number }[] } {
  const calls: { def: ServiceDefinition; request?: string; input: unknown; txId: string; salt?: string; waitMs: number }[] = [];
  return {
    payTo: 'tnative1payee',
    sellerId: '0123456789abcdef',
    requiredConfirmations: 1,
    calls,
    settle: async (def, request, input, proof, waitMs) => (calls.push({ def, request, input, txId: proof.txId, salt: proof.salt, waitMs }), next),
  };
}

/** A USDC rail that refuses everything and records the payment it got. */
function recordingUsdc(): UsdcRail & { payments: (string | object)[]; reqs: PaymentRequirements[] } {
  const payments: (string | object)[] = [];
  const reqs: PaymentRequirements[] = [];
  return {
    payTo: '0x000000000000000000000000000000000000dEaD',
    payments,
    reqs,
    settle: async (_def, _request, _input, payment, req) => (payments.push(payment), reqs.push(req), refusal(402, { code: 'invalid_exact_evm_payload_signature', message: 'bad signature' }, { rail: 'usdc', payer: '0xabc' })),
  };
}

const core = (m: Partial<PaidCallModules>) => createPaidCallCore({ catalog, params, nativeUsd: createReferencePriceSource(params), requestBudgetMs: 20_000, ...m });
const BASE = 'http://node.example';
const mismatch = refusal(402, { code: 'request_mismatch', message: 'payment is bound to another request' }, { rail: 'native', txId: 'ab'.repeat(32) });

describe('the checks before a quote', () => {
  test('unknown service 404, non-string request 400, unavailable or no payee 503, bad input 400 with details; no rail is asked', async () => {
    const native = recordingNative(mismatch);
    const c = core({ native });
    const pay = { rail: 'native', txId: 'ab'.repeat(32) } as const;
    const pick = (o: PaidCallOutcome) => ({ kind: o.kind, status: o.status, code: 'error' in o ? o.error.code : undefined });
    expect(pick(await c.call({ serviceId: 'native-nope', request: 'x', baseUrl: BASE, payment: pay }))).toEqual({ kind: 'rejected', status: 404, code: 'unknown_service' });
    expect(pick(await c.call({ serviceId: echo.id, request: { a: 1 }, baseUrl: BASE, payment: pay }))).toEqual({ kind: 'rejected', status: 400, code: 'invalid_request' });
    expect(pick(await c.call({ serviceId: down.id, request: 'x', baseUrl: BASE, payment: pay }))).toEqual({ kind: 'rejected', status: 503, code: 'service_unavailable' });
    expect(pick(await core({}).call({ serviceId: echo.id, request: 'x', baseUrl: BASE, payment: pay }))).toEqual({ kind: 'rejected', status: 503, code: 'service_unavailable' });
    const bad = await c.call({ serviceId: echo.id, request: 'bad', baseUrl: BASE, payment: pay });
    expect(bad).toEqual({ kind: 'rejected', status: 400, error: { code: 'invalid_request', message: 'bad input', details: { at: 0 } } });
    expect(native.calls).toHaveLength(0);
    expect(c.isForSale(echo)).toBe(true);
    expect(c.isForSale(down)).toBe(false);
    expect(core({}).isForSale(echo)).toBe(false);
  });
});

describe('quotes and settlements', () => {
  test('no payment: a 402 quote bound to the request; with the USDC rail on, both options', async () => {
    const o = await core({ native: recordingNative(mismatch), usdc: recordingUsdc() }).call({ serviceId: echo.id, request: 'Europe/Berlin', baseUrl: BASE });
    expect(o.kind).toBe('quote');
    if (o.kind !== 'quote') return;
    expect(o.status).toBe(402);
    expect(o.quote.accepts.map((a) => a.scheme)).toEqual(['native-x402', 'exact']);
    expect(o.quote.accepts[0]).toMatchObject({ resource: `${BASE}/api/x402/${echo.id}`, payTo: 'tnative1payee', extra: { sellerId: '0123456789abcdef', commitment: COMMITMENT_SCHEME, confirmations: 1, serviceId: echo.id } });
    expect(o.quote.accepts[0]!.extra).not.toHaveProperty('requestHash'); // the payer's commitment: only the payer can make it
  });

  test('a native refusal carries the quote; over HTTP it is a 402 with accepts and the coded error', async () => {
    const native = recordingNative(mismatch);
    const c = core({ native });
    const o = await c.call({ serviceId: echo.id, request: 'hi', baseUrl: BASE, payment: { rail: 'native', txId: 'ab'.repeat(32), waitMs: 60_000 } });
    expect(o).toMatchObject({ kind: 'refused', status: 402, rail: 'native', error: { code: 'request_mismatch' } });
    expect(outcomeBody(o)).toMatchObject({ x402: true, x402Version: 1, accepts: [{ scheme: 'native-x402' }], error: { code: 'request_mismatch' } });
    // The rail got the validated input, and a wait clipped to what the request's time leaves after the run.
    expect(native.calls[0]).toMatchObject({ request: 'hi', input: 'input:hi', waitMs: 20_000 - 5_000 - 1000 });

    const server: HttpServer = createHttpServer(
      { host: '127.0.0.1', port: 0, bodyLimit: 64 * 1024, timeoutMs: 10_000, version: 'test' },
      { chain: {} as ChainReader, mempool: {} as MempoolReader & TxSubmitter, params, routers: [createX402Router(c)], errorStatuses: PAYMENT_HTTP_STATUS },
    );
    await server.start();
    try {
      const res = await fetch(`${server.url}/api/x402/${echo.id}?wait=3`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ request: 'hi', payment: { txId: 'ab'.repeat(32), salt: '5a'.repeat(32) } }) });
      const body = (await res.json()) as { accepts: { scheme: string }[]; error: { code: string } };
      expect(res.status).toBe(402);
      expect(body.accepts.map((a) => a.scheme)).toEqual(['native-x402']);
      expect(body.error.code).toBe('request_mismatch');
      expect(native.calls[1]).toMatchObject({ waitMs: 3_000, txId: 'ab'.repeat(32), salt: '5a'.repeat(32) });
      // A salt that is not a string is a malformed payment, refused before the rail.
      const badSalt = await fetch(`${server.url}/api/x402/${echo.id}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ request: 'hi', payment: { txId: 'ab'.repeat(32), salt: 7 } }) });
      expect({ status: badSalt.status, code: ((await badSalt.json()) as { error: { code: string } }).error.code }).toEqual({ status: 400, code: 'invalid_payment' });
      const badWait = await fetch(`${server.url}/api/x402/${echo.id}?wait=99`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ request: 'hi', payment: { txId: 'ab'.repeat(32) } }) });
      expect({ status: badWait.status, code: ((await badWait.json()) as { error: { code: string } }).error.code }).toEqual({ status: 400, code: 'invalid_request' });
      expect(native.calls).toHaveLength(2);
    } finally {
      await server.stop();
    }
  });

  test('while the payee owes a refund it cannot pay: no quote of a sale it could not refund from what it holds (503 payee_underfunded), the cheaper ones still; a payment already made still settles', async () => {
    const native = recordingNative(mismatch);
    // echo costs 200,000 and a refund's fee 5,000: the payee holding 204,999 could not refund a call of it.
    let cover = { stuck: { count: 1, amountBase: 300_000n }, spendableBase: 204_999n, refundFeeBase: 5_000n };
    const c = core({ native, refundCover: () => cover });
    const o = await c.call({ serviceId: echo.id, request: 'hi', baseUrl: BASE });
    expect(o).toMatchObject({ kind: 'rejected', status: 503, error: { code: 'payee_underfunded', refundsStuck: 1, refundsStuckBase: '300000', priceBase: '200000', spendableBase: '204999' } });
    expect(c.refundCover()).toBe(cover);
    const paid = await c.call({ serviceId: echo.id, request: 'hi', baseUrl: BASE, payment: { rail: 'native', txId: 'ab'.repeat(32), salt: '5a'.repeat(32) } });
    expect('error' in paid && paid.error.code).toBe('request_mismatch'); // the rail's own answer: it ran
    expect(native.calls).toHaveLength(1);
    // One base unit more: a call of echo could be refunded from what the payee holds, so it is quoted.
    cover = { ...cover, spendableBase: 205_000n };
    expect((await c.call({ serviceId: echo.id, request: 'hi', baseUrl: BASE })).status).toBe(402);
    // Nothing stuck: quoted whatever the payee holds (a payee without a float is warned, not stopped).
    cover = { stuck: { count: 0, amountBase: 0n }, spendableBase: 0n, refundFeeBase: 5_000n };
    expect((await c.call({ serviceId: echo.id, request: 'hi', baseUrl: BASE })).status).toBe(402);
  });

  test('malformed payments, USDC while the rail is off, and syncing are refused with the quote before any rail runs', async () => {
    const native = recordingNative(mismatch);
    let syncing = false;
    const c = core({ native, isSyncing: () => syncing });
    const malformed = await c.call({ serviceId: echo.id, request: 'hi', baseUrl: BASE, payment: { rail: 'native', malformed: { code: 'invalid_payment', message: 'no txId' } } });
    expect(malformed).toMatchObject({ kind: 'refused', status: 400, rail: 'native', error: { code: 'invalid_payment' }, quote: { x402: true } });
    const off = await c.call({ serviceId: echo.id, request: 'hi', baseUrl: BASE, payment: { rail: 'usdc', header: 'eyJ9' } });
    expect(off).toMatchObject({ kind: 'refused', status: 402, rail: 'usdc', error: { code: 'unsupported_scheme' } });
    syncing = true;
    const behind = await c.call({ serviceId: echo.id, request: 'hi', baseUrl: BASE, payment: { rail: 'native', txId: 'cd'.repeat(32) } });
    expect(behind).toMatchObject({ kind: 'refused', status: 503, rail: 'native', txId: 'cd'.repeat(32), error: { code: 'node_syncing' } });
    expect(outcomeBody(behind)).toEqual({ error: { code: 'node_syncing', message: expect.any(String) } });
    // Quotes are still given while syncing.
    expect((await c.call({ serviceId: echo.id, request: 'hi', baseUrl: BASE })).kind).toBe('quote');
    expect(native.calls).toHaveLength(0);
  });

  test('USDC: a decoded payload reaches the rail as the same object, against the quoted option; refusals say paid: false', async () => {
    const usdc = recordingUsdc();
    const c = core({ native: recordingNative(mismatch), usdc });
    const payload = { x402Version: 1, scheme: 'exact', network: 'base', payload: { signature: '0x', authorization: {} } };
    const o = await c.call({ serviceId: echo.id, request: 'hi', baseUrl: BASE, payment: { rail: 'usdc', payload } });
    expect(usdc.payments[0]).toBe(payload);
    if (o.kind !== 'refused') throw new Error(`expected a refusal, got ${o.kind}`);
    expect(usdc.reqs[0]).toEqual(o.quote.accepts[1]);
    expect(outcomeBody(o)).toMatchObject({ accepts: [{ scheme: 'native-x402' }, { scheme: 'exact' }], error: { code: 'invalid_exact_evm_payload_signature' }, payer: '0xabc' });
    expect(outcomeBody({ ...refusal(409, { code: 'payment_already_used', message: 'used' }, { rail: 'usdc' }), quote: o.quote })).toEqual({ paid: false, error: { code: 'payment_already_used', message: 'used' } });
  });
});

describe('payments for a service that is gone or not for sale', () => {
  test('the native rail names the refund (payment_refunded) or the payment stays unknown; the wait is clipped; no settle runs', async () => {
    const refunded = refusal(409, { code: 'payment_refunded', message: 'refunded', txId: 'ab'.repeat(32), refundTxId: 'cd'.repeat(32), reason: 'unknown_service' }, { rail: 'native', txId: 'ab'.repeat(32) });
    const asked: { txId: string; waitMs: number }[] = [];
    let answer: typeof refunded | undefined = refunded;
    const native: NativeRail = { ...recordingNative(mismatch), settleRefused: async (txId, waitMs) => (asked.push({ txId, waitMs }), answer) };
    const c = core({ native, requestBudgetMs: 20_000 });
    const pay = { rail: 'native', txId: 'ab'.repeat(32), waitMs: 60_000 } as const;
    const gone = await c.call({ serviceId: 'native-nope', request: 'x', baseUrl: BASE, payment: pay });
    expect(gone).toEqual({ kind: 'rejected', status: 409, error: refunded.error });
    expect(outcomeBody(gone)).toEqual({ error: { code: 'payment_refunded', message: 'refunded', txId: 'ab'.repeat(32), refundTxId: 'cd'.repeat(32), reason: 'unknown_service' } });
    expect((await c.call({ serviceId: down.id, request: 'x', baseUrl: BASE, payment: pay })).status).toBe(409);
    expect(asked).toEqual([
      { txId: 'ab'.repeat(32), waitMs: 19_000 },
      { txId: 'ab'.repeat(32), waitMs: 20_000 - down.timeoutMs - 1000 },
    ]);
    // Not a refused payment: the usual answers; without a payment the rail is not asked.
    answer = undefined;
    expect((await c.call({ serviceId: 'native-nope', request: 'x', baseUrl: BASE, payment: pay })).status).toBe(404);
    expect((await c.call({ serviceId: down.id, request: 'x', baseUrl: BASE })).status).toBe(503);
    expect(asked).toHaveLength(3);
    // A service for sale never takes this path.
    await c.call({ serviceId: echo.id, request: 'x', baseUrl: BASE, payment: pay });
    expect(asked).toHaveLength(3);
  });
});

describe("provider services: both rails, and a provider's start-up grace", () => {
  const provider = { ...stubService('echo-bot-upper', async () => 'ok'), nodeOperated: false, providerAgent: 'echo-bot', timeoutMs: 5_000 };
  let online = false;
  let graced = false;
  const providerCatalog: ServiceCatalog = {
    get: (id) => (id === provider.id ? provider : undefined),
    validateInput: (_def, request) => ({ ok: true, input: request }),
    isAvailable: () => online,
    isHonorable: () => online || graced,
  };

  test('quoted with the USDC option when the rail is on; in grace a native payment settles while quotes and USDC calls are refused 503', async () => {
    const native = recordingNative(mismatch);
    const usdc = recordingUsdc();
    const c = core({ catalog: providerCatalog, native, usdc });
    online = true;
    const quote = await c.call({ serviceId: provider.id, request: 'x', baseUrl: BASE });
    expect(quote.kind === 'quote' && quote.quote.accepts.map((a) => a.scheme)).toEqual(['native-x402', 'exact']);
    online = false;
    graced = true;
    const code = (o: PaidCallOutcome) => ('error' in o ? o.error.code : o.kind);
    expect(code(await c.call({ serviceId: provider.id, request: 'x', baseUrl: BASE }))).toBe('service_unavailable');
    expect(code(await c.call({ serviceId: provider.id, request: 'x', baseUrl: BASE, payment: { rail: 'usdc', header: 'e30=' } }))).toBe('service_unavailable');
    expect(code(await c.call({ serviceId: provider.id, request: 'x', baseUrl: BASE, payment: { rail: 'native', txId: 'ab'.repeat(32) } }))).toBe('request_mismatch');
    expect([native.calls.length, usdc.payments.length]).toEqual([1, 0]);
    // The grace over, the agent still away: the paid call is no longer served here.
    graced = false;
    expect(code(await c.call({ serviceId: provider.id, request: 'x', baseUrl: BASE, payment: { rail: 'native', txId: 'ab'.repeat(32) } }))).toBe('service_unavailable');
    expect(native.calls).toHaveLength(1);
  });
});
