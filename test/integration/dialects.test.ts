/**
 * Every 402 dialect on a real devnet node (miner on, USDC rail on with the test facilitator):
 * the x402 v2 headers (PAYMENT-REQUIRED with CAIP-2 networks, a hand-built PAYMENT-SIGNATURE
 * retry, PAYMENT-RESPONSE) and the "Payment" HTTP authentication scheme
 * (draft-ryan-httpauth-payment-01: WWW-Authenticate challenges for both rails, Authorization:
 * Payment credentials settling on both rails, Payment-Receipt), and replays refused in each.
 * The official clients' dialects are tested in usdc.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getDevKeyPair } from '../../consensus/devnet.js';
import { createAgentClient } from '../../sdk/client.js';
import { startFacilitatorProcess, type FacilitatorProcess } from '../helpers/facilitator.js';
import { decodeHeader, NODE_PAY_TO, paymentHeader, referenceViem, signedPayment } from '../helpers/facilitatorPayments.js';
import { startNode, stopProcess, type NodeProc } from '../helpers/nodeProcess.js';

const describeUsdc = referenceViem.ok ? describe : describe.skip;
const SERVICE = 'native-world-clock';
const PRICE_ATOMIC = '1000';
let dir: string;
let node: NodeProc | undefined;
let facilitator: FacilitatorProcess | undefined;

beforeAll(async () => {
  if (!referenceViem.ok) return;
  dir = mkdtempSync(join(tmpdir(), 'native-dialects-'));
  facilitator = await startFacilitatorProcess({});
  node = await startNode(['--dev', '--data-dir', join(dir, 'data'), '--http-port', '0', '--block-time', '1', '--no-stratum', '--usdc-pay-to', NODE_PAY_TO, '--facilitator-url', facilitator.url], { cwd: dir });
}, 120_000);

afterAll(async () => {
  if (node) await stopProcess(node);
  await facilitator?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const endpoint = () => `${node!.url}/api/x402/${SERVICE}`;
async function post(request: string, headers: Record<string, string> = {}, body: Record<string, unknown> = {}) {
  const res = await fetch(endpoint(), { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ request, ...body }) });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> };
}

/** The auth-params of each `Payment` challenge of a WWW-Authenticate field (quoted-string values). */
function parseChallenges(header: string | null): Record<string, string>[] {
  const out: Record<string, string>[] = [];
  for (const part of (header ?? '').split(/,\s*(?=Payment\s)/)) {
    const m = /^Payment\s+(.*)$/s.exec(part.trim());
    if (!m) continue;
    const params: Record<string, string> = {};
    for (const p of m[1].matchAll(/([a-z]+)="((?:[^"\\]|\\.)*)"/g)) params[p[1]] = p[2].replace(/\\(.)/g, '$1');
    out.push(params);
  }
  return out;
}

const b64urlJson = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const fromB64url = (s: string) => JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as Record<string, any>;
const credential = (challenge: Record<string, string>, payload: unknown) => `Payment ${b64urlJson({ challenge, payload, source: 'test-agent' })}`;

