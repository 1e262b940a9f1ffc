/**
 * USDC payments over MCP (x402 MCP convention: the decoded `X-PAYMENT` payload in
 * `_meta["x402/payment"]`), in-process through `callTool` with the real USDC settlement, ledger
 * and a test facilitator on 127.0.0.1: a paid call runs once and answers with
 * `x402/payment-response`; its repeat with the same payment-identifier gets the stored answer, the bare authorization does not; a wrong amount, a failing service
 * and a syncing node are refused the MCP way, nothing charged.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import { callTool, X402_PAYMENT_META, type McpModules } from '../../node/api/mcp.js';
import { createReferencePriceSource } from '../../x402/core/pricing.js';
import { referenceViem, signedPayment } from '../helpers/facilitatorPayments.js';

// Payments are signed with viem from reference/ (installed on first use); without it these suites skip.
const describeUsdc = referenceViem.ok ? describe : describe.skip;
import { startUsdcCalls, type UsdcCalls } from '../helpers/usdcCalls.js';

const BASE = 'http://127.0.0.1:8402';

let u: UsdcCalls;
let f: UsdcCalls['facilitator'];
let m: McpModules;
let runs: () => number;

beforeAll(async () => {
  u = await startUsdcCalls({ verifyTimeoutMs: 2000, settleTimeoutMs: 2000 });
  f = u.facilitator;
  runs = u.runs;
  m = {
    registry: { list: () => [...u.services.values()], get: (id: string) => u.services.get(id) },
    paidCalls: u.core({ usdc: true }),
    params: u.params,
    nativeUsd: createReferencePriceSource(u.params),
    catalog: () => {
      throw new Error('not used by paid tools');
    },
    version: 'test',
  };
});
afterAll(async () => {
  await u.stop();
});
beforeEach(() => u.reset());

type Result = Awaited<ReturnType<typeof callTool>> & { structuredContent?: Record<string, any>; _meta?: Record<string, any> };

/** The USDC option of a tool's unpaid answer. */
async function usdcQuote(tool: string, request: string): Promise<{ maxAmountRequired: string; payTo: string }> {
  const unpaid = (await callTool(m, BASE, tool, { request }, undefined)) as Result;
  expect(unpaid.isError).toBe(true);
  const option = (unpaid.structuredContent!.accepts as { scheme: string; maxAmountRequired: string; payTo: string }[]).find((a) => a.scheme === 'exact');
  expect(option).toBeDefined();
  return option!;
}

describeUsdc('USDC over MCP', () => {
  test('a paid call runs once, answers with x402/payment-response; its repeat with the same payment-identifier gets the stored answer, the bare one 409', async () => {
    const q = await usdcQuote('native-echo', 'hi');
    // With the x402 payment-identifier extension: the id (never on chain) is what lets a repeat get the stored answer.
    const signed = await signedPayment({ payTo: q.payTo, value: q.maxAmountRequired });
    const payment = { ...signed, extensions: { 'payment-identifier': { info: { required: false, id: 'pay_mcp_repeat_0123456789' } } } };
    const out = (await callTool(m, BASE, 'native-echo', { request: 'hi' }, { [X402_PAYMENT_META]: payment })) as Result;
    expect(out.isError).toBeFalsy();
    expect(out.structuredContent).toMatchObject({ paid: true, result: { echo: 'hi' }, receipt: { serviceId: 'native-echo', asset: 'USDC', amountAtomic: q.maxAmountRequired } });
    expect(out._meta![`x402/payment-response`]).toMatchObject({ success: true, network: 'base', transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/), payer: expect.stringMatching(/^0x/) });
    expect({ runs: runs(), settle: f.calls.settle }).toEqual({ runs: 1, settle: 1 });

    const again = (await callTool(m, BASE, 'native-echo', { request: 'hi' }, { [X402_PAYMENT_META]: payment })) as Result;
    expect(again.structuredContent).toEqual(out.structuredContent);
    expect({ runs: runs(), settle: f.calls.settle }).toEqual({ runs: 1, settle: 1 });
    // The bare authorization (public on Base once settled) gets no result.
    const bare = (await callTool(m, BASE, 'native-echo', { request: 'hi' }, { [X402_PAYMENT_META]: signed })) as Result;
    expect(bare.isError).toBe(true);
    expect(JSON.stringify(bare)).toContain('payment_already_used');
    expect(JSON.stringify(bare)).not.toContain('"echo"');
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
    expect({ runs: runs(), verify: f.calls.verify }).toEqual({ runs: 0, verify: 0 });
  });

  test('a failing service: an error result, not paid, no settle call', async () => {
    const q = await usdcQuote('native-broken', 'hi');
    const payment = await signedPayment({ payTo: q.payTo, value: q.maxAmountRequired });
    const out = (await callTool(m, BASE, 'native-broken', { request: 'hi' }, { [X402_PAYMENT_META]: payment })) as Result;
    expect(out.isError).toBe(true);
    expect(out.structuredContent).toMatchObject({ paid: false, error: { code: 'service_failed' } });
    expect(out._meta![`x402/payment-response`]).toMatchObject({ success: false, errorReason: 'service_failed' });
    expect({ runs: runs(), settle: f.calls.settle }).toEqual({ runs: 1, settle: 0 });
  });

  test('while the node syncs, a payment is refused with node_syncing before anything runs', async () => {
    const q = await usdcQuote('native-echo', 'hi');
    u.syncing = true;
    // With the x402 payment-identifier extension: the id (never on chain) is what lets a repeat get the stored answer.
    const signed = await signedPayment({ payTo: q.payTo, value: q.maxAmountRequired });
    const payment = { ...signed, extensions: { 'payment-identifier': { info: { required: false, id: 'pay_mcp_repeat_0123456789' } } } };
    const out = (await callTool(m, BASE, 'native-echo', { request: 'hi' }, { [X402_PAYMENT_META]: payment })) as Result;
    expect(out.isError).toBe(true);
    expect(out.structuredContent![`x402/payment-response`]).toMatchObject({ success: false, errorReason: 'node_syncing' });
    expect({ runs: runs(), verify: f.calls.verify }).toEqual({ runs: 0, verify: 0 });
  });
});
