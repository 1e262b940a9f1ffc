/**
 * USDC payments over MCP (x402 MCP convention: the decoded `X-PAYMENT` payload in
 * `_meta["x402/payment"]`), in-process through `callTool` with the real USDC settlement, ledger
 * and a test facilitator on 127.0.0.1: a paid call runs once and answers with
 * `x402/payment-response`; its repeat gets the stored answer; a wrong amount, a failing service
 * and a syncing node are refused the MCP way, nothing charged.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import { encodeAddress } from '../../consensus/address.js';
import { createDevnetChainParams, getDevPayeeKeyPair } from '../../consensus/devnet.js';
import { silentLogger } from '../../chain/types.js';
import { callTool, X402_PAYMENT_META, type McpModules } from '../../node/mcp.js';
import { ServiceError, type ServiceContext, type ServiceDefinition } from '../../services/types.js';
import { openLedger, type SettlementLedger } from '../../x402/ledger.js';
import { createReferencePriceSource } from '../../x402/pricing.js';
import type { NativeSettlement } from '../../x402/settle.js';
import { createFacilitator } from '../../x402/usdcFacilitator.js';
import { createUsdcSettlement } from '../../x402/usdcSettle.js';
import { startTestFacilitator, type TestFacilitator } from '../helpers/facilitator.js';
import { NODE_PAY_TO, signedPayment } from '../helpers/facilitatorPayments.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';
import { stubService } from '../helpers/stubService.js';

const params = createDevnetChainParams({ genesisBits: 0x207fffff });
const BASE = 'http://127.0.0.1:8402';
let runs = 0;
let syncing = false;

const services = new Map<string, ServiceDefinition>([
  ['native-echo', stubService('native-echo', async (_ctx, input) => (runs++, { echo: input }))],
  ['native-broken', stubService('native-broken', async () => {
    runs++;
    throw new ServiceError('service_failed', 'upstream is down');
  })],
]);

let f: TestFacilitator;
let ledger: SettlementLedger;
let m: McpModules;

beforeAll(async () => {
  f = await startTestFacilitator();
  ledger = await openLedger(join(await tmpDir(), 'ledger'));
  const context = { log: silentLogger, now: Date.now } as unknown as Omit<ServiceContext, 'signal'>;
  const usdcSettlement = createUsdcSettlement(ledger, context, { payTo: NODE_PAY_TO, facilitator: createFacilitator({ url: f.url, verifyTimeoutMs: 2000, settleTimeoutMs: 2000 }) });
  m = {
    registry: {
      list: () => [...services.values()],
      get: (id: string) => services.get(id),
      validateInput: (_def: ServiceDefinition, request: string | undefined) => ({ ok: true as const, input: request }),
      isAvailable: () => true,
    } as unknown as McpModules['registry'],
    // Only the native payee is read here: no native payment is made.
    settlement: { payTo: encodeAddress(getDevPayeeKeyPair().address, params.hrp) } as unknown as NativeSettlement,
    params,
    nativeUsd: createReferencePriceSource(params),
    usdc: { payTo: usdcSettlement.payTo },
    usdcSettlement,
    requestBudgetMs: 10_000,
    catalog: () => {
      throw new Error('not used by paid tools');
    },
    isSyncing: () => syncing,
    version: 'test',
  };
});
afterAll(async () => {
  await f.stop();
  await ledger.close();
  await cleanupTmp();
});
beforeEach(() => {
  f.reset();
  runs = 0;
  syncing = false;
});

type Result = Awaited<ReturnType<typeof callTool>> & { structuredContent?: Record<string, any>; _meta?: Record<string, any> };

/** The USDC option of a tool's unpaid answer. */
async function usdcQuote(tool: string, request: string): Promise<{ maxAmountRequired: string; payTo: string }> {
  const unpaid = (await callTool(m, BASE, tool, { request }, undefined)) as Result;
  expect(unpaid.isError).toBe(true);
  const option = (unpaid.structuredContent!.accepts as { scheme: string; maxAmountRequired: string; payTo: string }[]).find((a) => a.scheme === 'exact');
  expect(option).toBeDefined();
  return option!;
}

