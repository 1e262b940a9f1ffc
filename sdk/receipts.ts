/**
 * Offline verification of a node's signed offers and receipts, given its DID document (fetched
 * once from `<node>/.well-known/did.json` and kept with the receipts: nothing here touches the
 * network).
 *
 * - `verifyDidDocument`: the payee's binding of the offer key (its ML-DSA-87 + Ed25519
 *   signature over the key, the DID, the seller id and the payees) holds.
 * - `verifyOffer`: a JWS offer of a 402 (x402 Offer and Receipt extension) is signed by that key,
 *   names a resource under that DID and a payee the binding authorizes, has not expired, and —
 *   given the 402's `accepts` — matches one of them.
 * - `verifyReceipt`: the extension's JWS receipt and the hybrid receipt are signed by the seller,
 *   agree with each other, and — given the result bytes — cover exactly those bytes.
 * - `verifyPaidBody`: all of that for a 200 body as returned (its text), result bytes included.
 *
 * Outcomes are values: `{ok: true, …}` or `{ok: false, reason}` with a snake_case reason.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { addressOfPublicKey, verifyHybridReference, type HybridPublicKey } from '../consensus/keys.js';
import { tryDecodeAddress } from '../consensus/address.js';
import { bytesEqual } from '../consensus/hash.js';
import {
  didWebOf,
  hybridReceiptMessage,
  HYBRID_RECEIPT_SCHEME,
  OFFER_KEY_BINDING_SCHEME,
  offerKeyBindingMessage,
  resultSha256Of,
  type HybridReceipt,
  type HybridReceiptPayload,
  type OfferKeyBinding,
} from '../x402/core/wire.js';
import { RECEIPT_BATCH_SCHEME, receiptBatchSignedMessage, type ReceiptBatchProof } from '../x402/core/receiptBatch.js';

/** A failed check: a stable snake_case reason and a sentence. */
export interface VerifyFailure {
  readonly ok: false;
  readonly reason: string;
  readonly message: string;
}

/** A DID document whose payee binding holds. */
export interface VerifiedSeller {
  readonly ok: true;
  readonly did: string;
  readonly kid: string;
  /** The binding the payee signed. */
  readonly binding: OfferKeyBinding;
  readonly payeePublicKey: HybridPublicKey;
  /** The offer key (Ed25519 public key). */
  readonly offerKey: Uint8Array;
}

/** The payload of a JWS offer (x402 Offer and Receipt extension §4.2). */
export interface OfferPayload {
  readonly version: number;
  readonly resourceUrl: string;
  readonly scheme: string;
  readonly network: string;
  readonly asset: string;
  readonly payTo: string;
  readonly amount: string;
  readonly validUntil?: number;
}

/** The payload of a JWS receipt (§5.2). */
export interface ReceiptPayload {
  readonly version: number;
  readonly network: string;
  readonly resourceUrl: string;
  readonly payer: string;
  readonly issuedAt: number;
  readonly transaction?: string;
}

