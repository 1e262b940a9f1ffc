/**
 * The HTTP challenges a retry answers — the `Payment` authentication scheme's and
 * sign-in-with-x's — over real HTTP (the paid endpoints' koa app on 127.0.0.1, port 0) with the
 * USDC rail of test/helpers/usdcCalls.ts and real payments signed with viem. Their keys come from
 * the settlement ledger (x402/core/challengeKeys.ts): two nodes on one PostgreSQL ledger (one fleet
 * behind one public URL) answer each other's challenges, a node on another ledger does not; and
 * a sign-in proves the payer of one payment: one captured for payment X opens nothing of payment Y.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import type { ChainReader, MempoolReader } from '../../chain/types.js';
import { createHttpServer, type HttpServer, type TxSubmitter } from '../../node/api/http.js';
import { PaymentAuth } from '../../node/api/paymentDialects.js';
import { createX402Router } from '../../node/api/x402Routes.js';
import { AUTH_SECRET_MARK, loadChallengeKeys, type ChallengeKeys } from '../../x402/core/challengeKeys.js';
import { PAYMENT_HTTP_STATUS } from '../../x402/core/errors.js';
import { openLedger, type SettlementLedger } from '../../x402/ledger/open.js';
import { PgLedger } from '../../x402/ledger/pgLedger.js';
import { SiwxChallenges } from '../../x402/usdc/siwx.js';
import { privateKeyToAccount } from 'viem/accounts';
import { decodeHeader, NODE_PAY_TO, PAYER_KEY, paymentHeader, referenceViem, signedPayment } from '../helpers/facilitatorPayments.js';
import { startUsdcCalls, type UsdcCalls } from '../helpers/usdcCalls.js';
import { usePostgres } from '../helpers/usePostgres.js';
import { tmpDir } from '../helpers/tmp.js';

// Payments are signed with viem from reference/ (installed on first use); without it these suites skip.
const describeUsdc = referenceViem.ok ? describe : describe.skip;
const postgres = usePostgres();
/** The fleet's public URL: the challenges name it, whichever node answers. */
const PUBLIC = 'http://fleet.example';
const PRICE = '1000';

let u: UsdcCalls;
const ledgers: SettlementLedger[] = [];
const servers: HttpServer[] = [];
/** Nodes A and B share a PostgreSQL ledger; C has a LevelDB ledger of its own. */
let a: HttpServer;
let b: HttpServer;
let c: HttpServer;
let keysA: ChallengeKeys;
let keysB: ChallengeKeys;

async function serve(keys: ChallengeKeys): Promise<HttpServer> {
  const router = createX402Router(u.core({ usdc: true }), new PaymentAuth(keys.paymentAuth), new SiwxChallenges(keys.siwx), () => PUBLIC);
  const server = createHttpServer({ host: '127.0.0.1', port: 0, bodyLimit: 64 * 1024, timeoutMs: 10_000, version: 'test' }, { chain: {} as ChainReader, mempool: {} as MempoolReader & TxSubmitter, params: u.params, routers: [router], errorStatuses: PAYMENT_HTTP_STATUS });
  await server.start();
  servers.push(server);
  return server;
}

beforeAll(async () => {
  u = await startUsdcCalls();
  const url = await postgres.server.createDatabase('challenge_keys');
  const [pgA, pgB] = [await PgLedger.open(url, { nodeId: 'n-a' }), await PgLedger.open(url, { nodeId: 'n-b' })];
  const level = await openLedger(join(await tmpDir('native-challenge-keys-'), 'ledger'));
  ledgers.push(pgA, pgB, level);
  // Both nodes start at once: one secret wins, both read it.
  [keysA, keysB] = await Promise.all([loadChallengeKeys(pgA), loadChallengeKeys(pgB)]);
  a = await serve(keysA);
  b = await serve(keysB);
  c = await serve(await loadChallengeKeys(level));
}, 60_000);
afterAll(async () => {
  for (const s of servers) await s.stop();
  for (const l of ledgers) await l.close();
  await u?.stop();
});

async function post(server: HttpServer, headers: Record<string, string> = {}, request = 'hi') {
  const res = await fetch(`${server.url}/api/x402/native-echo`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ request }) });
  return { status: res.status, body: (await res.json()) as Record<string, any>, headers: res.headers };
}

/** The `Payment` challenges of a 402's WWW-Authenticate, by method. */
function paymentChallenges(header: string | null): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const m of (header ?? '').matchAll(/Payment ((?:\w+="(?:[^"\\]|\\.)*"(?:, )?)+)/g)) {
    const params = Object.fromEntries([...m[1]!.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map(([, k, v]) => [k!, v!.replace(/\\(.)/g, '$1')]));
    out[params.method!] = params;
  }
  return out;
}

