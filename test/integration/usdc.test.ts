/**
 * The USDC rail end to end: a real devnet node process with `--usdc-pay-to` and
 * `--facilitator-url` pointing at the test facilitator running as its own process on 127.0.0.1
 * (it checks signatures and amounts with viem and demands the configured auth header).
 *
 * Both official x402 clients, unchanged, each with a viem local account, pay the node: the legacy
 * `x402-fetch` 1.2.0 (which cannot parse the spec's two-option 402, so it asks for the USDC option
 * with `?rail=usdc` or `Prefer: rail=usdc`) and `@x402/fetch` 2.x (reads the v2
 * `PAYMENT-REQUIRED` header, pays with `PAYMENT-SIGNATURE`). Then replays, every malformed or
 * wrong payment, and a hanging facilitator over HTTP.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFacilitatorProcess, type FacilitatorProcess } from '../helpers/facilitator.js';
import { decodeHeader, encodeHeader, NODE_PAY_TO, otherAccount, PAYER_KEY, payerAccount, paymentHeader, referenceViem, requireViem } from '../helpers/facilitatorPayments.js';
import { startNode, type NodeProc } from '../helpers/nodeProcess.js';
import { loadReference } from '../helpers/reference.js';

// The official clients live in reference/ (installed on first use); without it their tests are skipped, saying why.
const reference = await loadReference();
if (!reference.ok) console.warn(`SKIPPED: the official x402 client tests need reference/ installed (npm ci --prefix reference): ${reference.reason}`);
const clients = reference.ok && referenceViem.ok ? reference : undefined;
const describeWithClients = clients ? describe : describe.skip;
// The test facilitator and the hand-made payments use viem from reference/ too.
const describeUsdc = referenceViem.ok ? describe : describe.skip;
const privateKeyToAccount = (key: `0x${string}`) => requireViem().privateKeyToAccount(key);

const AUTH: readonly [string, string] = ['X-Api-Key', 'test-facilitator-key'];
const SERVICE = 'native-world-clock';
const PRICE_ATOMIC = '1000'; // 0.002 NATIVE at the devnet reference price $0.50

let dir: string;
let node: NodeProc;
let facilitator: FacilitatorProcess;
let url: string;

beforeAll(async () => {
  if (!referenceViem.ok) return;
  dir = mkdtempSync(join(tmpdir(), 'native-usdc-'));
  facilitator = await startFacilitatorProcess({ auth: AUTH });
  node = await startNode(
    ['--dev', '--data-dir', join(dir, 'data'), '--http-port', '0', '--no-mine', '--no-stratum', '--usdc-pay-to', NODE_PAY_TO.toLowerCase(), '--facilitator-url', facilitator.url, '--facilitator-timeout', '1500', '--base-rpc-url', 'http://127.0.0.1:9', '--metrics-port', '0'],
    { cwd: dir, env: { NATIVE_FACILITATOR_AUTH_HEADER: `${AUTH[0]}: ${AUTH[1]}` } },
  );
  url = node.url;
}, 120_000);

afterAll(async () => {
  node?.child.kill('SIGTERM');
  await node?.exited;
  await facilitator?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  await facilitator?.control.reset();
});

const endpoint = (q = '') => `${url}/api/x402/${SERVICE}${q}`;
const init = (headers: Record<string, string> = {}): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ request: 'Europe/Berlin' }) });

async function post(headers: Record<string, string> = {}, q = ''): Promise<{ status: number; body: Record<string, any>; headers: Headers }> {
  const res = await fetch(endpoint(q), init(headers));
  return { status: res.status, body: (await res.json()) as Record<string, any>, headers: res.headers };
}

describeUsdc('USDC rail quotes', () => {
  test('the 402 keeps the spec body (both options) and adds the x402 v2 PAYMENT-REQUIRED header', async () => {
    const q = await post();
    expect(q.status).toBe(402);
    expect(q.body.accepts.map((a: { scheme: string }) => a.scheme)).toEqual(['native-x402', 'exact']);
    const usdc = q.body.accepts[1];
    expect(usdc).toMatchObject({ network: 'base', maxAmountRequired: PRICE_ATOMIC, payTo: NODE_PAY_TO, asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', extra: { name: 'USD Coin', version: '2' }, mimeType: 'application/json', resource: endpoint() });
    expect(usdc.outputSchema).toBeUndefined();
    const v2 = decodeHeader(q.headers.get('payment-required'));
    // Every option, networks in CAIP-2 form: this chain as native:<chainId>, Base as eip155:8453.
    const native = q.body.accepts[0];
    expect(v2).toEqual({
      x402Version: 2,
      resource: { url: endpoint(), description: usdc.description, mimeType: 'application/json' },
      accepts: [
        // The native option names the request its payment must commit to (a v2 scheme client is not shown the body).
        { scheme: 'native-x402', network: 'native:1337', amount: native.maxAmountRequired, asset: 'NATIVE', payTo: native.payTo, maxTimeoutSeconds: native.maxTimeoutSeconds, extra: { ...native.extra, request: 'Europe/Berlin' } },
        // The seller a bound authorization commits to, and how (x402/usdc/commitment.ts); official clients ignore both.
        { scheme: 'exact', network: 'eip155:8453', amount: PRICE_ATOMIC, asset: usdc.asset, payTo: NODE_PAY_TO, maxTimeoutSeconds: 60, extra: { name: 'USD Coin', version: '2', sellerId: native.extra.sellerId, commitment: 'native-x402/usdc-commitment/v1' } },
      ],
      // The x402 payment-identifier extension, optional: a retry carrying the first call's id gets its stored answer.
      extensions: {
        'payment-identifier': { info: { required: false }, schema: expect.objectContaining({ type: 'object' }) },
        // A sign-in challenge for this resource: the payer's other way to get a stored result again.
        'sign-in-with-x': expect.objectContaining({ info: expect.objectContaining({ uri: endpoint(), version: '1' }), supportedChains: [{ chainId: 'eip155:8453', type: 'eip191' }] }),
        // Signed offers, one per option (x402 Offer and Receipt extension; test/integration/offerReceipt.test.ts verifies them).
        'offer-receipt': { info: { offers: [expect.objectContaining({ format: 'jws', acceptIndex: 0 }), expect.objectContaining({ format: 'jws', acceptIndex: 1 })] }, schema: expect.objectContaining({ type: 'object' }) },
      },
    });
    expect(q.headers.get('vary')).toMatch(/prefer/i);
  });

  test('?rail=usdc and Prefer: rail=usdc serve the USDC option alone', async () => {
    const byQuery = await post({}, '?rail=usdc');
    expect(byQuery.status).toBe(402);
    expect(byQuery.body).toMatchObject({ x402: true, x402Version: 1, error: 'Payment Required' });
    expect(byQuery.body.accepts.map((a: { scheme: string }) => a.scheme)).toEqual(['exact']);
    const byPrefer = await post({ prefer: 'respond-async, rail=usdc' });
    expect(byPrefer.body.accepts.map((a: { scheme: string }) => a.scheme)).toEqual(['exact']);
    expect(byPrefer.headers.get('preference-applied')).toBe('rail=usdc');
  });

  test('the protocol descriptor reflects the configured rail', async () => {
    const d = (await (await fetch(`${url}/.well-known/x402`)).json()) as Record<string, any>;
    expect(d.baseUsdc).toMatchObject({ payTo: NODE_PAY_TO, facilitatorUrl: facilitator.url, network: 'base', chainId: 8453, scheme: 'exact' });
  });
});

describeWithClients('official x402 clients pay the node unchanged', () => {
  test('x402-fetch 1.2.0 with a viem local account: the spec body breaks it, ?rail=usdc or Prefer serves it', async () => {
    const account = privateKeyToAccount(PAYER_KEY);
    const pay = clients!.legacy.wrapFetchWithPayment(fetch, account);
    // The documented limitation of the legacy client: it parses every accepts entry strictly.
    await expect(pay(endpoint(), init())).rejects.toThrow();
    for (const [q, headers] of [['?rail=usdc', {}], ['', { prefer: 'rail=usdc' }]] as const) {
      const res = await pay(endpoint(q), init(headers));
      const body = (await res.json()) as Record<string, any>;
      expect({ status: res.status, body }).toMatchObject({ status: 200, body: { paid: true, result: { timezone: 'Europe/Berlin' } } });
      const settled = clients!.legacy.decodeXPaymentResponse(res.headers.get('x-payment-response')!);
      expect(settled).toMatchObject({ success: true, network: 'base', payer: account.address });
      expect(body.receipt).toMatchObject({ serviceId: SERVICE, caller: account.address, amount: 0.001, txId: settled.transaction });
      expect(res.headers.get('payment-response')).toBe(res.headers.get('x-payment-response'));
    }
    const calls = await facilitator.control.calls();
    expect({ verify: calls.verify, settle: calls.settle, unauthorized: calls.unauthorized }).toEqual({ verify: 2, settle: 2, unauthorized: 0 });
    expect(calls.settled.map((s) => s.value)).toEqual([PRICE_ATOMIC, PRICE_ATOMIC]);
  });

  test('@x402/fetch 2.x with a viem local account pays through PAYMENT-SIGNATURE (x402 v2)', async () => {
    const account = privateKeyToAccount(PAYER_KEY);
    const { x402Client, registerExactEvmScheme, wrapFetchWithPayment, decodePaymentResponseHeader } = clients!.v2;
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: account });
    const pay = wrapFetchWithPayment(fetch, client);
    const res = await pay(endpoint(), init());
    const body = (await res.json()) as Record<string, any>;
    expect(res.status).toBe(200);
    const settled = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    expect(settled).toMatchObject({ success: true, network: 'eip155:8453', payer: account.address });
    expect(body).toMatchObject({ paid: true, result: { timezone: 'Europe/Berlin' }, receipt: { caller: account.address, txId: settled.transaction } });
    const calls = await facilitator.control.calls();
    expect(calls.lastSettle).toMatchObject({ x402Version: 2, paymentRequirements: { network: 'eip155:8453', amount: PRICE_ATOMIC, payTo: NODE_PAY_TO } });
  });

  test('@x402/fetch 2.x also reads the spec body alone (v1) and pays through X-PAYMENT', async () => {
    const { x402Client, registerExactEvmScheme, x402HTTPClient } = clients!.v2;
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: privateKeyToAccount(PAYER_KEY) });
    const http = new x402HTTPClient(client);
    const q = await post();
    // Without the header, the v1 body with both options: the native one is skipped, the exact one paid.
    // (Re-parsed here: jest's sandbox realm fails the client's `instanceof Object` on fetch's objects.)
    const required = http.getPaymentRequiredResponse(() => null, JSON.parse(JSON.stringify(q.body)));
    const payload = await client.createPaymentPayload(required);
    const headers = http.encodePaymentSignatureHeader(payload);
    expect(Object.keys(headers)).toEqual(['X-PAYMENT']);
    const paid = await post(headers);
    expect(paid.status).toBe(200);
    expect(decodeHeader(paid.headers.get('x-payment-response'))).toMatchObject({ success: true, network: 'base' });
  });
});

describeUsdc('USDC payments over HTTP', () => {
  test('one authorization replayed concurrently and later executes and settles once', async () => {
    const header = await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC });
    const outs = await Promise.all(Array.from({ length: 12 }, () => post({ 'x-payment': header })));
    // One request wins the reservation; the others find it in progress (409) or, once it settled,
    // are refused: the bare authorization is public on Base then, so it proves nobody the payer.
    const ok = outs.filter((o) => o.status === 200);
    expect(ok).toHaveLength(1);
    expect(outs.filter((o) => o.status !== 200).every((o) => o.status === 409 && ['settlement_in_progress', 'payment_already_used'].includes(o.body.error.code))).toBe(true);
    const later = await post({ 'x-payment': header });
    expect(later.status).toBe(409);
    expect(later.body.error.code).toBe('payment_already_used');
    expect(later.body.result).toBeUndefined();
    // Signed in as the payer (SIGN-IN-WITH-X, from a fresh 402's challenge): the stored answer of that one run.
    const { createSiweMessage } = await import('viem/siwe');
    const { privateKeyToAccount } = await import('viem/accounts');
    const challenge = decodeHeader<Record<string, any>>((await post()).headers.get('payment-required'))['extensions']['sign-in-with-x'].info;
    // A sign-in proves the payer of one payment: its requestId is the authorization's nonce.
    const requestId = decodeHeader<{ payload: { authorization: { nonce: string } } }>(header).payload.authorization.nonce;
    const signInAs = async (account: ReturnType<typeof privateKeyToAccount>) => {
      const message = createSiweMessage({ ...challenge, requestId, address: account.address as `0x${string}`, chainId: 8453, issuedAt: new Date(challenge.issuedAt), expirationTime: new Date(challenge.expirationTime) });
      return Buffer.from(JSON.stringify({ ...challenge, requestId, address: account.address, chainId: 'eip155:8453', type: 'eip191', signature: await account.signMessage({ message }) })).toString('base64');
    };
    const asPayer = await post({ 'x-payment': header, 'sign-in-with-x': await signInAs(privateKeyToAccount(PAYER_KEY)) });
    expect(asPayer.status).toBe(200);
    expect(asPayer.body.receipt).toEqual(ok[0]!.body.receipt);
    const asOther = await post({ 'x-payment': header, 'sign-in-with-x': await signInAs(privateKeyToAccount(`0x${'42'.repeat(32)}`)) });
    expect(asOther.status).toBe(409);
    expect(asOther.body.result).toBeUndefined();
    const other = await fetch(endpoint(), { method: 'POST', headers: { 'x-payment': header }, body: JSON.stringify({ request: 'Asia/Tokyo' }) });
    expect(other.status).toBe(409);
    expect(((await other.json()) as Record<string, any>).error.code).toBe('payment_already_used');
    const calls = await facilitator.control.calls();
    expect({ verify: calls.verify, settle: calls.settle }).toEqual({ verify: 1, settle: 1 });
  });

  test('expired, wrong amount, wrong payTo, bad signature, malformed base64 or JSON: 402 with a snake_case reason', async () => {
    const t = Math.floor(Date.now() / 1000);
    const cases: [string, string, string][] = [
      ['expired', await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC, validBefore: t - 10 }), 'invalid_exact_evm_payload_authorization_valid_before'],
      ['wrong amount', await paymentHeader({ payTo: NODE_PAY_TO, value: '999' }), 'invalid_exact_evm_payload_authorization_value'],
      ['wrong payTo', await paymentHeader({ payTo: otherAccount().address, value: PRICE_ATOMIC }), 'invalid_exact_evm_payload_recipient_mismatch'],
      ['bad signature', await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC, account: otherAccount(), claimedFrom: payerAccount().address }), 'invalid_exact_evm_payload_signature'],
      ['malformed base64', 'eyJ4NDAyVmVyc2lvbiI6!!!', 'invalid_payment_base64'],
      ['malformed JSON', Buffer.from('{"x402Version": 1, "scheme": ').toString('base64'), 'invalid_payment_json'],
      ['not a payment', encodeHeader({ x402Version: 2, note: 'header-reachability census; not a payment' }), 'invalid_payload'],
    ];
    for (const [name, header, code] of cases) {
      for (const h of ['x-payment', 'payment-signature']) {
        const out = await post({ [h]: header });
        expect({ name, h, status: out.status, code: out.body.error?.code }).toEqual({ name, h, status: 402, code });
        expect(out.body.accepts.length).toBe(2);
        expect(decodeHeader(out.headers.get('payment-required'))).toMatchObject({ x402Version: 2, error: code });
      }
    }
    const calls = await facilitator.control.calls();
    expect({ verify: calls.verify, settle: calls.settle }).toEqual({ verify: 0, settle: 0 });
  });

  test('a facilitator refusal is a 402 with its reason; a hanging facilitator a 504 and nothing settled; a failed settle is checked on Base', async () => {
    await facilitator.control.setMode({ verify: { reject: 'insufficient_funds' } });
    const refused = await post({ 'x-payment': await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC }) });
    expect({ status: refused.status, code: refused.body.error.code }).toEqual({ status: 402, code: 'insufficient_funds' });
    expect(refused.body.result).toBeUndefined();

    await facilitator.control.setMode({ verify: 'hang' });
    const started = Date.now();
    const hung = await post({ 'x-payment': await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC }) });
    expect({ status: hung.status, code: hung.body.error.code, paid: hung.body.paid }).toEqual({ status: 504, code: 'facilitator_unavailable', paid: false });
    expect(Date.now() - started).toBeLessThan(10_000);

    // The facilitator's catch-all: it may have broadcast the transfer (a definitive refusal would be final, 402).
    await facilitator.control.setMode({ verify: 'ok', settle: { reject: 'unexpected_settle_error' } });
    const unsettled = await post({ 'x-payment': await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC }) });
    // A failed settlement may still have been broadcast: the node keeps the result and checks Base
    // (here an RPC URL that answers nothing, so the payment stays pending) until validBefore.
    expect({ status: unsettled.status, code: unsettled.body.error.code }).toEqual({ status: 502, code: 'settlement_pending' });
    expect(unsettled.body.error.message).toMatch(/unexpected_settle_error.*retry with the same payment header after \d+ s/);
    expect(Number(unsettled.headers.get('retry-after'))).toBe(unsettled.body.retryAfter);
    expect(unsettled.body.retryAfter).toBeGreaterThan(0);
    expect(unsettled.body.result).toBeUndefined();
    const status = (await (await fetch(`${url}/api/v1/status`)).json()) as { payments: { usdc: Record<string, unknown> } };
    expect(status.payments.usdc).toMatchObject({ settlePending: 1, expiredUnsettled: 0, reconciling: true });
    const metricsUrl = String(node.lines.find((l) => l.msg === 'metrics listening')?.url);
    const metrics = await (await fetch(`${metricsUrl}`)).text();
    expect(metrics).toMatch(/^native_payments\{status="settle_pending"\} 1$/m);
    expect(metrics).toMatch(/^native_payments\{status="expired_unsettled"\} 0$/m);
    expect(unsettled.headers.get('x-payment-response')).toBeNull();
    const calls = await facilitator.control.calls();
    expect(calls.settled.length).toBe(0);
  });

  test('settled USDC calls are counted in the catalog (provenCallsUsdc, provenVolumeUsdc)', async () => {
    const bazaar = (await (await fetch(`${url}/api/x402/bazaar?q=clock`)).json()) as { resources: { serviceId: string; metadata: Record<string, number> }[] };
    const entry = bazaar.resources.find((r) => r.serviceId === SERVICE)!;
    // Settled so far in this file: 2 (x402-fetch) + 1 (@x402/fetch v2) + 1 (v1) + 1 (replay).
    expect(entry.metadata.provenCallsUsdc).toBe(5);
    expect(entry.metadata.provenVolumeUsdc).toBeCloseTo(0.005, 9);
  });

  test('a payment header and a native payment {txId, salt} together are a 400', async () => {
    const res = await fetch(endpoint(), { method: 'POST', headers: { 'x-payment': await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC }) }, body: JSON.stringify({ request: 'Europe/Berlin', payment: { txId: 'ab'.repeat(32), salt: 'cd'.repeat(32) } }) });
    expect(res.status).toBe(400);
    // Refused for carrying two payments (not for a malformed native one).
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_request');
  });
});

describeUsdc('USDC rail without a Base RPC URL', () => {
  test('the node says at start that ambiguous settlements cannot be reconciled; a failed settle withholds the result without "contact the operator"', async () => {
    const other = await startNode(
      ['--dev', '--data-dir', join(dir, 'data-norpc'), '--http-port', '0', '--no-mine', '--no-stratum', '--usdc-pay-to', NODE_PAY_TO.toLowerCase(), '--facilitator-url', facilitator.url, '--facilitator-timeout', '1500', '--base-rpc-url', 'none'],
      { cwd: dir, env: { NATIVE_FACILITATOR_AUTH_HEADER: `${AUTH[0]}: ${AUTH[1]}` } },
    );
    try {
      expect(other.lines.some((l) => /cannot be reconciled automatically/.test(String(l.msg)))).toBe(true);
      await facilitator.control.setMode({ settle: 'hang' });
      const res = await fetch(`${other.url}/api/x402/${SERVICE}`, init({ 'x-payment': await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC }) }));
      const body = (await res.json()) as { paid: boolean; result?: unknown; error: { code: string; message: string } };
      expect({ status: res.status, code: body.error.code, paid: body.paid, result: body.result }).toEqual({ status: 504, code: 'facilitator_unavailable', paid: false, result: undefined });
      expect(body.error.message).not.toMatch(/operator/);
      const status = (await (await fetch(`${other.url}/api/v1/status`)).json()) as { payments: { usdc: Record<string, unknown> } };
      expect(status.payments.usdc).toMatchObject({ settlePending: 0, failed: 1, reconciling: false });
    } finally {
      other.child.kill('SIGTERM');
      await other.exited;
    }
  }, 60_000);
});