const fail = (reason: string, message: string): VerifyFailure => ({ ok: false, reason, message });
const fromB64url = (s: unknown): Uint8Array | undefined => (typeof s === 'string' && /^[A-Za-z0-9_-]*$/.test(s) ? new Uint8Array(Buffer.from(s, 'base64url')) : undefined);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks a node's DID document: the offer key it publishes is bound by the payee's hybrid signature. `baseUrl`: the node it must be the DID of. */
export function verifyDidDocument(doc: unknown, opts: { readonly baseUrl?: string } = {}): VerifiedSeller | VerifyFailure {
  if (!isObject(doc) || typeof doc.id !== 'string' || !isObject(doc.x402Payee)) return fail('did_document_invalid', 'not a DID document with an x402Payee binding');
  const payee = doc.x402Payee as Record<string, unknown>;
  const binding = payee.binding as OfferKeyBinding | undefined;
  if (payee.scheme !== OFFER_KEY_BINDING_SCHEME || !isObject(binding) || binding.version !== 1) return fail('did_document_invalid', `x402Payee is not a ${OFFER_KEY_BINDING_SCHEME} binding`);
  if (binding.did !== doc.id) return fail('binding_mismatch', `the binding is for ${String(binding.did)}, the document is ${doc.id}`);
  if (opts.baseUrl !== undefined && doc.id !== didWebOf(opts.baseUrl)) return fail('did_mismatch', `the document is ${doc.id}, not the DID of ${opts.baseUrl} (${didWebOf(opts.baseUrl)})`);
  const methods = Array.isArray(doc.verificationMethod) ? (doc.verificationMethod as Record<string, unknown>[]) : [];
  const method = methods.find((m) => isObject(m) && m.id === binding.kid);
  const jwk = method?.publicKeyJwk as Record<string, unknown> | undefined;
  if (!jwk || jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || jwk.x !== binding.publicKeyJwk?.x) return fail('binding_mismatch', `the document does not publish the bound key ${String(binding.kid)}`);
  const offerKey = fromB64url(jwk.x);
  const pk = payee.publicKey as Record<string, unknown> | undefined;
  const sig = payee.signature as Record<string, unknown> | undefined;
  const mldsa = fromB64url(pk?.mldsa);
  const ed = fromB64url(pk?.ed25519);
  const sigM = fromB64url(sig?.mldsa);
  const sigE = fromB64url(sig?.ed25519);
  if (!offerKey || offerKey.length !== 32 || !mldsa || !ed || !sigM || !sigE) return fail('did_document_invalid', 'the binding\'s keys or signatures are not base64url');
  const payeePublicKey = { mldsa, ed25519: ed };
  const hrp = typeof binding.payee === 'string' ? binding.payee.slice(0, binding.payee.lastIndexOf('1')) : '';
  const id = tryDecodeAddress(binding.payee, hrp);
  if (!id || !bytesEqual(id, addressOfPublicKey(payeePublicKey))) return fail('binding_mismatch', `the published public key is not the payee ${String(binding.payee)}'s`);
  if (!verifyHybridReference(payeePublicKey, offerKeyBindingMessage(binding), { mldsa: sigM, ed25519: sigE })) return fail('bad_signature', 'the payee\'s signature over the key binding does not verify');
  return { ok: true, did: doc.id, kid: binding.kid, binding, payeePublicKey, offerKey };
}

/** Verifies a JWS compact serialization (EdDSA) with the seller's offer key; its payload when it holds. */
export function verifyJws<T>(jws: unknown, seller: VerifiedSeller): { readonly ok: true; readonly payload: T } | VerifyFailure {
  if (typeof jws !== 'string') return fail('jws_invalid', 'the signature is not a JWS compact serialization');
  const parts = jws.split('.');
  if (parts.length !== 3) return fail('jws_invalid', 'a JWS compact serialization has three parts');
  let header: { alg?: unknown; kid?: unknown };
  let payload: T;
  try {
    header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8')) as typeof header;
    payload = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as T;
  } catch {
    return fail('jws_invalid', 'the JWS header or payload is not base64url JSON');
  }
  if (header.alg !== 'EdDSA') return fail('jws_invalid', `alg is ${String(header.alg)}, not EdDSA`);
  if (header.kid !== seller.kid) return fail('unknown_key', `kid ${String(header.kid)} is not the seller's bound key ${seller.kid}`);
  const sig = fromB64url(parts[2]);
  let good = false;
  try {
    good = sig !== undefined && ed25519.verify(sig, new TextEncoder().encode(`${parts[0]}.${parts[1]}`), seller.offerKey, { zip215: false });
  } catch {
    good = false;
  }
  return good ? { ok: true, payload } : fail('bad_signature', 'the JWS signature does not verify');
}

/** Whether `resourceUrl` lies under the seller's DID (the did:web of its base URL). */
function underDid(resourceUrl: string, did: string): boolean {
  try {
    return didWebOf(resourceUrl).startsWith(`${did}:`);
  } catch {
    return false;
  }
}

/** CAIP-2 of an x402 v1 network name this node uses (`base`), else the name as is. */
const caip2 = (network: string): string => (network === 'base' ? 'eip155:8453' : network === 'base-sepolia' ? 'eip155:84532' : network);

/** An x402 payment option as a 402 carries it (v1 `maxAmountRequired` or v2 `amount`). */
export interface OfferedOption {
  readonly scheme: string;
  readonly network: string;
  readonly asset: string;
  readonly payTo: string;
  readonly amount?: string;
  readonly maxAmountRequired?: string;
  readonly extra?: Record<string, unknown>;
}

