/**
 * A captured sign-in-with-x header, replayed as an attacker would, with real node processes: two
 * devnet nodes of one fleet (one PostgreSQL ledger, one public URL, the USDC rail on the test
 * facilitator). One payer settles two USDC payments at node A; its sign-in for the first
 * (requestId = the first authorization's nonce), captured in transit, is replayed with the second
 * payment's header (public calldata on Base once settled) — at A, and at B, which shares the
 * ledger and so checks the same challenges. Both refuse it (409 `payment_already_used`, no
 * result): a sign-in proves the payer of one payment, not a bearer for all its payments. The
 * payer's own sign-in for each payment opens that payment's stored result at either node.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestFacilitator, type TestFacilitator } from '../helpers/facilitator.js';
import { decodeHeader, NODE_PAY_TO, PAYER_KEY, paymentHeader, referenceViem } from '../helpers/facilitatorPayments.js';
import { startNode, stopProcess, type NodeProc } from '../helpers/nodeProcess.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';

const describeUsdc = referenceViem.ok ? describe : describe.skip;
const SERVICE = 'native-world-clock';
const PRICE_ATOMIC = '1000';
/** The fleet's public URL: the resource every quote and sign-in names, whichever node answers. */
const PUBLIC = 'http://fleet.example';

let dir: string;
let pgServer: TestPostgres | undefined;
let facilitator: TestFacilitator;
let a: NodeProc;
let b: NodeProc;

beforeAll(async () => {
  if (!referenceViem.ok) return;
  dir = mkdtempSync(join(tmpdir(), 'native-siwx-replay-'));
  pgServer = await startPostgres();
  const ledger = await pgServer.createDatabase('siwx_replay');
  facilitator = await startTestFacilitator();
  const node = (name: string) =>
    startNode(['--dev', '--data-dir', join(dir, name), '--http-port', '0', '--no-mine', '--no-stratum', '--ledger', ledger, '--public-url', PUBLIC, '--allowed-hosts', '127.0.0.1', '--usdc-pay-to', NODE_PAY_TO.toLowerCase(), '--facilitator-url', facilitator.url, '--facilitator-timeout', '1500'], { cwd: dir });
  a = await node('a');
  b = await node('b');
}, 120_000);

afterAll(async () => {
  for (const n of [a, b]) if (n) await stopProcess(n);
  await facilitator?.stop();
  await pgServer?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  body: Record<string, any>;
  headers: Headers;
}

async function call(node: NodeProc, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${node.url}/api/x402/${SERVICE}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ request: 'Europe/Berlin' }) });
  return { status: res.status, body: (await res.json()) as Record<string, any>, headers: res.headers };
}

/** The payer's sign-in for the payment whose authorization nonce is `requestId`, on a fresh 402's challenge from `node`. */
async function signIn(node: NodeProc, requestId: string): Promise<string> {
  const { createSiweMessage } = await import('viem/siwe');
  const { privateKeyToAccount } = await import('viem/accounts');
  const account = privateKeyToAccount(PAYER_KEY);
  const challenge = decodeHeader<Record<string, any>>((await call(node)).headers.get('payment-required'))['extensions']['sign-in-with-x'].info;
  const message = createSiweMessage({ ...challenge, requestId, address: account.address, chainId: 8453, issuedAt: new Date(challenge.issuedAt), expirationTime: new Date(challenge.expirationTime) });
  return Buffer.from(JSON.stringify({ ...challenge, requestId, address: account.address, chainId: 'eip155:8453', type: 'eip191', signature: await account.signMessage({ message }) })).toString('base64');
}

const nonceOf = (header: string) => decodeHeader<{ payload: { authorization: { nonce: string } } }>(header).payload.authorization.nonce;

describeUsdc('a captured sign-in-with-x header', () => {
  test('replayed with another payment of the same payer, at the node that issued it and at another node of its fleet: refused, no result', async () => {
    // The fleet's quotes name its public URL, and one seller.
    const [qa, qb] = await Promise.all([call(a), call(b)]);
    expect(qa.body.accepts[1]).toMatchObject({ resource: `${PUBLIC}/api/x402/${SERVICE}` });
    expect(qb.body.accepts[1].extra.sellerId).toBe(qa.body.accepts[1].extra.sellerId);

    // Two payments of one payer, both settled at A.
    const first = await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC });
    const second = await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC });
    const paid1 = await call(a, { 'x-payment': first });
    const paid2 = await call(a, { 'x-payment': second });
    expect([paid1.status, paid2.status]).toEqual([200, 200]);
    expect(paid2.body.receipt.txId).not.toBe(paid1.body.receipt.txId);

    // The payer signs in for its first payment (a retry of it); the attacker captures that header.
    const captured = await signIn(a, nonceOf(first));
    const own1 = await call(a, { 'x-payment': first, 'sign-in-with-x': captured });
    expect({ status: own1.status, receipt: own1.body.receipt }).toEqual({ status: 200, receipt: paid1.body.receipt });

    // Replayed with the second payment's header (public calldata once settled): refused at A and at B.
    for (const node of [a, b]) {
      const replay = await call(node, { 'x-payment': second, 'sign-in-with-x': captured });
      expect({ status: replay.status, code: replay.body.error?.code, result: replay.body.result }).toEqual({ status: 409, code: 'payment_already_used', result: undefined });
    }
    // The bare second header proves nothing either.
    expect((await call(b, { 'x-payment': second })).status).toBe(409);

    // The payer's own sign-in for the second payment, on B's challenge: B checks the fleet's challenge and serves the stored result.
    const own2 = await call(b, { 'x-payment': second, 'sign-in-with-x': await signIn(b, nonceOf(second)) });
    expect({ status: own2.status, receipt: own2.body.receipt }).toEqual({ status: 200, receipt: paid2.body.receipt });
    // And the captured header still opens its own payment at B, and only that one.
    const own1AtB = await call(b, { 'x-payment': first, 'sign-in-with-x': captured });
    expect({ status: own1AtB.status, receipt: own1AtB.body.receipt }).toEqual({ status: 200, receipt: paid1.body.receipt });
    expect({ verify: facilitator.calls.verify, settle: facilitator.calls.settle }).toEqual({ verify: 2, settle: 2 });
  }, 60_000);
});
