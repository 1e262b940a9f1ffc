/**
 * Signed offers and receipts end to end, on a real devnet node process (mining, both rails: the
 * USDC rail against the test facilitator process on 127.0.0.1):
 *
 * - every 402 (the JSON body and the x402 v2 `PAYMENT-REQUIRED` header) carries one JWS offer per
 *   option; the SDK verifies them against `/.well-known/did.json` and matches them to `accepts[]`,
 *   and the official `@x402/extensions` 2.27 verifier (resolving the `kid` through did:web, run
 *   in its own process from reference/) accepts them unchanged;
 * - the official `@x402/fetch` client pays both rails with the extension present; each 200
 *   carries the extension's receipt (accepted by the official verifier) and the hybrid receipt,
 *   verified offline by the SDK over the body's result bytes as returned;
 * - re-settles of a native payment return the identical receipt; a tampered receipt fails, and
 *   so does `native-node receipt verify`.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFacilitatorProcess, type FacilitatorProcess } from '../helpers/facilitator.js';
import { decodeHeader, NODE_PAY_TO, PAYER_KEY, referenceViem, requireViem } from '../helpers/facilitatorPayments.js';
import { childEnv, runCli, startNode, stopProcess, type NodeProc } from '../helpers/nodeProcess.js';
import { loadReference, REFERENCE_DIR } from '../helpers/reference.js';
import { createAgentClient } from '../../sdk/client.js';
import { loadWallet } from '../../sdk/walletFile.js';
import { preferRail, registerNativeScheme } from '../../sdk/x402Scheme.js';
import { verifyDidDocument, verifyOffer, verifyPaidBody } from '../../sdk/receipts.js';
import type { HybridReceipt } from '../../x402/core/wire.js';

const reference = await loadReference();
if (!reference.ok) console.warn(`SKIPPED: the official x402 client tests need reference/ installed (npm ci --prefix reference): ${reference.reason}`);
const clients = reference.ok && referenceViem.ok ? reference : undefined;
const describeWithClients = clients ? describe : describe.skip;

const AUTH: readonly [string, string] = ['X-Api-Key', 'test-facilitator-key'];
const SERVICE = 'native-world-clock';

let dir: string;
let node: NodeProc;
let facilitator: FacilitatorProcess;
let didDocument: Record<string, any>;

/** What the official `@x402/extensions/offer-receipt` verifier says (its own process, resolving did:web over HTTP on 127.0.0.1). */
const OFFICIAL = `
import { extractOffersFromPaymentRequired, decodeSignedOffers, findAcceptsObjectFromSignedOffer, verifyOfferSignatureJWS, verifyReceiptSignatureJWS, extractReceiptFromResponse } from '@x402/extensions/offer-receipt';
let s = ''; for await (const d of process.stdin) s += d;
const input = JSON.parse(s);
const out = {};
if (input.paymentRequired) {
  const offers = extractOffersFromPaymentRequired(input.paymentRequired);
  out.offers = [];
  for (const o of offers) out.offers.push(await verifyOfferSignatureJWS(o));
  out.matched = decodeSignedOffers(offers).map((d) => findAcceptsObjectFromSignedOffer(d, input.paymentRequired.accepts)?.scheme ?? null);
}
if (input.paymentResponse) {
  const receipt = extractReceiptFromResponse(new Response(null, { headers: { 'PAYMENT-RESPONSE': input.paymentResponse } }));
  out.receipt = await verifyReceiptSignatureJWS(receipt);
}
process.stdout.write(JSON.stringify(out));
`;

function official(input: Record<string, unknown>): Promise<Record<string, any>> {
  return new Promise((resolve, reject) => {
    const child = execFile(process.execPath, ['--input-type=module', '-e', OFFICIAL], { cwd: REFERENCE_DIR, env: childEnv(), timeout: 30_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout) as Record<string, any>),
    );
    child.stdin!.end(JSON.stringify(input));
  });
}