describeUsdc('402 dialects', () => {
  test('every 402 carries PAYMENT-REQUIRED (x402 v2, CAIP-2 networks) and one WWW-Authenticate: Payment challenge per rail', async () => {
    const q = await post('Europe/Berlin');
    expect(q.status).toBe(402);
    expect(q.body).toMatchObject({ x402: true, x402Version: 1, error: 'Payment Required' });
    const v2 = decodeHeader<{ x402Version: number; accepts: { scheme: string; network: string; amount: string }[] }>(q.headers.get('payment-required'));
    expect(v2.x402Version).toBe(2);
    expect(v2.accepts.map((a) => [a.scheme, a.network])).toEqual([['native-x402', 'native:1337'], ['exact', 'eip155:8453']]);
    expect(v2.accepts.every((a) => /^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/.test(a.network))).toBe(true);
    const challenges = parseChallenges(q.headers.get('www-authenticate'));
    expect(challenges.map((c) => c.method)).toEqual(['native', 'x402-exact']);
    for (const c of challenges) {
      expect(c).toMatchObject({ intent: 'charge', realm: new URL(node!.url).host, id: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), expires: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/) });
      expect(Date.parse(c.expires)).toBeGreaterThan(Date.now());
    }
    const [nativeReq, usdcReq] = challenges.map((c) => fromB64url(c.request));
    expect(nativeReq).toMatchObject({ amount: q.body.accepts[0].maxAmountRequired, currency: 'NATIVE', recipient: q.body.accepts[0].payTo, methodDetails: { scheme: 'native-x402', network: 'native:1337', resource: endpoint() } });
    expect(usdcReq).toMatchObject({ amount: PRICE_ATOMIC, currency: q.body.accepts[1].asset, recipient: NODE_PAY_TO, methodDetails: { scheme: 'exact', network: 'eip155:8453', resource: endpoint() } });
    // A refused payment's 402 carries them too, with the reason in the v2 header.
    const refused = await post('Europe/Berlin', { 'x-payment': await paymentHeader({ payTo: NODE_PAY_TO, value: '1' }) });
    expect(refused.status).toBe(402);
    expect(decodeHeader<{ error: string }>(refused.headers.get('payment-required')).error).toBe('invalid_exact_evm_payload_authorization_value');
    expect(parseChallenges(refused.headers.get('www-authenticate'))).toHaveLength(2);
  });

  test('x402 v2: a hand-built PAYMENT-SIGNATURE retry settles, answers PAYMENT-RESPONSE, and is refused for another request', async () => {
    const header = await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC, version: 2 });
    const paid = await post('Asia/Tokyo', { 'payment-signature': header });
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ paid: true, result: { timezone: 'Asia/Tokyo' } });
    expect(decodeHeader(paid.headers.get('payment-response'))).toMatchObject({ success: true, network: 'eip155:8453' });
    const replay = await post('UTC', { 'payment-signature': header });
    expect(replay.status).toBe(409);
  });

  test('Authorization: Payment on the USDC rail settles with a Payment-Receipt; replays for another request and forged challenges are refused', async () => {
    const q = await post('Europe/Paris');
    const usdc = parseChallenges(q.headers.get('www-authenticate')).find((c) => c.method === 'x402-exact')!;
    const payload = await signedPayment({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC });
    const paid = await post('Europe/Paris', { authorization: credential(usdc, payload) });
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ paid: true, result: { timezone: 'Europe/Paris' } });
    const receipt = fromB64url(paid.headers.get('payment-receipt')!);
    expect(receipt).toMatchObject({ status: 'success', method: 'x402-exact', intent: 'charge', reference: paid.body.receipt.txId });
    expect(decodeHeader(paid.headers.get('x-payment-response'))).toMatchObject({ success: true });
    // The same authorization for another request: refused, nothing runs twice.
    const otherQ = await post('Europe/Rome');
    const otherChallenge = parseChallenges(otherQ.headers.get('www-authenticate')).find((c) => c.method === 'x402-exact')!;
    expect((await post('Europe/Rome', { authorization: credential(otherChallenge, payload) })).status).toBe(409);
    // A challenge this node did not issue, and garbage.
    const forged = await post('Europe/Paris', { authorization: credential({ ...usdc, id: usdc.id.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) }, payload) });
    expect({ status: forged.status, code: forged.body.error?.code }).toEqual({ status: 402, code: 'payment_challenge_invalid' });
    expect(parseChallenges(forged.headers.get('www-authenticate'))).toHaveLength(2);
    const garbage = await post('Europe/Paris', { authorization: 'Payment %%%' });
    expect({ status: garbage.status, code: garbage.body.error?.code }).toEqual({ status: 400, code: 'invalid_payment_credential' });
    // A challenge issued for another service.
    const res = await fetch(`${node!.url}/api/x402/native-network-stats`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: credential(usdc, payload) }, body: '{}' });
    expect({ status: res.status, code: ((await res.json()) as { error?: { code?: string } }).error?.code }).toEqual({ status: 402, code: 'payment_challenge_mismatch' });
  });

  test('Authorization: Payment on the native rail settles an agent_invoke with a Payment-Receipt; the payment cannot be reused for another request', async () => {
    const client = createAgentClient({ nodeUrl: node!.url, key: getDevKeyPair() });
    const quote = await client.quote(SERVICE, 'America/New_York');
    const txId = await client.pay(quote);
    // The native payload is {txId, salt}: the salt the payment's requestHash commits to (the SDK's quote made it).
    const proof = { txId, salt: quote.salt };
    const q = await post('America/New_York');
    const native = parseChallenges(q.headers.get('www-authenticate')).find((c) => c.method === 'native')!;
    let paid = await post('America/New_York', { authorization: credential(native, proof) });
    for (let i = 0; i < 20 && paid.status === 202; i++) paid = await post('America/New_York', { authorization: credential(native, proof) });
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ paid: true, result: { timezone: 'America/New_York' }, receipt: { txId } });
    expect(fromB64url(paid.headers.get('payment-receipt')!)).toMatchObject({ status: 'success', method: 'native', intent: 'charge', reference: txId });
    // The same payment settled again for the same request answers the stored result (no second charge);
    // for another request it is refused, over the Payment scheme and over the spec's body alike.
    const again = await post('America/New_York', { authorization: credential(native, proof) });
    expect(again.body.receipt).toEqual(paid.body.receipt);
    const other = parseChallenges((await post('Africa/Cairo')).headers.get('www-authenticate')).find((c) => c.method === 'native')!;
    const reuse = await post('Africa/Cairo', { authorization: credential(other, proof) });
    expect({ status: reuse.status, code: reuse.body.error?.code }).toEqual({ status: 402, code: 'request_mismatch' });
    expect(reuse.body.result).toBeUndefined();
    const reuseBody = await post('Africa/Cairo', {}, { payment: proof });
    expect({ status: reuseBody.status, code: reuseBody.body.error?.code }).toEqual({ status: 402, code: 'request_mismatch' });
    // Without the salt, even the right request gets nothing: the payload does not prove the payer.
    const noSalt = await post('America/New_York', { authorization: credential(native, { txId }) });
    expect({ status: noSalt.status, code: noSalt.body.error?.code }).toEqual({ status: 400, code: 'invalid_payment' });
    expect(noSalt.body.result).toBeUndefined();
    // Two payments at once are refused.
    const both = await post('Africa/Cairo', { authorization: credential(other, proof) }, { payment: proof });
    expect({ status: both.status, code: both.body.error?.code }).toEqual({ status: 400, code: 'invalid_request' });
  }, 60_000);
});
