/**
 * The USDC rail in-process: payment header decoding (every malformed form a 402 reason), the local
 * EIP-3009 checks, the facilitator client's deadlines and retries, and the settlement flow
 * against the test facilitator with a real LevelDB ledger — one execution per authorization
 * however it is replayed, no run without a verified authorization, no settlement of a failed run,
 * no result without a settlement.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import { silentLogger } from '../../chain/types.js';
import { ServiceError, type ServiceContext, type ServiceDefinition } from '../../services/types.js';
import { openLedger, type SettlementLedger } from '../../x402/ledger/open.js';
import { usdcRequirements, type PaymentRequirements } from '../../x402/core/quote.js';
import { createFacilitator, FacilitatorUnavailableError, parseAuthHeader } from '../../x402/usdc/facilitator.js';
import { authorizationId, createUsdcSettlement, type UsdcOutcome, type UsdcSettlement } from '../../x402/usdc/settle.js';
import { commitmentExtension, usdcCommitmentNonce } from '../../x402/usdc/commitment.js';
import { verifyUsdcPaymentLocally } from '../../x402/usdc/verify.js';
import { checkPaymentPayload, decodePaymentHeader, paymentResponseHeaders, type UsdcPaymentPayload } from '../../x402/usdc/wire.js';
import { startTestFacilitator, type TestFacilitator } from '../helpers/facilitator.js';
import { decodeHeader, encodeHeader, malleate, NODE_PAY_TO, otherAccount, payerAccount, paymentHeader, referenceViem, signedPayment } from '../helpers/facilitatorPayments.js';

// Payments are signed with viem from reference/ (installed on first use); without it these suites skip.
const describeUsdc = referenceViem.ok ? describe : describe.skip;
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';
import { stubService } from '../helpers/stubService.js';

afterAll(cleanupTmp);

/** 0.002 NATIVE at $0.50 = $0.001 = 1000 USDC atomic units. */
const PRICE_ATOMIC = '1000';


function requirementsFor(def: ServiceDefinition): PaymentRequirements {
  return usdcRequirements(def, { resource: `http://127.0.0.1/api/x402/${def.id}`, network: 'native-devnet', chainId: 1337, payTo: 'tnative1x', sellerId: '0123456789abcdef', confirmations: 1, microUsd: 500_000n, usdc: { payTo: NODE_PAY_TO } });
}

async function decoded(header: string): Promise<UsdcPaymentPayload> {
  const d = decodePaymentHeader(header);
  if (!d.ok) throw new Error(`${d.code}: ${d.message}`);
  return d.payment;
}

const now = () => Math.floor(Date.now() / 1000);

