/**
 * Signed offers and receipts in-process (x402/core/offers.ts, x402/core/receipts.ts) checked with
 * the SDK's offline verifier (sdk/receipts.ts): the offer cache signs once per option and window,
 * every tampering or foreign receipt is refused with its reason.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getDevKeyPair, getDevPayeeKeyPair } from '../../consensus/devnet.js';
import { TESTNET_HRP } from '../../consensus/address.js';
import { createOfferSigner, createSellerIdentity, OFFER_WINDOW_SECONDS, readRetiredBindings } from '../../x402/core/offers.js';
import { loadRetiredKeys } from '../../node/api/didRoutes.js';
import { createKeyPairFromSeed } from '../../consensus/keys.js';
import { createReceiptIssuer, type SignedReceipts } from '../../x402/core/receipts.js';
import { RECEIPT_BATCH_SCHEME, receiptBatchLeaf, receiptBatchRootOf, receiptBatchTree } from '../../x402/core/receiptBatch.js';
import { hybridReceiptMessage } from '../../x402/core/wire.js';
import { sha256 } from '../../consensus/hash.js';
import { signHybrid } from '../../consensus/keys.js';
import { didWebOf, resultBytesOf, type PaymentRequirements } from '../../x402/core/wire.js';
import { resultBytesOfBody, verifyDidDocument, verifyMcpResult, verifyOffer, verifyPaidBody, verifyReceipt } from '../../sdk/receipts.js';
import { runReceiptCommand } from '../../cli/receiptCommand.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';

const BASE = 'http://127.0.0.1:8402';
const RESOURCE = `${BASE}/api/x402/native-world-clock`;
const USDC_PAY_TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
const T0 = Date.UTC(2026, 10, 27, 12, 0, 0);

const identityOf = (payee = getDevPayeeKeyPair(), sellerId = '0123456789abcdef') => createSellerIdentity({ payee, hrp: TESTNET_HRP, chainId: 1337, sellerId, usdcPayTo: () => USDC_PAY_TO });
const seller = identityOf();
const native: PaymentRequirements = { scheme: 'native-x402', network: 'native-devnet', maxAmountRequired: '200000', resource: RESOURCE, description: 'd', mimeType: 'application/json', payTo: seller.payeeAddress, maxTimeoutSeconds: 300, asset: 'NATIVE', extra: { chainId: 1337 } };
const usdc: PaymentRequirements = { scheme: 'exact', network: 'base', maxAmountRequired: '1000', resource: RESOURCE, description: 'd', mimeType: 'application/json', payTo: USDC_PAY_TO, maxTimeoutSeconds: 60, asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', extra: {} };

describe('the DID document', () => {
  test('publishes the offer key bound by the payee; a changed binding no longer verifies', () => {
    const doc = seller.didDocument(BASE);
    expect(doc.id).toBe('did:web:127.0.0.1%3A8402');
    expect(didWebOf('https://x.example/node')).toBe('did:web:x.example:node');
    const v = verifyDidDocument(doc, { baseUrl: BASE });
    expect(v).toMatchObject({ ok: true, did: doc.id, kid: doc.assertionMethod[0], binding: { payee: seller.payeeAddress, usdcPayTo: USDC_PAY_TO, sellerId: '0123456789abcdef', network: 'native:1337' } });
    expect(verifyDidDocument(doc, { baseUrl: 'https://other.example' })).toMatchObject({ ok: false, reason: 'did_mismatch' });
    const forged = { ...doc, x402Payee: { ...doc.x402Payee, binding: { ...doc.x402Payee.binding, usdcPayTo: '0x000000000000000000000000000000000000dEaD' } } };
    expect(verifyDidDocument(forged)).toMatchObject({ ok: false, reason: 'bad_signature' });
    // Another payee's public key cannot vouch for this payee's address.
    const other = identityOf(getDevKeyPair()).didDocument(BASE);
    expect(verifyDidDocument({ ...doc, x402Payee: { ...doc.x402Payee, publicKey: other.x402Payee.publicKey } })).toMatchObject({ ok: false, reason: 'binding_mismatch' });
  });
});

describe('signed offers', () => {
  test('one JWS per option, matching accepts[], signed once per option and window', () => {
    let now = T0;
    const signer = createOfferSigner(seller, () => now);
    const ext = signer.extensionFor([native, usdc], BASE);
    expect(ext.info.offers.map((o) => [o.format, o.acceptIndex])).toEqual([['jws', 0], ['jws', 1]]);
    const doc = seller.didDocument(BASE);
    const v0 = verifyOffer(ext.info.offers[0], doc, { accepts: [native, usdc], nowMs: now });
    const v1 = verifyOffer(ext.info.offers[1], doc, { accepts: [native, usdc], nowMs: now });
    expect(v0).toMatchObject({ ok: true, acceptIndex: 0, payload: { version: 1, resourceUrl: RESOURCE, scheme: 'native-x402', network: 'native:1337', asset: 'NATIVE', payTo: seller.payeeAddress, amount: '200000' } });
    expect(v1).toMatchObject({ ok: true, acceptIndex: 1, payload: { scheme: 'exact', network: 'eip155:8453', amount: '1000', payTo: USDC_PAY_TO } });
    const validUntil = (v0 as { payload: { validUntil: number } }).payload.validUntil;
    expect(validUntil * 1000 - now).toBeGreaterThanOrEqual(OFFER_WINDOW_SECONDS * 1000);
    expect(signer.signed).toBe(2);
    // A thousand more quotes of the same options: no signature.
    for (let i = 0; i < 1000; i++) signer.extensionFor([native, usdc], BASE);
    expect(signer.signed).toBe(2);
    // A new USDC price is a new offer; the next window signs afresh.
    signer.extensionFor([native, { ...usdc, maxAmountRequired: '1001' }], BASE);
    expect(signer.signed).toBe(3);
    now += OFFER_WINDOW_SECONDS * 1000;
    signer.extensionFor([native, usdc], BASE);
    expect(signer.signed).toBe(5);
    // Expired, of another price, or tampered: refused.
    expect(verifyOffer(ext.info.offers[0], doc, { nowMs: (validUntil + 1) * 1000 })).toMatchObject({ ok: false, reason: 'offer_expired' });
    expect(verifyOffer(ext.info.offers[1], doc, { accepts: [{ ...usdc, maxAmountRequired: '999' }], nowMs: T0 })).toMatchObject({ ok: false, reason: 'offer_mismatch' });
    const [h, p, s] = ext.info.offers[1].signature.split('.');
    const cheaper = Buffer.from(Buffer.from(p, 'base64url').toString('utf8').replace('"amount":"1000"', '"amount":"1"')).toString('base64url');
    expect(verifyOffer({ format: 'jws', signature: `${h}.${cheaper}.${s}` }, doc, { nowMs: T0 })).toMatchObject({ ok: false, reason: 'bad_signature' });
    // Another seller's document does not know this key.
    expect(verifyOffer(ext.info.offers[0], identityOf(getDevKeyPair()).didDocument(BASE), { nowMs: T0 })).toMatchObject({ ok: false, reason: 'unknown_key' });
  });
});

describe('signed receipts', () => {
  const result = { timezone: 'Europe/Berlin', time: '13:00', offsets: [1, 2.5, -0] };
  const facts = { rail: 'native', serviceId: 'native-world-clock', network: 'native:1337', txId: 'ab'.repeat(32), payer: 'tnative1payer', amount: '200000', asset: 'NATIVE', result } as const;
  let signed: Required<SignedReceipts>;
  let body: string;
  const doc = seller.didDocument(BASE);
  beforeAll(async () => {
    signed = (await createReceiptIssuer(seller, () => T0).sign(facts, { baseUrl: BASE, resource: RESOURCE })) as Required<SignedReceipts>;
    body = JSON.stringify({ paid: true, result, receipt: { serviceId: 'native-world-clock', ...signed } });
  });

  test('a lone receipt is signed on its own (v1), with no batch', () => {
    expect(signed.hybridReceipt.format).toBe('native-x402/hybrid-receipt/v1');
    expect(signed.hybridReceipt.batch).toBeUndefined();
  });

  test('the JWS and the hybrid receipt verify and cover the result bytes as returned', () => {
    expect(signed.hybridReceipt.payload).toMatchObject({ version: 1, sellerId: '0123456789abcdef', payee: seller.payeeAddress, serviceId: 'native-world-clock', resourceUrl: RESOURCE, rail: 'native', network: 'native:1337', txId: facts.txId, payer: 'tnative1payer', amount: '200000', asset: 'NATIVE', issuedAt: T0 / 1000 });
    const bytes = resultBytesOfBody(body)!;
    expect(Buffer.from(bytes).toString('utf8')).toBe(Buffer.from(resultBytesOf(result)).toString('utf8'));
    expect(verifyPaidBody(body, doc, { txId: facts.txId, payer: 'tnative1payer', sellerId: '0123456789abcdef' })).toMatchObject({ ok: true, resultVerified: true, receipt: { version: 1, network: 'native:1337', resourceUrl: RESOURCE, payer: 'tnative1payer', issuedAt: T0 / 1000, transaction: facts.txId } });
  });

  test('one byte of the result changed: the hybrid receipt no longer covers it', () => {
    const bytes = resultBytesOfBody(body)!;
    const changed = bytes.slice();
    changed[changed.indexOf(0x31)] ^= 1; // '1' of 13:00 → '0'
    expect(verifyReceipt({ ...signed }, doc, { resultBytes: changed })).toMatchObject({ ok: false, reason: 'result_mismatch' });
    expect(verifyPaidBody(body.replace('13:00', '13:01'), doc)).toMatchObject({ ok: false, reason: 'result_mismatch' });
  });

  test('a receipt of another payment or another seller is refused; a tampered one fails', async () => {
    expect(verifyReceipt(signed, doc, { expect: { txId: 'cd'.repeat(32) } })).toMatchObject({ ok: false, reason: 'wrong_payment' });
    expect(verifyReceipt(signed, doc, { expect: { sellerId: 'fedcba9876543210' } })).toMatchObject({ ok: false, reason: 'wrong_seller' });
    // Another seller (another payee key) verifies its own receipts only.
    const other = identityOf(getDevKeyPair(), 'fedcba9876543210');
    expect(verifyReceipt(signed, other.didDocument(BASE))).toMatchObject({ ok: false, reason: 'unknown_key' });
    const mixed = { offerReceipt: (await createReceiptIssuer(other, () => T0).sign(facts, { baseUrl: BASE, resource: RESOURCE })).offerReceipt!, hybridReceipt: signed.hybridReceipt };
    expect(verifyReceipt(mixed, other.didDocument(BASE))).toMatchObject({ ok: false, reason: 'wrong_seller' });
    const more = { ...signed, hybridReceipt: { ...signed.hybridReceipt, payload: { ...signed.hybridReceipt.payload, amount: '1' } } };
    expect(verifyReceipt(more, doc)).toMatchObject({ ok: false, reason: 'bad_signature' });
    const [h, , s] = signed.offerReceipt.signature.split('.');
    const forged = Buffer.from(JSON.stringify({ version: 1, network: 'native:1337', resourceUrl: RESOURCE, payer: 'tnative1someoneelse', issuedAt: T0 / 1000, transaction: facts.txId })).toString('base64url');
    expect(verifyReceipt({ ...signed, offerReceipt: { format: 'jws', signature: `${h}.${forged}.${s}` } }, doc)).toMatchObject({ ok: false, reason: 'bad_signature' });
  });

  test('the calls settled in one turn share one signature: each receipt verifies through its audit path, and only its own', async () => {
    const issuer = createReceiptIssuer(seller, () => T0);
    const txIds = Array.from({ length: 7 }, (_, i) => toHex2(i));
    const batch = (await Promise.all(txIds.map((txId) => issuer.sign({ ...facts, txId, result: { ...result, n: txId } }, { baseUrl: BASE, resource: RESOURCE })))) as Required<SignedReceipts>[];
    expect(issuer.stats).toEqual({ signatures: 1, receipts: 7, failures: 0 });
    const sigs = new Set(batch.map((r) => r.hybridReceipt.signature.mldsa));
    expect(sigs.size).toBe(1);
    batch.forEach((r, i) => {
      expect(r.hybridReceipt).toMatchObject({ format: RECEIPT_BATCH_SCHEME, batch: { size: 7, index: i } });
      const b = JSON.stringify({ paid: true, result: { ...result, n: txIds[i] }, receipt: r });
      expect(verifyPaidBody(b, doc, { txId: txIds[i] })).toMatchObject({ ok: true, resultVerified: true });
    });
    const [r0, r1] = batch;
    const h0 = r0.hybridReceipt;
    // Another receipt's path, a changed index, a shortened path, a changed payload, the batch dropped: refused.
    expect(verifyReceipt({ ...r0, hybridReceipt: { ...h0, batch: r1.hybridReceipt.batch } }, doc)).toMatchObject({ ok: false });
    expect(verifyReceipt({ ...r0, hybridReceipt: { ...h0, batch: { ...h0.batch!, index: 1 } } }, doc)).toMatchObject({ ok: false, reason: 'bad_signature' });
    expect(verifyReceipt({ ...r0, hybridReceipt: { ...h0, batch: { ...h0.batch!, path: h0.batch!.path.slice(1) } } }, doc)).toMatchObject({ ok: false });
    expect(verifyReceipt({ ...r0, hybridReceipt: { ...h0, payload: { ...h0.payload, amount: '1' } } }, doc)).toMatchObject({ ok: false, reason: 'bad_signature' });
    expect(verifyReceipt({ ...r0, hybridReceipt: { ...h0, format: 'native-x402/hybrid-receipt/v1', batch: undefined } }, doc)).toMatchObject({ ok: false, reason: 'bad_signature' });
    expect(verifyReceipt({ ...r0, hybridReceipt: { ...h0, batch: { ...h0.batch!, path: ['zz'] } } }, doc)).toMatchObject({ ok: false, reason: 'bad_batch_proof' });
    expect(verifyReceipt({ ...r0, hybridReceipt: { ...h0, batch: { ...h0.batch!, salt: '00'.repeat(32) } } }, doc)).toMatchObject({ ok: false, reason: 'bad_signature' });
    // RFC 9162 paths do not fix the size: the last leaf's path also leads to the root under other
    // sizes and indexes. The size is signed, so a changed one fails.
    const last = batch[6].hybridReceipt;
    const leaf = receiptBatchLeaf(hybridReceiptMessage(last.payload), Buffer.from(last.batch!.salt, 'hex'));
    const root = receiptBatchRootOf(leaf, last.batch!)!;
    const other = [...Array(40).keys()].flatMap((size) => [...Array(size).keys()].map((index) => ({ size, index }))).find(({ size, index }) => size !== 7 && Buffer.from(receiptBatchRootOf(leaf, { ...last.batch!, size, index }) ?? []).equals(Buffer.from(root)));
    expect(other).toBeDefined();
    expect(verifyReceipt({ ...batch[6], hybridReceipt: { ...last, batch: { ...last.batch!, ...other! } } }, doc)).toMatchObject({ ok: false, reason: 'bad_signature' });
    // The leaves are salted: the path shows no neighbour's own message.
    const neighbours = batch.slice(1).map((r) => Buffer.from(hybridReceiptMessage(r.hybridReceipt.payload)).toString('hex'));
    expect(h0.batch!.path.filter((x) => neighbours.includes(x))).toEqual([]);
    // The next turn is a new batch (here of one: v1 again).
    const later = await issuer.sign(facts, { baseUrl: BASE, resource: RESOURCE });
    expect(later.hybridReceipt!.format).toBe('native-x402/hybrid-receipt/v1');
    expect(issuer.stats).toEqual({ signatures: 2, receipts: 8, failures: 0 });
  });
});

describe('the trust anchor: a DID document proves nothing by itself', () => {
  const result = { timezone: 'Europe/Berlin', time: '13:00' };
  const facts = { rail: 'native', serviceId: 'native-world-clock', network: 'native:1337', txId: 'ab'.repeat(32), payer: 'tnative1payer', amount: '200000', asset: 'NATIVE', result } as const;
  // Someone else's key, a DID document of their own that claims the victim's did:web and seller id: self-consistent.
  const forger = identityOf(getDevKeyPair());
  const forgedDoc = forger.didDocument(BASE);
  const doc = seller.didDocument(BASE);
  let genuine: string;
  let forged: string;
  let other: string;
  const outOf = () => {
    const lines: { human: string; data: Record<string, any> }[] = [];
    return { lines, out: { json: true, print: (human: string, data: unknown) => void lines.push({ human, data: data as Record<string, any> }) } };
  };
  beforeAll(async () => {
    const at = { baseUrl: BASE, resource: RESOURCE };
    genuine = JSON.stringify({ paid: true, result, receipt: await createReceiptIssuer(seller, () => T0).sign(facts, at) });
    forged = JSON.stringify({ paid: true, result, receipt: await createReceiptIssuer(forger, () => T0).sign(facts, at) });
    other = JSON.stringify({ paid: true, result, receipt: await createReceiptIssuer(seller, () => T0).sign({ ...facts, txId: 'cd'.repeat(32) }, at) });
  });
  afterAll(cleanupTmp);

  test('unpinned, a forged document verifies — and says it is not anchored; pinned to the payee, it is refused', () => {
    expect(forgedDoc.id).toBe(doc.id);
    expect(verifyDidDocument(forgedDoc, { baseUrl: BASE })).toMatchObject({ ok: true });
    const loose = verifyPaidBody(forged, forgedDoc);
    expect(loose).toMatchObject({ ok: true, anchored: false, pinned: [], unpinned: ['did', 'payee', 'sellerId', 'txId', 'payer', 'amount', 'resourceUrl'] });
    // Pinning the DID, the seller id and the payment does not help: the forger claims all of them.
    expect(verifyPaidBody(forged, forgedDoc, { baseUrl: BASE, sellerId: '0123456789abcdef', txId: facts.txId, payer: facts.payer, amount: '200000', resourceUrl: RESOURCE })).toMatchObject({ ok: true, anchored: false, unpinned: ['payee'] });
    // The payee you paid does.
    expect(verifyPaidBody(forged, forgedDoc, { payee: seller.payeeAddress })).toMatchObject({ ok: false, reason: 'wrong_payee' });
    expect(verifyDidDocument(forgedDoc, { payee: seller.payeeAddress })).toMatchObject({ ok: false, reason: 'wrong_payee' });
    const offer = createOfferSigner(forger, () => T0).extensionFor([{ ...native, payTo: forger.payeeAddress }], BASE).info.offers[0];
    expect(verifyOffer(offer, forgedDoc, { nowMs: T0 })).toMatchObject({ ok: true, anchored: false });
    expect(verifyOffer(offer, forgedDoc, { nowMs: T0, expect: { payee: seller.payeeAddress } })).toMatchObject({ ok: false, reason: 'wrong_payee' });
    // The genuine receipt, fully pinned.
    expect(verifyPaidBody(genuine, doc, { baseUrl: BASE, payee: seller.payeeAddress, sellerId: '0123456789abcdef', txId: facts.txId, payer: facts.payer, amount: '200000', resourceUrl: RESOURCE })).toMatchObject({ ok: true, anchored: true, unpinned: [] });
    expect(verifyPaidBody(genuine, doc, { amount: '200001' })).toMatchObject({ ok: false, reason: 'wrong_payment' });
    expect(verifyPaidBody(genuine, doc, { resourceUrl: `${BASE}/api/x402/native-other` })).toMatchObject({ ok: false, reason: 'wrong_payment' });
    expect(verifyPaidBody(genuine, doc, { did: 'did:web:other.example' })).toMatchObject({ ok: false, reason: 'did_mismatch' });
  });

  test('the CLI says what it proved: not anchored without pins, refused with --payee for a forgery and with --tx for another payment', async () => {
    const dir = await tmpDir();
    const file = (name: string, v: unknown) => {
      const p = join(dir, name);
      writeFileSync(p, typeof v === 'string' ? v : JSON.stringify(v));
      return p;
    };
    const forgedFile = file('forged.json', { body: forged, didDocument: forgedDoc });
    let o = outOf();
    expect(await runReceiptCommand(['verify', forgedFile], o.out)).toBe(0);
    expect(o.lines[0].data).toMatchObject({ valid: true, anchored: false, pinned: [], onChain: { checked: false } });
    const human = outOf();
    await runReceiptCommand(['verify', forgedFile], { json: false, print: human.out.print });
    expect(human.lines[0].human).toMatch(/^receipt consistent, NOT anchored/);
    expect(human.lines[0].human).toContain('WARNING: a DID document proves nothing by itself');
    o = outOf();
    expect(await runReceiptCommand(['verify', forgedFile, '--payee', seller.payeeAddress], o.out)).toBe(1);
    expect(o.lines[0].data).toMatchObject({ valid: false, reason: 'wrong_payee' });
    // Another payment's genuine receipt, offered as this one's.
    const body = file('other.json', other);
    const didFile = file('did.json', doc);
    o = outOf();
    expect(await runReceiptCommand(['verify', body, '--did-document', didFile, '--payee', seller.payeeAddress, '--tx', facts.txId], o.out)).toBe(1);
    expect(o.lines[0].data).toMatchObject({ valid: false, reason: 'wrong_payment' });
    o = outOf();
    expect(await runReceiptCommand(['verify', file('genuine.json', genuine), '--did-document', didFile, '--payee', seller.payeeAddress, '--tx', facts.txId, '--did', BASE], o.out)).toBe(0);
    expect(o.lines[0].data).toMatchObject({ valid: true, anchored: true, pinned: ['did', 'payee', 'txId'] });
    // --did is a pin now; a file there is a usage error that names --did-document.
    expect(() => runReceiptCommand(['verify', body, '--did', didFile], o.out)).toThrow(/--did-document/);
  });

  test('a body that repeats a key is refused: {"result": FAKE, …, "result": REAL} has no one meaning', () => {
    const real = JSON.stringify(result);
    const receipt = JSON.stringify(JSON.parse(genuine).receipt);
    const twice = `{"paid":true,"result":{"timezone":"Europe/Paris","time":"09:00"},"receipt":${receipt},"result":${real}}`;
    expect(JSON.parse(twice).result).toEqual(result); // what JSON.parse reads (the last one)
    expect(resultBytesOfBody(twice)).toBeUndefined();
    expect(verifyPaidBody(twice, doc)).toMatchObject({ ok: false, reason: 'duplicate_key' });
    // Escaped alike, nested alike: still the same key.
    expect(verifyPaidBody(`{"paid":true,"res\u0075lt":1,"result":${real},"receipt":${receipt}}`, doc)).toMatchObject({ ok: false, reason: 'duplicate_key' });
    expect(verifyPaidBody(`{"paid":true,"result":{"timezone":"Europe/Berlin","time":"13:00","time":"13:00"},"receipt":${receipt}}`, doc)).toMatchObject({ ok: false, reason: 'duplicate_key' });
    // The top-level member is the one hashed, not a nested look-alike.
    const nested = `{"paid":true,"note":{"result":${real}},"result":{"timezone":"Europe/Paris","time":"09:00"},"receipt":${receipt}}`;
    expect(verifyPaidBody(nested, doc)).toMatchObject({ ok: false, reason: 'result_mismatch' });
    // Whitespace between members is fine; the result's own bytes are what they are.
    expect(verifyPaidBody(`{ "paid" : true , "result" : ${real} , "receipt" : ${receipt} }`, doc)).toMatchObject({ ok: true, resultVerified: true });
    expect(verifyPaidBody(`{"paid":true,"result":${JSON.stringify(result, null, 1)},"receipt":${receipt}}`, doc)).toMatchObject({ ok: false, reason: 'result_mismatch' });
  });

  test('an MCP tool result: content[0].text must be the result the receipt covers', async () => {
    const r = JSON.parse(genuine);
    const tool = { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: r };
    expect(verifyMcpResult(tool, doc, { payee: seller.payeeAddress, txId: facts.txId })).toMatchObject({ ok: true, resultVerified: true, anchored: true });
    expect(verifyMcpResult({ ...tool, content: [{ type: 'text', text: '{"timezone":"Europe/Paris"}' }] }, doc)).toMatchObject({ ok: false, reason: 'result_mismatch' });
    expect(verifyMcpResult({ ...tool, structuredContent: { ...r, result: { ...result, time: '14:00' } }, content: [{ type: 'text', text: JSON.stringify({ ...result, time: '14:00' }) }] }, doc)).toMatchObject({ ok: false, reason: 'result_mismatch' });
    // A string result: the text is the string itself, the hashed bytes its JSON.
    const str = { ...facts, result: 'plain "text"' };
    const sr = { paid: true, result: str.result, receipt: await createReceiptIssuer(seller, () => T0).sign(str, { baseUrl: BASE, resource: RESOURCE }) };
    expect(verifyMcpResult({ content: [{ type: 'text', text: 'plain "text"' }], structuredContent: sr }, doc)).toMatchObject({ ok: true, resultVerified: true });
  });
});

describe('key rotation: retired keys the document still lists', () => {
  const result = { ok: 1 };
  const facts = { rail: 'native', serviceId: 'native-world-clock', network: 'native:1337', txId: 'ef'.repeat(32), payer: 'tnative1payer', amount: '200000', asset: 'NATIVE', result } as const;
  const at = { baseUrl: BASE, resource: RESOURCE };
  const withPayee = (seed: number, retired?: ReturnType<typeof readRetiredBindings>) =>
    createSellerIdentity({ payee: createKeyPairFromSeed(new Uint8Array(32).fill(seed)), hrp: TESTNET_HRP, chainId: 1337, sellerId: '0123456789abcdef', usdcPayTo: () => USDC_PAY_TO, ...(retired ? { retired } : {}) });
  const first = withPayee(1);
  const firstDoc = first.didDocument(BASE);
  // The operator saved did.json before the rotation and lists it; a second rotation lists the second document, which carries the first.
  const second = withPayee(2, readRetiredBindings([firstDoc], TESTNET_HRP));
  const secondDoc = second.didDocument(BASE);
  const third = withPayee(3, readRetiredBindings([secondDoc], TESTNET_HRP));
  const thirdDoc = third.didDocument(BASE);

  test('receipts of a retired key verify against the live document, pinned to the payee they paid; offers only under the current key', async () => {
    expect(secondDoc.x402RetiredPayees?.map((r) => r.binding.kid)).toEqual([firstDoc.x402Payee.binding.kid]);
    // Newest first: the saved document's own binding, then the ones it listed.
    expect(thirdDoc.x402RetiredPayees?.map((r) => r.binding.payee)).toEqual([second.payeeAddress, first.payeeAddress]);
    expect(thirdDoc.verificationMethod.map((m) => m.id)).toEqual([thirdDoc.x402Payee.binding.kid, secondDoc.x402Payee.binding.kid, firstDoc.x402Payee.binding.kid]);
    expect(thirdDoc.assertionMethod).toEqual([thirdDoc.x402Payee.binding.kid]);
    expect(verifyDidDocument(thirdDoc, { baseUrl: BASE, payee: third.payeeAddress })).toMatchObject({ ok: true, retiredKids: [secondDoc.x402Payee.binding.kid, firstDoc.x402Payee.binding.kid] });
    const old = { paid: true, result, receipt: await createReceiptIssuer(first, () => T0).sign(facts, at) };
    const body = JSON.stringify(old);
    expect(verifyPaidBody(body, thirdDoc, { payee: first.payeeAddress, txId: facts.txId })).toMatchObject({ ok: true, anchored: true, retiredKey: true, kid: firstDoc.x402Payee.binding.kid, hybrid: { payee: first.payeeAddress } });
    // The payee it paid is the old one: pinned to today's, refused.
    expect(verifyPaidBody(body, thirdDoc, { payee: third.payeeAddress })).toMatchObject({ ok: false, reason: 'wrong_payee' });
    // Without the retired list, the old kid does not resolve.
    expect(verifyPaidBody(body, withPayee(3).didDocument(BASE))).toMatchObject({ ok: false, reason: 'unknown_key' });
    // A receipt of the current key is not a retired one.
    const now = JSON.stringify({ paid: true, result, receipt: await createReceiptIssuer(third, () => T0).sign(facts, at) });
    expect(verifyPaidBody(now, thirdDoc, { payee: third.payeeAddress })).toMatchObject({ ok: true, retiredKey: false });
    // A retired key signs no offers that verify.
    const offer = createOfferSigner(first, () => T0).extensionFor([{ ...native, payTo: first.payeeAddress }], BASE).info.offers[0];
    expect(verifyOffer(offer, thirdDoc, { nowMs: T0 })).toMatchObject({ ok: false, reason: 'unknown_key' });
    // A retired binding altered in the served document does not verify.
    const altered = { ...thirdDoc, x402RetiredPayees: thirdDoc.x402RetiredPayees!.map((r) => (r.binding.payee === first.payeeAddress ? { ...r, binding: { ...r.binding, sellerId: 'fedcba9876543210' } } : r)) };
    expect(verifyPaidBody(body, altered)).toMatchObject({ ok: false, reason: 'bad_signature' });
  });

  test('the operator\'s file is checked when read: a binding that does not verify, or not a list, is refused with the file named', async () => {
    expect(() => readRetiredBindings({ x402Payee: firstDoc.x402Payee }, TESTNET_HRP)).toThrow(/JSON array/);
    const forged = { ...firstDoc.x402Payee, binding: { ...firstDoc.x402Payee.binding, usdcPayTo: '0x000000000000000000000000000000000000dEaD' } };
    expect(() => readRetiredBindings([firstDoc.x402Payee, forged], TESTNET_HRP)).toThrow(/retired key 2: the payee's signature/);
    expect(readRetiredBindings([firstDoc.x402Payee, firstDoc], TESTNET_HRP)).toHaveLength(1);
    const dir = await tmpDir();
    const path = join(dir, 'retired.json');
    writeFileSync(path, JSON.stringify([forged]));
    await expect(loadRetiredKeys(path, TESTNET_HRP)).rejects.toMatchObject({ code: 'config_invalid', message: expect.stringContaining(`--retired-keys ${path}: retired key 1`) });
    writeFileSync(path, JSON.stringify([secondDoc]));
    expect((await loadRetiredKeys(path, TESTNET_HRP))!.map((b) => b.binding.payee)).toEqual([second.payeeAddress, first.payeeAddress]);
    expect(await loadRetiredKeys(undefined, TESTNET_HRP)).toBeUndefined();
  });
});

describe('receipt signing that fails', () => {
  const facts = { rail: 'native', serviceId: 'native-world-clock', network: 'native:1337', payer: 'tnative1payer', amount: '200000', asset: 'NATIVE', result: { ok: 1 } } as const;
  const at = { baseUrl: BASE, resource: RESOURCE };

  test('a batch that cannot be signed: each receipt is signed alone; when that fails too, the call keeps its JWS receipt and the failure is counted, never thrown', async () => {
    let calls = 0;
    const firstFails = createReceiptIssuer(seller, Date.now, (kp, msg) => {
      if (calls++ === 0) throw new Error('out of memory');
      return signHybrid(kp, msg);
    });
    const three = await Promise.all(['01', '02', '03'].map((b) => firstFails.sign({ ...facts, txId: b.repeat(32) }, at)));
    expect(three.map((r) => r.hybridReceipt?.format)).toEqual(['native-x402/hybrid-receipt/v1', 'native-x402/hybrid-receipt/v1', 'native-x402/hybrid-receipt/v1']);
    for (const r of three) expect(verifyReceipt(r, seller.didDocument(BASE))).toMatchObject({ ok: true });
    expect(firstFails.stats).toEqual({ signatures: 3, receipts: 3, failures: 0 });

    const never = createReceiptIssuer(seller, Date.now, () => {
      throw new Error('the signer is gone');
    });
    const both = await Promise.all(['04', '05'].map((b) => never.sign({ ...facts, txId: b.repeat(32) }, at)));
    for (const r of both) {
      expect(r.hybridReceipt).toBeUndefined();
      expect(r.offerReceipt?.format).toBe('jws');
    }
    expect(never.stats).toEqual({ signatures: 0, receipts: 0, failures: 2 });
  });
});

/** 64 hex characters of a small number (a tx id). */
const toHex2 = (i: number): string => Buffer.from(sha256(new Uint8Array([i]))).toString('hex');