/**
 * Verifies one signed offer (`{format: "jws", signature}`) against the seller's DID document:
 * signature, resource under the DID, a payee the binding authorizes, not expired at `nowMs`, and
 * when `accepts` is given, the index of the option it matches (field by field).
 */
export function verifyOffer(offer: unknown, didDocument: unknown, opts: { readonly accepts?: readonly OfferedOption[]; readonly nowMs?: number } = {}): { readonly ok: true; readonly payload: OfferPayload; readonly acceptIndex?: number } | VerifyFailure {
  const seller = verifyDidDocument(didDocument);
  if (!seller.ok) return seller;
  if (!isObject(offer) || offer.format !== 'jws') return fail('unsupported_format', 'only JWS offers are signed by this seller');
  const v = verifyJws<OfferPayload>(offer.signature, seller);
  if (!v.ok) return v;
  const p = v.payload;
  if (p.version !== 1) return fail('unsupported_version', `offer version ${String(p.version)}`);
  if (!underDid(p.resourceUrl, seller.did)) return fail('unauthorized_signer', `${p.resourceUrl} is not a resource of ${seller.did}`);
  const b = seller.binding;
  if (p.payTo !== b.payee && !(b.usdcPayTo !== undefined && p.payTo.toLowerCase() === b.usdcPayTo.toLowerCase())) return fail('unauthorized_signer', `payTo ${p.payTo} is not a payee the seller bound`);
  if (p.validUntil && p.validUntil * 1000 < (opts.nowMs ?? Date.now())) return fail('offer_expired', `the offer expired at ${new Date(p.validUntil * 1000).toISOString()}`);
  if (!opts.accepts) return { ok: true, payload: p };
  const at = opts.accepts.findIndex((a) => a.scheme === p.scheme && (a.network === p.network || caip2(a.network) === p.network || (a.scheme === 'native-x402' && `native:${String(a.extra?.chainId)}` === p.network)) && a.asset === p.asset && a.payTo === p.payTo && (a.amount ?? a.maxAmountRequired) === p.amount);
  return at < 0 ? fail('offer_mismatch', 'the offer matches none of the 402\'s options') : { ok: true, payload: p, acceptIndex: at };
}

/** What a verified receipt states. */
export interface VerifiedReceipt {
  readonly ok: true;
  /** The extension's receipt payload. */
  readonly receipt: ReceiptPayload;
  /** The hybrid receipt's payload. */
  readonly hybrid: HybridReceiptPayload;
  /** Whether the result bytes were given and match `resultSha256`. */
  readonly resultVerified: boolean;
}

/** What a receipt must also be about (any of it): refused when it names another seller or payment. */
export interface ReceiptExpectations {
  readonly sellerId?: string;
  readonly txId?: string;
  readonly payer?: string;
  readonly serviceId?: string;
}

/**
 * Verifies a paid call's receipts (the 200's `receipt`, with `offerReceipt` and `hybridReceipt`)
 * against the seller's DID document; with `resultBytes`, that the hybrid receipt covers them.
 */