const endpoint = () => `${node.url}/api/x402/${SERVICE}`;
const post = (body: unknown, headers: Record<string, string> = {}) => fetch(endpoint(), { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

beforeAll(async () => {
  if (!clients) return;
  dir = mkdtempSync(join(tmpdir(), 'native-offer-receipt-'));
  facilitator = await startFacilitatorProcess({ auth: AUTH });
  node = await startNode(
    ['--dev', '--data-dir', join(dir, 'data'), '--http-port', '0', '--block-time', '1', '--no-stratum', '--usdc-pay-to', NODE_PAY_TO, '--facilitator-url', facilitator.url, '--base-rpc-url', 'http://127.0.0.1:9'],
    { cwd: dir, env: { NATIVE_FACILITATOR_AUTH_HEADER: `${AUTH[0]}: ${AUTH[1]}` } },
  );
  didDocument = (await (await fetch(`${node.url}/.well-known/did.json`)).json()) as Record<string, any>;
}, 120_000);

afterAll(async () => {
  if (node) await stopProcess(node);
  await facilitator?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describeWithClients('signed offers', () => {
  test('did.json is the did:web of the node, its key bound by the payee', async () => {
    const res = await fetch(`${node.url}/.well-known/did.json`);
    expect(res.headers.get('content-type')).toMatch(/application\/did\+json/);
    const seller = verifyDidDocument(didDocument, { baseUrl: node.url });
    expect(seller).toMatchObject({ ok: true, binding: { usdcPayTo: NODE_PAY_TO, network: 'native:1337' } });
  });

  test('every 402 carries offers matching accepts[]; the SDK and the official verifier accept them', async () => {
    const res = await post({ request: 'Europe/Berlin' });
    expect(res.status).toBe(402);
    const body = (await res.json()) as Record<string, any>;
    const offers = body.extensions['offer-receipt'].info.offers as Record<string, unknown>[];
    expect(offers.map((o) => [o.format, o.acceptIndex])).toEqual([['jws', 0], ['jws', 1]]);
    offers.forEach((o, i) => expect(verifyOffer(o, didDocument, { accepts: body.accepts })).toMatchObject({ ok: true, acceptIndex: i, payload: { resourceUrl: endpoint(), amount: body.accepts[i].maxAmountRequired } }));
    // The x402 v2 header carries the same offers, matched there by the official client helper.
    const v2 = decodeHeader<Record<string, any>>(res.headers.get('payment-required'));
    expect(v2.extensions['offer-receipt']).toEqual(body.extensions['offer-receipt']);
    const checked = await official({ paymentRequired: v2 });
    expect(checked.matched).toEqual(['native-x402', 'exact']);
    expect(checked.offers).toMatchObject([
      { version: 1, scheme: 'native-x402', network: 'native:1337', asset: 'NATIVE', payTo: body.accepts[0].payTo, amount: body.accepts[0].maxAmountRequired, resourceUrl: endpoint() },
      { version: 1, scheme: 'exact', network: 'eip155:8453', payTo: NODE_PAY_TO, amount: body.accepts[1].maxAmountRequired },
    ]);
    // The USDC option alone: its offer alone, re-indexed.
    const only = (await (await post({ request: 'Europe/Berlin' }, { prefer: 'rail=usdc' })).json()) as Record<string, any>;
    expect(only.extensions['offer-receipt'].info.offers).toEqual([{ ...offers[1], acceptIndex: 0 }]);
  }, 60_000);
});

describeWithClients('signed receipts', () => {
  test('USDC through @x402/fetch: the extension receipt (official verifier) and the hybrid receipt over the result bytes', async () => {
    const { x402Client, registerExactEvmScheme, wrapFetchWithPayment } = clients!.v2;
    const account = requireViem().privateKeyToAccount(PAYER_KEY);
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: account });
    const res = await wrapFetchWithPayment(fetch, client)(endpoint(), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ request: 'Asia/Tokyo' }) });
    const text = await res.text();
    expect(res.status).toBe(200);
    const header = res.headers.get('payment-response')!;
    const settled = decodeHeader<Record<string, any>>(header);
    const checked = await official({ paymentResponse: header });
    expect(checked.receipt).toMatchObject({ version: 1, network: 'eip155:8453', resourceUrl: endpoint(), payer: account.address, transaction: settled.transaction });
    const v = verifyPaidBody(text, didDocument, { payer: account.address, txId: settled.transaction });
    expect(v).toMatchObject({ ok: true, resultVerified: true, hybrid: { rail: 'usdc', serviceId: SERVICE, network: 'eip155:8453', amount: '1000', payer: account.address } });
    // The body's receipt holds the same JWS as the header.
    expect(JSON.parse(text).receipt.offerReceipt).toEqual(settled.extensions['offer-receipt'].info.receipt);
  }, 60_000);

  test('native: the receipt verifies offline, re-settles return the identical receipt, a tampered one fails (SDK and CLI)', async () => {
    const { key } = await loadWallet(join(dir, 'data', 'dev-wallet.json'));
    const agent = createAgentClient({ nodeUrl: node.url, key });
    const first = await agent.call(SERVICE, 'Europe/Paris', { maxPriceBase: 10_000_000n });
    const again = async () => {
      const res = await fetch(`${endpoint()}?wait=0`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ request: 'Europe/Paris', payment: { txId: first.txId, salt: first.salt } }) });
      expect(res.status).toBe(200);
      return res.text();
    };
    const [a, b] = [await again(), await again()];
    // The same bytes every time, and the receipt the first settle gave.
    expect(b).toBe(a);
    expect(JSON.parse(a).receipt).toMatchObject(first.receipt);
    expect(first.receipt.hybridReceipt).toEqual(JSON.parse(a).receipt.hybridReceipt);
    const v = verifyPaidBody(a, didDocument, { txId: first.txId });
    expect(v).toMatchObject({ ok: true, resultVerified: true, hybrid: { rail: 'native', network: 'native:1337', asset: 'NATIVE', amount: '200000', serviceId: SERVICE } });
    // The official verifier accepts the native receipt too (CAIP-2 native:<chainId>).
    const header = Buffer.from(JSON.stringify({ success: true, transaction: first.txId, network: 'native-devnet', payer: 'x', extensions: { 'offer-receipt': { info: { receipt: JSON.parse(a).receipt.offerReceipt } } } })).toString('base64');
    expect((await official({ paymentResponse: header })).receipt).toMatchObject({ network: 'native:1337', transaction: first.txId });

    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify({ body: a, didDocument }));
    const ok = await runCli(['receipt', 'verify', good, '--json'], { cwd: dir });
    expect({ code: ok.code, valid: ok.json?.valid }).toEqual({ code: 0, valid: true });
    // One changed character of the result: the hybrid receipt no longer covers it.
    const bad = join(dir, 'bad.json');
    const tampered = a.replace('"timezone":"Europe/Paris"', '"timezone":"Europe/Rome"');
    expect(tampered).not.toBe(a);
    writeFileSync(bad, tampered);
    writeFileSync(join(dir, 'did.json'), JSON.stringify(didDocument));
    expect(verifyPaidBody(tampered, didDocument)).toMatchObject({ ok: false, reason: 'result_mismatch' });
    const refused = await runCli(['receipt', 'verify', bad, '--did', join(dir, 'did.json'), '--json'], { cwd: dir });
    expect({ code: refused.code, reason: refused.json?.reason }).toEqual({ code: 1, reason: 'result_mismatch' });
  }, 120_000);

  test('calls settled together: every receipt verifies offline, batched or not, and the batch members share one signature', async () => {
    const { key } = await loadWallet(join(dir, 'data', 'dev-wallet.json'));
    const agent = createAgentClient({ nodeUrl: node.url, key });
    const zones = ['Asia/Tokyo', 'America/Chicago', 'Africa/Cairo', 'Australia/Sydney', 'Europe/Madrid', 'Asia/Kolkata'];
    const paid = await Promise.all(zones.map((z) => agent.call(SERVICE, z, { maxPriceBase: 10_000_000n })));
    const formats: string[] = [];
    const hybridOf = (c: (typeof paid)[number]) => c.receipt.hybridReceipt as unknown as HybridReceipt;
    for (const [i, call] of paid.entries()) {
      const res = await fetch(`${endpoint()}?wait=0`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ request: zones[i], payment: { txId: call.txId, salt: call.salt } }) });
      const text = await res.text();
      expect(res.status).toBe(200);
      expect(verifyPaidBody(text, didDocument, { txId: call.txId })).toMatchObject({ ok: true, resultVerified: true });
      formats.push(hybridOf(call).format);
    }
    const batched = paid.map(hybridOf).filter((h) => h.format === 'native-x402/hybrid-receipt-batch/v1');
    const bySignature = new Map<string, number>();
    for (const h of batched) bySignature.set(h.signature.mldsa, (bySignature.get(h.signature.mldsa) ?? 0) + 1);
    for (const h of batched) expect(bySignature.get(h.signature.mldsa)).toBe(h.batch!.size);
    console.log(`receipts of ${zones.length} concurrent calls: ${formats.join(', ')}`);
  }, 120_000);

  test('@x402/fetch with the native scheme pays the native rail with offers in the 402 and gets the signed receipt', async () => {
    const { x402Client, wrapFetchWithPayment } = clients!.v2;
    const { key } = await loadWallet(join(dir, 'data', 'dev-wallet.json'));
    const client = new x402Client();
    registerNativeScheme(client as never, { agent: createAgentClient({ nodeUrl: node.url, key }), maxPriceBase: 1_000_000n });
    (client as unknown as { registerPolicy(p: unknown): void }).registerPolicy(preferRail('native'));
    const res = await wrapFetchWithPayment(fetch, client)(endpoint(), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ request: 'America/New_York' }) });
    const text = await res.text();
    expect(res.status).toBe(200);
    const settled = decodeHeader<Record<string, any>>(res.headers.get('payment-response'));
    expect(settled.extensions['offer-receipt'].info.receipt.format).toBe('jws');
    expect(verifyPaidBody(text, didDocument, { txId: settled.transaction })).toMatchObject({ ok: true, hybrid: { rail: 'native' } });
  }, 120_000);
});