describe('receipt batch trees (RFC 9162 audit paths)', () => {
  test('for every size up to 33, each leaf\'s path leads to the root, and no other leaf\'s', () => {
    for (let n = 2; n <= 33; n++) {
      const leaves = Array.from({ length: n }, (_, i) => sha256(new Uint8Array([n, i])));
      const { root, paths } = receiptBatchTree(leaves);
      // RFC 9162: a path is at most ceil(log2 n) hashes long.
      expect(Math.max(...paths.map((p) => p.length))).toBe(Math.ceil(Math.log2(n)));
      for (let i = 0; i < n; i++) {
        const proof = { size: n, index: i, path: paths[i].map((h) => Buffer.from(h).toString('hex')) };
        expect(Buffer.from(receiptBatchRootOf(leaves[i], proof)!).equals(Buffer.from(root))).toBe(true);
        const j = (i + 1) % n;
        expect(Buffer.from(receiptBatchRootOf(leaves[j], proof) ?? new Uint8Array()).equals(Buffer.from(root))).toBe(false);
        // The same path under another index does not lead to the root (another size may: see the batch test above).
        const other = receiptBatchRootOf(leaves[i], { ...proof, index: j });
        expect(other !== undefined && Buffer.from(other).equals(Buffer.from(root))).toBe(false);
      }
    }
  });
});