export function verifyReceipt(receipt: unknown, didDocument: unknown, opts: { readonly resultBytes?: Uint8Array; readonly expect?: ReceiptExpectations } = {}): VerifiedReceipt | VerifyFailure {
  const seller = verifyDidDocument(didDocument);
  if (!seller.ok) return seller;
  if (!isObject(receipt) || !isObject(receipt.offerReceipt) || !isObject(receipt.hybridReceipt)) return fail('receipt_missing', 'the receipt carries no offerReceipt and hybridReceipt');
  const jwsReceipt = receipt.offerReceipt;
  if (jwsReceipt.format !== 'jws') return fail('unsupported_format', 'only JWS receipts are signed by this seller');
  const v = verifyJws<ReceiptPayload>(jwsReceipt.signature, seller);
  if (!v.ok) return v;
  const r = v.payload;
  if (r.version !== 1) return fail('unsupported_version', `receipt version ${String(r.version)}`);
  if (!underDid(r.resourceUrl, seller.did)) return fail('unauthorized_signer', `${r.resourceUrl} is not a resource of ${seller.did}`);
  const h = receipt.hybridReceipt as unknown as HybridReceipt;
  const p = h.payload;
  if ((h.format !== HYBRID_RECEIPT_SCHEME && h.format !== RECEIPT_BATCH_SCHEME) || !isObject(p) || p.version !== 1) return fail('unsupported_format', `the hybrid receipt is neither ${HYBRID_RECEIPT_SCHEME} nor ${RECEIPT_BATCH_SCHEME}`);
  if (p.payee !== seller.binding.payee || p.sellerId !== seller.binding.sellerId) return fail('wrong_seller', `the hybrid receipt is of seller ${String(p.sellerId)} (payee ${String(p.payee)}), not ${seller.binding.sellerId}`);
  const sigM = fromB64url(h.signature?.mldsa);
  const sigE = fromB64url(h.signature?.ed25519);
  // v1: signed over the receipt's own message; batch: over the root its salted leaf's audit path leads to, and the batch's size.
  let signed: Uint8Array | undefined = hybridReceiptMessage(p);
  if (h.format === RECEIPT_BATCH_SCHEME) {
    const proof = h.batch as ReceiptBatchProof | undefined;
    signed = isObject(proof) ? receiptBatchSignedMessage(signed, proof) : undefined;
    if (!signed) return fail('bad_batch_proof', 'the hybrid receipt\'s batch proof is malformed');
  }
  if (!sigM || !sigE || !verifyHybridReference(seller.payeePublicKey, signed, { mldsa: sigM, ed25519: sigE })) return fail('bad_signature', 'the hybrid receipt\'s signatures do not verify under the payee key');
  if (r.transaction !== p.txId || r.payer !== p.payer || r.network !== p.network || r.resourceUrl !== p.resourceUrl || r.issuedAt !== p.issuedAt) return fail('receipt_mismatch', 'the JWS receipt and the hybrid receipt name different payments');
  const e = opts.expect ?? {};
  if (e.sellerId !== undefined && e.sellerId !== p.sellerId) return fail('wrong_seller', `the receipt is of seller ${p.sellerId}, not ${e.sellerId}`);
  if (e.txId !== undefined && e.txId.toLowerCase() !== p.txId.toLowerCase()) return fail('wrong_payment', `the receipt is for payment ${p.txId}, not ${e.txId}`);
  if (e.payer !== undefined && e.payer.toLowerCase() !== p.payer.toLowerCase()) return fail('wrong_payment', `the receipt's payer is ${p.payer}, not ${e.payer}`);
  if (e.serviceId !== undefined && e.serviceId !== p.serviceId) return fail('wrong_payment', `the receipt is for ${p.serviceId}, not ${e.serviceId}`);
  if (opts.resultBytes !== undefined && resultSha256Of(opts.resultBytes) !== p.resultSha256) return fail('result_mismatch', 'the result bytes are not the ones the receipt covers (sha256 differs)');
  return { ok: true, receipt: r, hybrid: p, resultVerified: opts.resultBytes !== undefined };
}

/**
 * The result bytes of a 200 body as returned (its text): the `result` member's JSON exactly as it
 * stands in the body (the node writes `JSON.stringify(result)` there verbatim); undefined when the
 * body has no such member.
 */
export function resultBytesOfBody(bodyText: string): Uint8Array | undefined {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    return undefined;
  }
  if (!isObject(body) || !('result' in body)) return undefined;
  const text = JSON.stringify(body.result);
  // The bytes must be the body's own, not a re-encoding that happens to parse alike.
  return bodyText.includes(`"result":${text}`) ? new TextEncoder().encode(text) : undefined;
}

/** Verifies a paid call's 200 body (its text, exactly as returned): its receipts, and that they cover its result bytes. */
export function verifyPaidBody(bodyText: string, didDocument: unknown, expect?: ReceiptExpectations): VerifiedReceipt | VerifyFailure {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    return fail('body_invalid', 'the body is not JSON');
  }
  if (!isObject(body) || body.paid !== true) return fail('body_invalid', 'not the body of a paid call ({paid: true, result, receipt})');
  const resultBytes = resultBytesOfBody(bodyText);
  if (!resultBytes) return fail('result_mismatch', 'the body\'s result is not in the form the node writes (JSON.stringify of the result)');
  return verifyReceipt(body.receipt, didDocument, { resultBytes, ...(expect ? { expect } : {}) });
}