describeUsdc('payment header decoding', () => {
  test('malformed base64, JSON and shapes are refused with snake_case reasons', async () => {
    const cases: [string, string][] = [
      ['not base64 at all!', 'invalid_payment_base64'],
      ['', 'invalid_payment_base64'],
      ['A', 'invalid_payment_base64'],
      ['a'.repeat(20_000), 'invalid_payment_base64'],
      [Buffer.from([0xff, 0xfe, 0x00]).toString('base64'), 'invalid_payment_base64'],
      [Buffer.from('{"x402Version": 1,').toString('base64'), 'invalid_payment_json'],
      [Buffer.from('hello').toString('base64'), 'invalid_payment_json'],
      [encodeHeader([1, 2]), 'invalid_payload'],
      [encodeHeader({ x402Version: 3 }), 'invalid_x402_version'],
      [encodeHeader({ x402Version: 1, scheme: 'exact', network: 'base' }), 'invalid_payload'],
    ];
    for (const [header, code] of cases) {
      const d = decodePaymentHeader(header);
      expect({ header: header.slice(0, 20), code: d.ok ? 'ok' : d.code }).toEqual({ header: header.slice(0, 20), code });
    }
    const good = await signedPayment({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC });
    type Editable = { scheme: string; network: string; payload: { signature?: string; authorization: Record<string, unknown> } };
    const bad = (patch: (p: Editable) => void) => {
      const copy = JSON.parse(JSON.stringify(good)) as Editable;
      patch(copy);
      const d = decodePaymentHeader(encodeHeader(copy));
      return d.ok ? 'ok' : d.code;
    };
    expect(bad(() => undefined)).toBe('ok');
    expect(bad((p) => (p.payload.authorization.value = 1000))).toBe('invalid_payload');
    expect(bad((p) => (p.payload.authorization.value = '-1'))).toBe('invalid_payload');
    expect(bad((p) => (p.payload.authorization.nonce = '0x1234'))).toBe('invalid_payload');
    expect(bad((p) => (p.payload.authorization.to = 'tnative1qqqq'))).toBe('invalid_payload');
    expect(bad((p) => delete p.payload.signature)).toBe('invalid_payload');
    expect(bad((p) => (p.scheme = 'upto'))).toBe('unsupported_scheme');
    expect(bad((p) => (p.network = 'base-sepolia'))).toBe('invalid_network');
    // URL-safe and unpadded base64 decode too.
    const urlSafe = Buffer.from(JSON.stringify(good)).toString('base64url');
    expect(decodePaymentHeader(urlSafe).ok).toBe(true);
  });

  test('v2 payloads (PAYMENT-SIGNATURE) decode; v2 must name eip155:8453', async () => {
    expect(decodePaymentHeader(await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC, version: 2 })).ok).toBe(true);
    const d = decodePaymentHeader(await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC, version: 2, network: 'base' }));
    expect(d.ok ? 'ok' : d.code).toBe('invalid_network');
  });

  test('a payload already decoded (MCP) gets the same shape checks as a header, without base64', async () => {
    const payment = (await signedPayment({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC })) as Record<string, unknown> & { payload: Record<string, unknown> };
    const d = checkPaymentPayload(payment);
    expect(d.ok && d.payment).toBe(payment);
    const code = (v: unknown) => {
      const r = checkPaymentPayload(v);
      return r.ok ? 'ok' : r.code;
    };
    expect(code([payment])).toBe('invalid_payload');
    expect(code({ ...payment, x402Version: 3 })).toBe('invalid_x402_version');
    expect(code({ ...payment, payload: { ...payment.payload, signature: 'nope' } })).toBe('invalid_payload');
    expect(code({ ...payment, scheme: 'upto' })).toBe('unsupported_scheme');
  });
});

describeUsdc('local EIP-3009 verification', () => {
  const def = stubService('native-echo', async () => 'ok');
  const req = requirementsFor(def);

  const codeOf = async (spec: Parameters<typeof signedPayment>[0]) => {
    const v = await verifyUsdcPaymentLocally(await decoded(await paymentHeader(spec)), req, now());
    return v.isValid ? 'ok' : v.code;
  };

  test('a correct authorization passes (v1 and v2, payTo compared without case)', async () => {
    expect(req.maxAmountRequired).toBe(PRICE_ATOMIC);
    expect(await codeOf({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC })).toBe('ok');
    expect(await codeOf({ payTo: NODE_PAY_TO.toLowerCase(), value: PRICE_ATOMIC, version: 2 })).toBe('ok');
  });

  test('each broken rule has its reason', async () => {
    const t = now();
    expect(await codeOf({ payTo: NODE_PAY_TO, value: '999' })).toBe('invalid_exact_evm_payload_authorization_value');
    expect(await codeOf({ payTo: NODE_PAY_TO, value: '1001' })).toBe('invalid_exact_evm_payload_authorization_value');
    expect(await codeOf({ payTo: otherAccount().address, value: PRICE_ATOMIC })).toBe('invalid_exact_evm_payload_recipient_mismatch');
    expect(await codeOf({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC, validBefore: t + 3 })).toBe('invalid_exact_evm_payload_authorization_valid_before');
    expect(await codeOf({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC, validBefore: t - 100 })).toBe('invalid_exact_evm_payload_authorization_valid_before');
    expect(await codeOf({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC, validAfter: t + 30 })).toBe('invalid_exact_evm_payload_authorization_valid_after');
    // Signed by another key than `from`; signed for Base Sepolia's chain id.
    expect(await codeOf({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC, account: otherAccount(), claimedFrom: payerAccount().address })).toBe('invalid_exact_evm_payload_signature');
    expect(await codeOf({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC, chainId: 84532 })).toBe('invalid_exact_evm_payload_signature');
    // v2 whose accepted does not match our requirements.
    expect(await codeOf({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC, version: 2, acceptedAmount: '1' })).toBe('invalid_payment_requirements');
  });

  test('a malleated (high-s) or truncated signature is refused', async () => {
    const p = await signedPayment({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC });
    const sig = (p.payload as { signature: string }).signature;
    for (const s of [malleate(sig), sig.slice(0, 130), `${sig}00`]) {
      const copy = { ...p, payload: { ...(p.payload as object), signature: s } };
      const v = await verifyUsdcPaymentLocally(await decoded(encodeHeader(copy)), req, now());
      expect(v.isValid ? 'ok' : v.code).toBe('invalid_exact_evm_payload_signature');
    }
  });
});