/** What a client does with a 402's sign-in declaration: signs it for one payment (requestId: its authorization's nonce). */
async function signIn(decl: Record<string, any>, nonce: string): Promise<string> {
  const { createSiweMessage } = await import('viem/siwe');
  const info = decl.info;
  const account = privateKeyToAccount(PAYER_KEY);
  const message = createSiweMessage({ domain: info.domain, address: account.address, statement: info.statement, uri: info.uri, version: '1', chainId: 8453, nonce: info.nonce, issuedAt: new Date(info.issuedAt), expirationTime: new Date(info.expirationTime), requestId: nonce, resources: info.resources });
  return Buffer.from(JSON.stringify({ ...info, requestId: nonce, address: account.address, chainId: 'eip155:8453', type: 'eip191', signature: await account.signMessage({ message }) })).toString('base64');
}

const nonceOf = (header: string) => decodeHeader<{ payload: { authorization: { nonce: string } } }>(header).payload.authorization.nonce;

describeUsdc('challenges shared by the nodes of a ledger', () => {
  test('the ledger holds one secret: both nodes of the fleet derived the same keys, and reopening keeps them', async () => {
    expect(Buffer.from(keysB.paymentAuth)).toEqual(Buffer.from(keysA.paymentAuth));
    expect(Buffer.from(keysB.siwx)).toEqual(Buffer.from(keysA.siwx));
    expect(Buffer.from(keysA.siwx)).not.toEqual(Buffer.from(keysA.paymentAuth));
    expect(await ledgers[0]!.getMark<{ secret: string }>(AUTH_SECRET_MARK)).toMatchObject({ secret: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(Buffer.from((await loadChallengeKeys(ledgers[1]!)).paymentAuth)).toEqual(Buffer.from(keysA.paymentAuth));
  });

  test('a Payment challenge issued by node A is paid at node B (one ledger); node C (another ledger) refuses it', async () => {
    const quote = await post(a);
    expect(quote.status).toBe(402);
    const challenge = paymentChallenges(quote.headers.get('www-authenticate'))['x402-exact'];
    expect(challenge).toMatchObject({ id: expect.any(String), method: 'x402-exact' });
    const credential = async () => `Payment ${Buffer.from(JSON.stringify({ challenge, payload: await signedPayment({ payTo: NODE_PAY_TO, value: PRICE, version: 2 }) })).toString('base64url')}`;
    const atB = await post(b, { authorization: await credential() });
    expect([atB.status, atB.body.paid, atB.headers.get('payment-receipt') !== null]).toEqual([200, true, true]);
    const atC = await post(c, { authorization: await credential() });
    expect([atC.status, atC.body.error?.code]).toEqual([402, 'payment_challenge_invalid']);
  });

  test('a sign-in to a challenge of node A proves the payer at node B; node C ignores it', async () => {
    const header = await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE });
    const first = await post(b, { 'x-payment': header });
    expect(first.status).toBe(200);
    const decl = decodeHeader<{ extensions: Record<string, any> }>((await post(a)).headers.get('payment-required')).extensions['sign-in-with-x'];
    const signed = await signIn(decl, nonceOf(header));
    const atB = await post(b, { 'x-payment': header, 'sign-in-with-x': signed });
    expect([atB.status, atB.body.result]).toEqual([200, first.body.result]);
    const atC = await post(c, { 'x-payment': header, 'sign-in-with-x': signed });
    expect([atC.status, atC.body.error?.code, atC.body.result]).toEqual([409, 'payment_already_used', undefined]);
  });
});

describeUsdc('a sign-in proves the payer of one payment', () => {
  test('a sign-in captured for payment X, sent with payment Y of the same payer, gets nothing; the payer signing in for Y gets Y', async () => {
    const hX = await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE });
    const hY = await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE });
    const x = await post(a, { 'x-payment': hX }, 'hi');
    const y = await post(a, { 'x-payment': hY }, 'hi');
    expect([x.status, y.status]).toEqual([200, 200]);
    const decl = decodeHeader<{ extensions: Record<string, any> }>((await post(a)).headers.get('payment-required')).extensions['sign-in-with-x'];
    const forX = await signIn(decl, nonceOf(hX));
    // The payer gets X again with it.
    expect((await post(a, { 'x-payment': hX, 'sign-in-with-x': forX })).status).toBe(200);
    // Whoever captured it (and reads Y's authorization on Base) tries it on Y: no result, the same answer as with no sign-in at all.
    const stolen = await post(a, { 'x-payment': hY, 'sign-in-with-x': forX });
    const bare = await post(a, { 'x-payment': hY });
    expect([stolen.status, stolen.body.error?.code, stolen.body.result]).toEqual([409, 'payment_already_used', undefined]);
    expect([bare.status, bare.body.error?.code]).toEqual([stolen.status, stolen.body.error?.code]);
    const forY = await post(a, { 'x-payment': hY, 'sign-in-with-x': await signIn(decl, nonceOf(hY)) });
    expect([forY.status, forY.body.result]).toEqual([200, y.body.result]);
  });
});
