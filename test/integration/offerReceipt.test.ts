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
 *   so does `native-node receipt verify`; pinned to the payee and the payment, with `--node`
 *   finding the payment on chain, the CLI says the receipt is anchored; a forged DID document
 *   and receipt for the same payment are refused (the payment paid another payee);
 * - MCP: the unpaid tool result carries the signed offers, the paid one receipts that cover the
 *   text the agent reads; the `Authorization: Payment` dialect's 200 carries them too.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { getDevKeyPair } from '../../consensus/devnet.js';
import { TESTNET_HRP } from '../../consensus/address.js';
import { createSellerIdentity } from '../../x402/core/offers.js';
import { createReceiptIssuer } from '../../x402/core/receipts.js';
import { callPaidTool } from '../../sdk/mcpPayment.js';
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
import { verifyDidDocument, verifyMcpResult, verifyOffer, verifyPaidBody } from '../../sdk/receipts.js';
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
/** The native payee, as the agent knows it: the payTo it pays (here read from a 402). */
let payee: string;

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
  payee = ((await (await post({ request: 'Europe/Berlin' })).json()) as Record<string, any>).accepts[0].payTo as string;
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
    const v = verifyPaidBody(a, didDocument, { baseUrl: node.url, payee, txId: first.txId });
    expect(v).toMatchObject({ ok: true, anchored: true, resultVerified: true, hybrid: { rail: 'native', network: 'native:1337', asset: 'NATIVE', amount: '200000', serviceId: SERVICE, payee } });

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
    const refused = await runCli(['receipt', 'verify', bad, '--did-document', join(dir, 'did.json'), '--json'], { cwd: dir });
    expect({ code: refused.code, reason: refused.json?.reason }).toEqual({ code: 1, reason: 'result_mismatch' });

    // Pinned to the payee and the payment, and the payment found on chain: anchored.
    const pinned = await runCli(['receipt', 'verify', good, '--payee', payee, '--tx', first.txId, '--did', node.url, '--node', node.url, '--json'], { cwd: dir });
    expect({ code: pinned.code, json: pinned.json }).toMatchObject({ code: 0, json: { valid: true, anchored: true, pinned: ['did', 'payee', 'txId'], onChain: { node: node.url } } });
    expect((pinned.json?.onChain as { confirmations: number }).confirmations).toBeGreaterThanOrEqual(1);
    const human = await runCli(['receipt', 'verify', good, '--payee', payee, '--node', node.url], { cwd: dir });
    expect(human.stdout).toMatch(/^receipt valid: signed by payee /);
    expect(human.stdout).toMatch(/payment on chain: checked at .* mined at height \d+/);
    // Another payment's receipt, offered for this one.
    const other = await agent.call(SERVICE, 'Asia/Seoul', { maxPriceBase: 10_000_000n });
    expect((await runCli(['receipt', 'verify', good, '--tx', other.txId, '--json'], { cwd: dir })).json).toMatchObject({ valid: false, reason: 'wrong_payment' });

    // A forger's DID document claiming this node's DID and seller id, and a receipt for this very
    // payment signed with the forger's key: self-consistent, so unpinned it verifies, but says so.
    const forger = createSellerIdentity({ payee: getDevKeyPair(), hrp: TESTNET_HRP, chainId: 1337, sellerId: didDocument.x402Payee.binding.sellerId, usdcPayTo: () => NODE_PAY_TO });
    const body = JSON.parse(a) as { result: unknown };
    const h = first.receipt.hybridReceipt as unknown as HybridReceipt;
    const forgedReceipt = await createReceiptIssuer(forger).sign({ rail: 'native', serviceId: SERVICE, network: 'native:1337', txId: first.txId, payer: h.payload.payer, amount: h.payload.amount, asset: 'NATIVE', result: body.result }, { baseUrl: node.url, resource: endpoint() });
    const forged = join(dir, 'forged.json');
    writeFileSync(forged, JSON.stringify({ body: JSON.stringify({ paid: true, result: body.result, receipt: forgedReceipt }), didDocument: forger.didDocument(node.url) }));
    expect((await runCli(['receipt', 'verify', forged, '--json'], { cwd: dir })).json).toMatchObject({ valid: true, anchored: false });
    expect((await runCli(['receipt', 'verify', forged, '--payee', payee, '--json'], { cwd: dir })).json).toMatchObject({ valid: false, reason: 'wrong_payee' });
    const onChain = await runCli(['receipt', 'verify', forged, '--node', node.url, '--json'], { cwd: dir });
    expect({ code: onChain.code, reason: onChain.json?.reason }).toEqual({ code: 1, reason: 'payment_mismatch' });
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
    const header = res.headers.get('payment-response')!;
    const settled = decodeHeader<Record<string, any>>(header);
    expect(settled.extensions['offer-receipt'].info.receipt.format).toBe('jws');
    expect(verifyPaidBody(text, didDocument, { payee, txId: settled.transaction })).toMatchObject({ ok: true, anchored: true, hybrid: { rail: 'native' } });
    // The official verifier accepts the native receipt of the header exactly as the node sent it (CAIP-2 native:<chainId>).
    expect((await official({ paymentResponse: header })).receipt).toMatchObject({ version: 1, network: 'native:1337', transaction: settled.transaction, resourceUrl: endpoint() });
  }, 120_000);

  test('MCP: the unpaid tool result carries the signed offers; the paid one receipts that cover the text the agent reads', async () => {
    const mcp = new Client({ name: 'offer-receipt-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${node.url}/api/mcp`)));
    try {
      const unpaid = (await mcp.callTool({ name: SERVICE, arguments: { request: 'Europe/Oslo' } })) as { isError?: boolean; structuredContent: Record<string, any> };
      expect(unpaid.isError).toBe(true);
      const quote = unpaid.structuredContent;
      const offers = quote.extensions['offer-receipt'].info.offers as Record<string, unknown>[];
      expect(offers).toHaveLength(quote.accepts.length);
      offers.forEach((o, i) => expect(verifyOffer(o, didDocument, { accepts: quote.accepts, expect: { baseUrl: node.url, payee } })).toMatchObject({ ok: true, anchored: true, acceptIndex: i }));
      const { key } = await loadWallet(join(dir, 'data', 'dev-wallet.json'));
      const paid = await callPaidTool(mcp, createAgentClient({ nodeUrl: node.url, key }), { name: SERVICE, arguments: { request: 'Europe/Oslo' } }, { maxPriceBase: 10_000_000n });
      const v = verifyMcpResult(paid.result, didDocument, { payee, txId: paid.txId });
      expect(v).toMatchObject({ ok: true, anchored: true, resultVerified: true, hybrid: { rail: 'native', serviceId: SERVICE, txId: paid.txId } });
      // The payment-response carries the extension's receipt, the very JWS of the result's receipt.
      expect(paid.paymentResponse.extensions).toMatchObject({ 'offer-receipt': { info: { receipt: (paid.result.structuredContent as Record<string, any>).receipt.offerReceipt } } });
      // The text read by the agent, changed: refused.
      const content = [{ type: 'text', text: (paid.result.content as { text: string }[])[0].text.replace('Europe/Oslo', 'Europe/Rome') }];
      expect(verifyMcpResult({ ...paid.result, content }, didDocument)).toMatchObject({ ok: false, reason: 'result_mismatch' });
    } finally {
      await mcp.close();
    }
  }, 120_000);

  test('Authorization: Payment: the 200 carries the same signed receipts', async () => {
    const { key } = await loadWallet(join(dir, 'data', 'dev-wallet.json'));
    const agent = createAgentClient({ nodeUrl: node.url, key });
    const quote = await agent.quote(SERVICE, 'Asia/Dubai');
    const txId = await agent.pay(quote);
    const q = await post({ request: 'Asia/Dubai' });
    const challenge = parseChallenges(q.headers.get('www-authenticate')).find((c) => c.method === 'native')!;
    const authorization = `Payment ${Buffer.from(JSON.stringify({ challenge, payload: { txId, salt: quote.salt } })).toString('base64url')}`;
    let res = await post({ request: 'Asia/Dubai' }, { authorization });
    for (let i = 0; i < 30 && res.status === 202; i++) res = await post({ request: 'Asia/Dubai' }, { authorization });
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(JSON.parse(Buffer.from(res.headers.get('payment-receipt')!, 'base64url').toString('utf8'))).toMatchObject({ status: 'success', method: 'native', reference: txId });
    expect(verifyPaidBody(text, didDocument, { baseUrl: node.url, payee, txId })).toMatchObject({ ok: true, anchored: true, resultVerified: true, hybrid: { rail: 'native', txId } });
  }, 120_000);
});