describeUsdc('facilitator client', () => {
  let f: TestFacilitator;
  beforeAll(async () => {
    f = await startTestFacilitator({ auth: ['X-Api-Key', 'sekrit'] });
  });
  afterAll(() => f.stop());
  beforeEach(() => f.reset());

  test('sends the auth header; refusals are values', async () => {
    expect(parseAuthHeader('X-Api-Key:  sekrit ')).toEqual(['X-Api-Key', 'sekrit']);
    expect(() => parseAuthHeader('no colon')).toThrow();
    const client = createFacilitator({ url: `${f.url}/`, authHeader: 'X-Api-Key: sekrit' });
    expect((await client.supported()).kinds.length).toBe(2);
    const verdict = await client.verify({ x402Version: 1, paymentPayload: {}, paymentRequirements: {} });
    expect(verdict).toEqual({ isValid: false, invalidReason: 'invalid_payload' });
    expect(f.calls.unauthorized).toBe(0);
    // Without the header the facilitator answers 401 with no verdict: unavailable, not a refusal.
    const anon = createFacilitator({ url: f.url, verifyAttempts: 1 });
    await expect(anon.verify({ x402Version: 1, paymentPayload: {}, paymentRequirements: {} })).rejects.toBeInstanceOf(FacilitatorUnavailableError);
  });

  test('a hanging facilitator times out (504 kind); a dead one is unreachable (502 kind); 5xx is retried', async () => {
    const client = createFacilitator({ url: f.url, authHeader: 'X-Api-Key: sekrit', verifyTimeoutMs: 300, settleTimeoutMs: 300, retryDelayMs: 20 });
    f.modes.verify = 'hang';
    const started = Date.now();
    const e1 = await client.verify({ x402Version: 1, paymentPayload: {}, paymentRequirements: {} }).catch((e: unknown) => e);
    expect(e1).toBeInstanceOf(FacilitatorUnavailableError);
    expect((e1 as FacilitatorUnavailableError).timedOut).toBe(true);
    expect((e1 as FacilitatorUnavailableError).code).toBe('facilitator_unavailable');
    expect(Date.now() - started).toBeLessThan(10_000); // cut by the 300 ms timeout, not left hanging

    // Answers (a 500, garbage) are judged with a timeout no loaded machine reaches: they must not read as timeouts.
    const patient = createFacilitator({ url: f.url, authHeader: 'X-Api-Key: sekrit', verifyTimeoutMs: 15_000, settleTimeoutMs: 15_000, retryDelayMs: 20 });
    f.modes.verify = 'error500';
    const e2 = await patient.verify({ x402Version: 1, paymentPayload: {}, paymentRequirements: {} }).catch((e: unknown) => e);
    expect((e2 as FacilitatorUnavailableError).timedOut).toBe(false);
    expect(f.calls.verify).toBe(1 + 3); // one hung attempt, then three attempts on 500

    f.modes.settle = 'garbage';
    const e3 = await patient.settle({ x402Version: 1, paymentPayload: {}, paymentRequirements: {} }).catch((e: unknown) => e);
    expect((e3 as FacilitatorUnavailableError).timedOut).toBe(false);
    expect(f.calls.settle).toBe(1); // a settlement is never re-sent after an answer

    const dead = createFacilitator({ url: 'http://127.0.0.1:9', verifyTimeoutMs: 15_000, retryDelayMs: 10 });
    const e4 = await dead.verify({ x402Version: 1, paymentPayload: {}, paymentRequirements: {} }).catch((e: unknown) => e);
    expect(e4).toBeInstanceOf(FacilitatorUnavailableError);
    expect((e4 as FacilitatorUnavailableError).timedOut).toBe(false);
  });
});