describe('USDC over MCP', () => {
  test('a paid call runs once, answers with x402/payment-response; its repeat gets the stored answer', async () => {
    const q = await usdcQuote('native-echo', 'hi');
    const payment = await signedPayment({ payTo: q.payTo, value: q.maxAmountRequired });
    const out = (await callTool(m, BASE, 'native-echo', { request: 'hi' }, { [X402_PAYMENT_META]: payment })) as Result;
    expect(out.isError).toBeFalsy();
    expect(out.structuredContent).toMatchObject({ paid: true, result: { echo: 'hi' }, receipt: { serviceId: 'native-echo', asset: 'USDC', amountAtomic: q.maxAmountRequired } });
    expect(out._meta![`x402/payment-response`]).toMatchObject({ success: true, network: 'base', transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/), payer: expect.stringMatching(/^0x/) });
    expect({ runs, settle: f.calls.settle }).toEqual({ runs: 1, settle: 1 });

    const again = (await callTool(m, BASE, 'native-echo', { request: 'hi' }, { [X402_PAYMENT_META]: payment })) as Result;
    expect(again.structuredContent).toEqual(out.structuredContent);
    expect({ runs, settle: f.calls.settle }).toEqual({ runs: 1, settle: 1 });
    // The same authorization for another request is refused.
    const other = (await callTool(m, BASE, 'native-echo', { request: 'other' }, { [X402_PAYMENT_META]: payment })) as Result;
    expect(other.isError).toBe(true);
    expect(other._meta![`x402/payment-response`]).toMatchObject({ success: false, errorReason: 'payment_already_used' });
  });

  test('a wrong amount is refused with the quote and the reason; nothing runs, the facilitator is not asked', async () => {
    const q = await usdcQuote('native-echo', 'hi');
    const payment = await signedPayment({ payTo: q.payTo, value: String(BigInt(q.maxAmountRequired) - 1n) });
    const out = (await callTool(m, BASE, 'native-echo', { request: 'hi' }, { [X402_PAYMENT_META]: payment })) as Result;
    expect(out.isError).toBe(true);
    expect(out.structuredContent!.accepts).toBeDefined(); // the quote again
    expect(out.structuredContent![`x402/payment-response`]).toMatchObject({ success: false, network: 'base' });
    expect(String(out.structuredContent![`x402/payment-response`].errorReason)).toMatch(/value|amount/);
    expect({ runs, verify: f.calls.verify }).toEqual({ runs: 0, verify: 0 });
  });

  test('a failing service: an error result, not paid, no settle call', async () => {
    const q = await usdcQuote('native-broken', 'hi');
    const payment = await signedPayment({ payTo: q.payTo, value: q.maxAmountRequired });
    const out = (await callTool(m, BASE, 'native-broken', { request: 'hi' }, { [X402_PAYMENT_META]: payment })) as Result;
    expect(out.isError).toBe(true);
    expect(out.structuredContent).toMatchObject({ paid: false, error: { code: 'service_failed' } });
    expect(out._meta![`x402/payment-response`]).toMatchObject({ success: false, errorReason: 'service_failed' });
    expect({ runs, settle: f.calls.settle }).toEqual({ runs: 1, settle: 0 });
  });

  test('while the node syncs, a payment is refused with node_syncing before anything runs', async () => {
    const q = await usdcQuote('native-echo', 'hi');
    syncing = true;
    const payment = await signedPayment({ payTo: q.payTo, value: q.maxAmountRequired });
    const out = (await callTool(m, BASE, 'native-echo', { request: 'hi' }, { [X402_PAYMENT_META]: payment })) as Result;
    expect(out.isError).toBe(true);
    expect(out.structuredContent![`x402/payment-response`]).toMatchObject({ success: false, errorReason: 'node_syncing' });
    expect({ runs, verify: f.calls.verify }).toEqual({ runs: 0, verify: 0 });
  });
});