describeUsdc('USDC settlement', () => {
  let f: TestFacilitator;
  let ledger: SettlementLedger;
  let runs: number;
  const echo = stubService('native-echo', async (_ctx, input) => {
    runs++;
    await new Promise((r) => setTimeout(r, 30));
    return { echo: input };
  });
  const broken = stubService('native-broken', async () => {
    runs++;
    throw new ServiceError('service_failed', 'upstream is down');
  });
  const context = { log: silentLogger, now: Date.now } as unknown as Omit<ServiceContext, 'signal'>;
  let usdc: UsdcSettlement;
  /** The same settlement with 400 ms facilitator timeouts, for the hanging-facilitator cases only: an answering one is never cut on a loaded machine. */
  let hasty: UsdcSettlement;

  beforeAll(async () => {
    f = await startTestFacilitator();
    ledger = await openLedger(join(await tmpDir(), 'ledger'));
    usdc = createUsdcSettlement(ledger, context, { payTo: NODE_PAY_TO.toLowerCase(), facilitator: createFacilitator({ url: f.url, verifyTimeoutMs: 15_000, settleTimeoutMs: 15_000, retryDelayMs: 20 }) });
    hasty = createUsdcSettlement(ledger, context, { payTo: NODE_PAY_TO.toLowerCase(), facilitator: createFacilitator({ url: f.url, verifyTimeoutMs: 400, settleTimeoutMs: 400, retryDelayMs: 20 }) });
  });
  afterAll(async () => {
    await f.stop();
    await ledger.close();
  });
  beforeEach(() => {
    f.reset();
    runs = 0;
  });

  const pay = (def: ServiceDefinition, header: string, request = 'hi') => usdc.settle(def, request, request, header, requirementsFor(def));
  const payHasty = (def: ServiceDefinition, header: string, request = 'hi') => hasty.settle(def, request, request, header, requirementsFor(def));
  const codeOf = (o: UsdcOutcome) => (o.kind === 'paid' ? 'ok' : o.kind === 'refused' ? o.error.code : o.body.error.code);

  test('verify → run → settle → result, receipt and payment-response headers; counted in the ledger', async () => {
    expect(usdc.payTo).toBe(NODE_PAY_TO);
    const header = await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC });
    const out = await pay(echo, header);
    expect(out.status).toBe(200);
    if (out.kind !== 'paid') return;
    const headers = paymentResponseHeaders(out.response);
    const tx = f.calls.settled[0].transaction;
    expect(out.body).toEqual({ paid: true, result: { echo: 'hi' }, receipt: expect.objectContaining({ serviceId: echo.id, caller: payerAccount().address, amount: 0.001, txId: tx, amountAtomic: '1000', network: 'base', payTo: NODE_PAY_TO }) });
    expect(decodeHeader(headers['X-PAYMENT-RESPONSE'])).toEqual({ success: true, transaction: tx, network: 'base', payer: payerAccount().address });
    expect(headers['PAYMENT-RESPONSE']).toBe(headers['X-PAYMENT-RESPONSE']);
    expect({ runs, verify: f.calls.verify, settle: f.calls.settle }).toEqual({ runs: 1, verify: 1, settle: 1 });
    // The facilitator got the reference's body: {x402Version, paymentPayload, paymentRequirements}.
    expect(f.calls.lastSettle).toMatchObject({ x402Version: 1, paymentRequirements: { scheme: 'exact', network: 'base', maxAmountRequired: '1000', payTo: NODE_PAY_TO }, paymentPayload: { scheme: 'exact', network: 'base' } });
    expect(ledger.volume(echo.id)).toMatchObject({ callsUsdc: 1, volumeUsdcAtomic: 1000n });
  });

  test('x402 v2 payloads settle with v2 requirements and report the CAIP-2 network', async () => {
    const out = await pay(echo, await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC, version: 2 }));
    expect(out.status).toBe(200);
    if (out.kind !== 'paid') return;
    expect(f.calls.lastVerify).toMatchObject({ x402Version: 2, paymentRequirements: { network: 'eip155:8453', amount: '1000' } });
    expect(decodeHeader(paymentResponseHeaders(out.response)['PAYMENT-RESPONSE'])).toMatchObject({ success: true, network: 'eip155:8453' });
  });

  test('one authorization replayed 20 times at once and again later executes and settles exactly once', async () => {
    const header = await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC });
    const outs = await Promise.all(Array.from({ length: 20 }, () => pay(echo, header)));
    const codes = outs.map(codeOf);
    // The winner runs; the others find it in progress, or (once it settled) are refused: a bare
    // replay of a settled authorization (public calldata on Base) proves nothing.
    expect(codes.filter((c) => c === 'ok')).toHaveLength(1);
    expect(codes.filter((c) => c !== 'ok').every((c) => c === 'settlement_in_progress' || c === 'payment_already_used')).toBe(true);
    expect(codes.filter((c) => c === 'settlement_in_progress').length).toBeGreaterThan(0);
    // Later: the same header gets neither a run nor the stored result; another call is refused too.
    const again = await pay(echo, header);
    expect(again).toMatchObject({ kind: 'refused', status: 409, error: { code: 'payment_already_used' } });
    expect(JSON.stringify(again)).not.toContain('"echo"');
    expect(codeOf(await pay(echo, header, 'another request'))).toBe('payment_already_used');
    expect({ runs, verify: f.calls.verify, settle: f.calls.settle }).toEqual({ runs: 1, verify: 1, settle: 1 });
  });

  test('payment-identifier: a retry gets the stored result only with the id the first call sent; a bare replay of the public authorization gets 409 without it', async () => {
    const withId = (header: string, id?: string) => {
      const p = decodeHeader<Record<string, unknown>>(header);
      // Extensions are not signed (EIP-3009 covers the authorization only): the same authorization, with or without an id.
      return Buffer.from(JSON.stringify(id === undefined ? { ...p, extensions: undefined } : { ...p, extensions: { 'payment-identifier': { info: { required: false, id } } } })).toString('base64');
    };
    const signed = await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC, version: 2 });
    const first = await pay(echo, withId(signed, 'pay_first_call_0123456789'));
    expect(first.status).toBe(200);
    for (const replay of [withId(signed), withId(signed, 'pay_someone_else_98765'), withId(signed, 'short')]) {
      const out = await pay(echo, replay);
      expect(out).toMatchObject({ kind: 'refused', status: 409, error: { code: 'payment_already_used' } });
      expect(JSON.stringify(out)).not.toContain('"echo"');
    }
    const retry = await pay(echo, withId(signed, 'pay_first_call_0123456789'));
    expect(retry.status).toBe(200);
    expect(retry.kind === 'paid' && first.kind === 'paid' && retry.body).toEqual(first.kind === 'paid' && first.body);
    expect({ runs, settle: f.calls.settle }).toEqual({ runs: 1, settle: 1 });
    // The ledger keeps a hash of the id, never the id.
    const rec = [];
    for await (const r of ledger.records()) if (r.rail === 'usdc' && r.receipt?.txId === (first.kind === 'paid' ? first.body.receipt.txId : '')) rec.push(r);
    expect(rec).toHaveLength(1);
    expect(JSON.stringify(rec[0])).not.toContain('pay_first_call_0123456789');
    expect(rec[0]!.accessKey).toMatch(/^[0-9a-f]{64}$/);
  });

  test('sign-in-with-x: a retry signed in as the payer gets the stored result; signed in as anyone else it does not', async () => {
    const header = await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC });
    const first = await pay(echo, header);
    expect(first.status).toBe(200);
    const asOther = await usdc.settle(echo, 'hi', 'hi', header, requirementsFor(echo), { provenPayer: otherAccount().address });
    expect(asOther).toMatchObject({ kind: 'refused', status: 409, error: { code: 'payment_already_used' } });
    const asPayer = await usdc.settle(echo, 'hi', 'hi', header, requirementsFor(echo), { provenPayer: payerAccount().address.toLowerCase() });
    expect(asPayer.status).toBe(200);
    expect(asPayer.kind === 'paid' && asPayer.body).toEqual(first.kind === 'paid' && first.body);
    expect({ runs, settle: f.calls.settle }).toEqual({ runs: 1, settle: 1 });
  });

  test('a payTo shared with other sellers (sharedPayTo): a new random nonce is refused authorization_unbound before anything runs; a bound one settles; one held before gets its answer', async () => {
    const shared = createUsdcSettlement(ledger, context, { payTo: NODE_PAY_TO.toLowerCase(), sharedPayTo: true, facilitator: createFacilitator({ url: f.url, verifyTimeoutMs: 15_000, settleTimeoutMs: 15_000, retryDelayMs: 20 }) });
    const unbound = await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC });
    const refused = await shared.settle(echo, 'hi', 'hi', unbound, requirementsFor(echo));
    expect(refused).toMatchObject({ kind: 'refused', status: 402, error: { code: 'authorization_unbound' } });
    expect(await ledger.get(authorizationId(payerAccount().address, decodeHeader<{ payload: { authorization: { nonce: string } } }>(unbound).payload.authorization.nonce))).toBeUndefined();
    expect({ runs, verify: f.calls.verify, settle: f.calls.settle }).toEqual({ runs: 0, verify: 0, settle: 0 });
    // Bound to this seller (its nonce commits to the ledger's seller id, the service, the request and a salt): taken.
    const salt = 'ab'.repeat(32);
    const nonce = usdcCommitmentNonce({ sellerId: ledger.sellerId, serviceId: echo.id, request: 'hi', salt });
    const bound = Buffer.from(JSON.stringify({ ...decodeHeader<Record<string, unknown>>(await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC, nonce: nonce as `0x${string}` })), extensions: commitmentExtension(salt) })).toString('base64');
    expect((await shared.settle(echo, 'hi', 'hi', bound, requirementsFor(echo))).status).toBe(200);
    // An unbound authorization the ledger took before the flag: its payer's proven retry still gets the stored answer.
    const before = await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC });
    const first = await pay(echo, before);
    expect(first.status).toBe(200);
    const retry = await shared.settle(echo, 'hi', 'hi', before, requirementsFor(echo), { provenPayer: payerAccount().address });
    expect(retry.kind === 'paid' && retry.body).toEqual(first.kind === 'paid' && first.body);
    expect({ runs, settle: f.calls.settle }).toEqual({ runs: 2, settle: 2 });
  });

  test('locally invalid payments never reach the facilitator and run nothing', async () => {
    const t = now();
    const cases: [string, string][] = [
      [await paymentHeader({ payTo: NODE_PAY_TO, value: '2000' }), 'invalid_exact_evm_payload_authorization_value'],
      [await paymentHeader({ payTo: otherAccount().address, value: PRICE_ATOMIC }), 'invalid_exact_evm_payload_recipient_mismatch'],
      [await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC, validBefore: t - 1 }), 'invalid_exact_evm_payload_authorization_valid_before'],
      [await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC, account: otherAccount(), claimedFrom: payerAccount().address }), 'invalid_exact_evm_payload_signature'],
      ['%%%', 'invalid_payment_base64'],
      [Buffer.from('{oops').toString('base64'), 'invalid_payment_json'],
    ];
    for (const [header, code] of cases) {
      const out = await pay(echo, header);
      expect({ status: out.status, code: codeOf(out) }).toEqual({ status: 402, code });
    }
    expect({ runs, verify: f.calls.verify, settle: f.calls.settle }).toEqual({ runs: 0, verify: 0, settle: 0 });
  });

  test('a refusal by the facilitator is a 402 with its reason; the service does not run; the authorization stays used', async () => {
    f.modes.verify = { reject: 'insufficient_funds' };
    const header = await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC });
    const out = await pay(echo, header);
    expect({ status: out.status, code: codeOf(out) }).toEqual({ status: 402, code: 'insufficient_funds' });
    f.modes.verify = { reject: 'Something Bad!' };
    const odd = await pay(echo, await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC }));
    expect(codeOf(odd)).toBe('facilitator_rejected');
    f.modes.verify = 'ok';
    expect(codeOf(await pay(echo, header))).toBe('payment_already_used');
    expect({ runs, settle: f.calls.settle }).toEqual({ runs: 0, settle: 0 });
  });

  test('a facilitator that hangs on /verify is a 504 and the service does not run; a dead one a 502', async () => {
    f.modes.verify = 'hang';
    const header = await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC });
    const out = await payHasty(echo, header);
    expect({ status: out.status, code: codeOf(out) }).toEqual({ status: 504, code: 'facilitator_unavailable' });
    expect({ runs, settle: f.calls.settle }).toEqual({ runs: 0, settle: 0 });
    expect((await ledger.get(authorizationId(payerAccount().address, (JSON.parse(Buffer.from(header, 'base64').toString()) as { payload: { authorization: { nonce: string } } }).payload.authorization.nonce)))?.status).toBe('failed');

    const deadLedger = await openLedger(join(await tmpDir(), 'ledger2'));
    const dead = createUsdcSettlement(deadLedger, context, { payTo: NODE_PAY_TO, facilitator: createFacilitator({ url: 'http://127.0.0.1:9', verifyTimeoutMs: 15_000, retryDelayMs: 10 }) });
    const out2 = await dead.settle(echo, 'hi', 'hi', await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC }), requirementsFor(echo));
    expect({ status: out2.status, code: codeOf(out2) }).toEqual({ status: 502, code: 'facilitator_unavailable' });
    expect(runs).toBe(0);
    await deadLedger.close();
  });

  test('a service that fails is never settled: 502, nothing charged, no settle call', async () => {
    const out = await pay(broken, await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC }));
    expect(out.status).toBe(502);
    expect(out.kind === 'failed' && out.body).toMatchObject({ paid: false, error: { code: 'service_failed' } });
    expect({ runs, verify: f.calls.verify, settle: f.calls.settle }).toEqual({ runs: 1, verify: 1, settle: 0 });
    expect(ledger.volume(broken.id).callsUsdc).toBe(0);
  });

  test('a failed or hanging settlement withholds the result', async () => {
    f.modes.settle = { reject: 'invalid_transaction_state' };
    const out = await pay(echo, await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC }));
    expect({ status: out.status, code: codeOf(out) }).toEqual({ status: 402, code: 'invalid_transaction_state' });
    expect(JSON.stringify(out)).not.toContain('echo');
    f.modes.settle = 'hang';
    const late = await payHasty(echo, await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC }));
    expect({ status: late.status, code: codeOf(late) }).toEqual({ status: 504, code: 'facilitator_unavailable' });
    expect(JSON.stringify(late)).not.toContain('echo');
    expect(runs).toBe(2);
  });

  test('after a restart, a payment left in progress is marked failed', async () => {
    const nonce = `0x${'07'.repeat(32)}` as const;
    const id = authorizationId(payerAccount().address, nonce);
    await ledger.claim({ id, rail: 'usdc', serviceId: echo.id, requestHash: 'x', caller: payerAccount().address, amount: '1000' });
    expect(await usdc.recover()).toBe(1);
    expect((await ledger.get(id))?.status).toBe('failed');
  });
});
