/**
 * Offline verification of a node's signed offers and receipts, given its DID document (fetched
 * from `<node>/.well-known/did.json` and kept with the receipts: nothing here touches the
 * network; sdk/receiptPayment.ts checks a native payment on chain).
 *
 * - `verifyDidDocument`: the payee's binding of the offer key (its ML-DSA-87 + Ed25519
 *   signature over the key, the DID, the seller id and the payees) holds.
 * - `verifyOffer`: a JWS offer of a 402 (x402 Offer and Receipt extension) is signed by that key,
 *   names a resource under that DID and a payee the binding authorizes, has not expired, and —
 *   given the 402's `accepts` — matches one of them.
 * - `verifyReceipt`: the extension's JWS receipt and the hybrid receipt are signed by the seller
 *   (its current key, or a retired one the document still lists), agree with each other, and —
 *   given the result bytes — cover exactly those bytes.
 * - `verifyPaidBody`: all of that for a 200 body as returned (its text), result bytes included;
 *   `verifyMcpResult` for a paid MCP tool result.
 *
 * A DID document proves nothing by itself: anyone can make one that names any DID and binds a key
 * of their own, and it verifies. What ties a receipt to the seller you paid are the expectations
 * (`expect`): above all the payee you paid (the `payTo` of your payment on chain), then the DID,
 * the seller id and the payment. Each verdict lists what was pinned (`pinned`) and what was not
 * (`unpinned`); `anchored` is true only when the payee was pinned.
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
  resultBytesOf,
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

/** A key binding whose payee signature holds: the offer key (`kid`) speaks for `binding.payee`. */
export interface VerifiedBinding {
  readonly kid: string;
  /** The binding the payee signed. */
  readonly binding: OfferKeyBinding;
  readonly payeePublicKey: HybridPublicKey;
  /** The offer key (Ed25519 public key). */
  readonly offerKey: Uint8Array;
}

/** A DID document whose (current) payee binding holds. */
export interface VerifiedSeller extends VerifiedBinding {
  readonly ok: true;
  readonly did: string;
  /** The `kid`s of the retired keys the document still lists (`x402RetiredPayees`): receipts signed under them verify. */
  readonly retiredKids: readonly string[];
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

/**
 * Who the seller must be. Without these a verdict says only that the signatures agree with the
 * DID document given, which anyone can write; `payee` is the one that ties it to the seller you
 * paid (the `payTo` of your payment, on chain or in a quote you trust).
 */
export interface SellerExpectations {
  /** The node's base URL (`https://node.example`): the document must be its did:web. */
  readonly baseUrl?: string;
  /** The seller's DID (`did:web:node.example`). */
  readonly did?: string;
  /** The payee address (bech32m) the payment went to. */
  readonly payee?: string;
  /** The seller (settlement ledger) id, 16 hex characters. */
  readonly sellerId?: string;
}

/** What a receipt must also be about (any of it): refused when it names another seller or payment. */
export interface ReceiptExpectations extends SellerExpectations {
  readonly txId?: string;
  readonly payer?: string;
  readonly serviceId?: string;
  /** Atomic units of the receipt's asset (base units of NATIVE, USDC atomic units), decimal. */
  readonly amount?: string;
  /** The paid resource URL. */
  readonly resourceUrl?: string;
}

/** What a verdict pinned: each field is listed under `pinned` when an expectation checked it, else under `unpinned`. */
export const PINNABLE = ['did', 'payee', 'sellerId', 'txId', 'payer', 'amount', 'resourceUrl'] as const;
export type Pinnable = (typeof PINNABLE)[number];

/** How far a verdict is tied to the seller you know (see module comment). */
export interface PinReport {
  readonly pinned: readonly Pinnable[];
  readonly unpinned: readonly Pinnable[];
  /** The payee was pinned: the signer is the payee you expected, not merely whoever wrote the document. */
  readonly anchored: boolean;
}

const fail = (reason: string, message: string): VerifyFailure => ({ ok: false, reason, message });
const fromB64url = (s: unknown): Uint8Array | undefined => (typeof s === 'string' && /^[A-Za-z0-9_-]*$/.test(s) ? new Uint8Array(Buffer.from(s, 'base64url')) : undefined);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const failed = (v: object): v is VerifyFailure => (v as { ok?: unknown }).ok === false;

/** The DID an expectation names (`did`, or the did:web of `baseUrl`); a failure when they disagree or the URL is bad. */
function expectedDid(e: SellerExpectations): string | undefined | VerifyFailure {
  let fromUrl: string | undefined;
  if (e.baseUrl !== undefined) {
    try {
      fromUrl = didWebOf(e.baseUrl);
    } catch {
      return fail('did_mismatch', `${e.baseUrl} is not a URL`);
    }
  }
  if (fromUrl !== undefined && e.did !== undefined && fromUrl !== e.did) return fail('did_mismatch', `the expected DID ${e.did} is not the did:web of ${e.baseUrl} (${fromUrl})`);
  return e.did ?? fromUrl;
}

/** The fields pinned by `e` (of PINNABLE). */
function pinReport(e: ReceiptExpectations): PinReport {
  const given: Record<Pinnable, unknown> = { did: e.did ?? e.baseUrl, payee: e.payee, sellerId: e.sellerId, txId: e.txId, payer: e.payer, amount: e.amount, resourceUrl: e.resourceUrl };
  const pinned = PINNABLE.filter((k) => given[k] !== undefined);
  return { pinned, unpinned: PINNABLE.filter((k) => given[k] === undefined), anchored: e.payee !== undefined };
}

/** Checks one `x402Payee`-shaped entry of a DID document (the current binding or a retired one). */
function verifyBindingEntry(doc: Record<string, unknown>, entry: unknown): VerifiedBinding | VerifyFailure {
  if (!isObject(entry)) return fail('did_document_invalid', 'a payee binding is not an object');
  const binding = entry.binding as OfferKeyBinding | undefined;
  if (entry.scheme !== OFFER_KEY_BINDING_SCHEME || !isObject(binding) || binding.version !== 1) return fail('did_document_invalid', `x402Payee is not a ${OFFER_KEY_BINDING_SCHEME} binding`);
  if (binding.did !== doc.id) return fail('binding_mismatch', `the binding is for ${String(binding.did)}, the document is ${String(doc.id)}`);
  const methods = Array.isArray(doc.verificationMethod) ? (doc.verificationMethod as Record<string, unknown>[]) : [];
  const method = methods.find((m) => isObject(m) && m.id === binding.kid);
  const jwk = method?.publicKeyJwk as Record<string, unknown> | undefined;
  if (!jwk || jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || jwk.x !== binding.publicKeyJwk?.x) return fail('binding_mismatch', `the document does not publish the bound key ${String(binding.kid)}`);
  const offerKey = fromB64url(jwk.x);
  const pk = entry.publicKey as Record<string, unknown> | undefined;
  const sig = entry.signature as Record<string, unknown> | undefined;
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
  return { kid: binding.kid, binding, payeePublicKey, offerKey };
}

/** The retired bindings a document lists (`x402RetiredPayees`), unchecked. */
const retiredEntries = (doc: Record<string, unknown>): unknown[] => (Array.isArray(doc.x402RetiredPayees) ? doc.x402RetiredPayees : []);

/**
 * Checks a node's DID document: the offer key it publishes is bound by the payee's hybrid
 * signature; with expectations, that it is the expected DID (`baseUrl` / `did`), payee and seller.
 */
export function verifyDidDocument(doc: unknown, expect: SellerExpectations = {}): VerifiedSeller | VerifyFailure {
  if (!isObject(doc) || typeof doc.id !== 'string' || !isObject(doc.x402Payee)) return fail('did_document_invalid', 'not a DID document with an x402Payee binding');
  const did = expectedDid(expect);
  if (typeof did === 'object') return did;
  if (did !== undefined && doc.id !== did) return fail('did_mismatch', `the document is ${doc.id}, not ${did}${expect.baseUrl ? ` (the DID of ${expect.baseUrl})` : ''}`);
  const current = verifyBindingEntry(doc, doc.x402Payee);
  if (failed(current)) return current;
  if (expect.payee !== undefined && current.binding.payee !== expect.payee) return fail('wrong_payee', `the document binds payee ${current.binding.payee}, not ${expect.payee}`);
  if (expect.sellerId !== undefined && current.binding.sellerId !== expect.sellerId.toLowerCase()) return fail('wrong_seller', `the document is of seller ${current.binding.sellerId}, not ${expect.sellerId}`);
  const retiredKids = retiredEntries(doc).flatMap((e) => (isObject(e) && isObject(e.binding) && typeof e.binding.kid === 'string' ? [e.binding.kid] : []));
  return { ok: true, did: doc.id, ...current, retiredKids };
}

/** The binding a JWS's `kid` names: the document's current one, or a retired one it still lists (checked now). */
function bindingOfKid(doc: unknown, seller: VerifiedSeller, kid: unknown): (VerifiedBinding & { readonly retired: boolean }) | VerifyFailure {
  if (kid === seller.kid) return { ...seller, retired: false };
  const entry = retiredEntries(doc as Record<string, unknown>).find((e) => isObject(e) && isObject(e.binding) && e.binding.kid === kid);
  if (entry === undefined) return fail('unknown_key', `kid ${String(kid)} is neither the seller's bound key ${seller.kid} nor a retired key its document lists`);
  const b = verifyBindingEntry(doc as Record<string, unknown>, entry);
  return failed(b) ? b : { ...b, retired: true };
}

/** The `kid` of a JWS's protected header (undefined when unreadable). */
function kidOfJws(jws: unknown): unknown {
  try {
    return typeof jws === 'string' ? (JSON.parse(Buffer.from(jws.split('.')[0], 'base64url').toString('utf8')) as { kid?: unknown }).kid : undefined;
  } catch {
    return undefined;
  }
}

/** Verifies a JWS compact serialization (EdDSA) with a bound offer key; its payload when it holds. */
export function verifyJws<T>(jws: unknown, key: Pick<VerifiedBinding, 'kid' | 'offerKey'>): { readonly ok: true; readonly payload: T } | VerifyFailure {
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
  if (header.kid !== key.kid) return fail('unknown_key', `kid ${String(header.kid)} is not the seller's bound key ${key.kid}`);
  const sig = fromB64url(parts[2]);
  let good = false;
  try {
    good = sig !== undefined && ed25519.verify(sig, new TextEncoder().encode(`${parts[0]}.${parts[1]}`), key.offerKey, { zip215: false });
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
 * signature (the current key only: a retired key signs no new offers), resource under the DID, a
 * payee the binding authorizes, not expired at `nowMs`, and when `accepts` is given, the index
 * of the option it matches (field by field). `expect`: the seller it must be (see SellerExpectations).
 */
export function verifyOffer(
  offer: unknown,
  didDocument: unknown,
  opts: { readonly accepts?: readonly OfferedOption[]; readonly nowMs?: number; readonly expect?: SellerExpectations } = {},
): ({ readonly ok: true; readonly payload: OfferPayload; readonly acceptIndex?: number } & PinReport) | VerifyFailure {
  const seller = verifyDidDocument(didDocument, opts.expect);
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
  const e = opts.expect ?? {};
  const pins = pinReport({ did: e.did, baseUrl: e.baseUrl, payee: e.payee, sellerId: e.sellerId });
  const report = { pinned: pins.pinned, unpinned: pins.unpinned.filter((k) => k === 'did' || k === 'payee' || k === 'sellerId'), anchored: pins.anchored };
  if (!opts.accepts) return { ok: true, payload: p, ...report };
  const at = opts.accepts.findIndex((a) => a.scheme === p.scheme && (a.network === p.network || caip2(a.network) === p.network || (a.scheme === 'native-x402' && `native:${String(a.extra?.chainId)}` === p.network)) && a.asset === p.asset && a.payTo === p.payTo && (a.amount ?? a.maxAmountRequired) === p.amount);
  return at < 0 ? fail('offer_mismatch', 'the offer matches none of the 402\'s options') : { ok: true, payload: p, acceptIndex: at, ...report };
}

/** What a verified receipt states. */
export interface VerifiedReceipt extends PinReport {
  readonly ok: true;
  /** The extension's receipt payload. */
  readonly receipt: ReceiptPayload;
  /** The hybrid receipt's payload. */
  readonly hybrid: HybridReceiptPayload;
  /** Whether the result bytes were given and match `resultSha256`. */
  readonly resultVerified: boolean;
  /** The DID of the document the receipt verified against (as that document states it). */
  readonly did: string;
  /** The `kid` that signed the JWS receipt; `retiredKey` when it is a retired key the document still lists. */
  readonly kid: string;
  readonly retiredKey: boolean;
}

const sameAmount = (a: string, b: string): boolean => {
  try {
    return BigInt(a) === BigInt(b);
  } catch {
    return false;
  }
};

/**
 * Verifies a paid call's receipts (the 200's `receipt`, with `offerReceipt` and `hybridReceipt`)
 * against the seller's DID document; with `resultBytes`, that the hybrid receipt covers them;
 * with `expect`, that it is the seller and the payment you expect (see ReceiptExpectations).
 */
export function verifyReceipt(receipt: unknown, didDocument: unknown, opts: { readonly resultBytes?: Uint8Array; readonly expect?: ReceiptExpectations } = {}): VerifiedReceipt | VerifyFailure {
  const e = opts.expect ?? {};
  // The payee and the seller id are those of the receipt's own binding (a retired key's payee may differ from today's).
  const seller = verifyDidDocument(didDocument, { did: e.did, baseUrl: e.baseUrl });
  if (!seller.ok) return seller;
  if (!isObject(receipt) || !isObject(receipt.offerReceipt) || !isObject(receipt.hybridReceipt)) return fail('receipt_missing', 'the receipt carries no offerReceipt and hybridReceipt');
  const jwsReceipt = receipt.offerReceipt;
  if (jwsReceipt.format !== 'jws') return fail('unsupported_format', 'only JWS receipts are signed by this seller');
  const key = bindingOfKid(didDocument, seller, kidOfJws(jwsReceipt.signature));
  if (failed(key)) return key;
  const v = verifyJws<ReceiptPayload>(jwsReceipt.signature, key);
  if (!v.ok) return v;
  const r = v.payload;
  if (r.version !== 1) return fail('unsupported_version', `receipt version ${String(r.version)}`);
  if (!underDid(r.resourceUrl, seller.did)) return fail('unauthorized_signer', `${r.resourceUrl} is not a resource of ${seller.did}`);
  const h = receipt.hybridReceipt as unknown as HybridReceipt;
  const p = h.payload;
  if ((h.format !== HYBRID_RECEIPT_SCHEME && h.format !== RECEIPT_BATCH_SCHEME) || !isObject(p) || p.version !== 1) return fail('unsupported_format', `the hybrid receipt is neither ${HYBRID_RECEIPT_SCHEME} nor ${RECEIPT_BATCH_SCHEME}`);
  if (p.payee !== key.binding.payee || p.sellerId !== key.binding.sellerId) return fail('wrong_seller', `the hybrid receipt is of seller ${String(p.sellerId)} (payee ${String(p.payee)}), not ${key.binding.sellerId}`);
  const sigM = fromB64url(h.signature?.mldsa);
  const sigE = fromB64url(h.signature?.ed25519);
  // v1: signed over the receipt's own message; batch: over the root its salted leaf's audit path leads to, and the batch's size.
  let signed: Uint8Array | undefined = hybridReceiptMessage(p);
  if (h.format === RECEIPT_BATCH_SCHEME) {
    const proof = h.batch as ReceiptBatchProof | undefined;
    signed = isObject(proof) ? receiptBatchSignedMessage(signed, proof) : undefined;
    if (!signed) return fail('bad_batch_proof', 'the hybrid receipt\'s batch proof is malformed');
  }
  if (!sigM || !sigE || !verifyHybridReference(key.payeePublicKey, signed, { mldsa: sigM, ed25519: sigE })) return fail('bad_signature', 'the hybrid receipt\'s signatures do not verify under the payee key');
  if (r.transaction !== p.txId || r.payer !== p.payer || r.network !== p.network || r.resourceUrl !== p.resourceUrl || r.issuedAt !== p.issuedAt) return fail('receipt_mismatch', 'the JWS receipt and the hybrid receipt name different payments');
  if (e.payee !== undefined && e.payee !== p.payee) return fail('wrong_payee', `the receipt is signed by payee ${p.payee}, not ${e.payee}`);
  if (e.sellerId !== undefined && e.sellerId.toLowerCase() !== p.sellerId) return fail('wrong_seller', `the receipt is of seller ${p.sellerId}, not ${e.sellerId}`);
  if (e.txId !== undefined && e.txId.toLowerCase() !== p.txId.toLowerCase()) return fail('wrong_payment', `the receipt is for payment ${p.txId}, not ${e.txId}`);
  if (e.payer !== undefined && e.payer.toLowerCase() !== p.payer.toLowerCase()) return fail('wrong_payment', `the receipt's payer is ${p.payer}, not ${e.payer}`);
  if (e.serviceId !== undefined && e.serviceId !== p.serviceId) return fail('wrong_payment', `the receipt is for ${p.serviceId}, not ${e.serviceId}`);
  if (e.amount !== undefined && !sameAmount(e.amount, p.amount)) return fail('wrong_payment', `the receipt's amount is ${p.amount}, not ${e.amount}`);
  if (e.resourceUrl !== undefined && e.resourceUrl !== p.resourceUrl) return fail('wrong_payment', `the receipt is for ${p.resourceUrl}, not ${e.resourceUrl}`);
  if (opts.resultBytes !== undefined && resultSha256Of(opts.resultBytes) !== p.resultSha256) return fail('result_mismatch', 'the result bytes are not the ones the receipt covers (sha256 differs)');
  return { ok: true, receipt: r, hybrid: p, resultVerified: opts.resultBytes !== undefined, did: seller.did, kid: key.kid, retiredKey: key.retired, ...pinReport(e) };
}

/**
 * The raw text of each member of a JSON text's top-level object, by key; a failure when a key
 * repeats at any depth (parsers differ on which one wins, so such a body has no one meaning).
 * `text` must already parse as JSON.
 */
function topLevelMembers(text: string): Map<string, string> | VerifyFailure {
  let i = 0;
  const ws = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const str = (): string => {
    const start = i++;
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return text.slice(start, i);
  };
  const members = new Map<string, string>();
  let duplicate: string | undefined;
  const value = (depth: number): void => {
    ws();
    const c = text[i];
    if (c === '"') return void str();
    if (c === '{' || c === '[') {
      const object = c === '{';
      const keys = new Set<string>();
      i++;
      ws();
      if (text[i] === (object ? '}' : ']')) return void i++;
      for (;;) {
        ws();
        if (object) {
          const key = JSON.parse(str()) as string;
          if (keys.has(key)) duplicate ??= key;
          keys.add(key);
          ws();
          i++; // ':'
          ws();
          const start = i;
          value(depth + 1);
          if (depth === 0) members.set(key, text.slice(start, i));
        } else value(depth + 1);
        ws();
        if (text[i++] !== ',') return;
      }
    }
    const m = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;
    m.lastIndex = i;
    i += m.exec(text)![0].length;
  };
  try {
    value(0);
  } catch {
    return fail('body_invalid', 'the body is too deeply nested to read');
  }
  return duplicate !== undefined ? fail('duplicate_key', `the body repeats the key ${JSON.stringify(duplicate)}: which one counts depends on the parser, so it is refused`) : members;
}

/** The result bytes of a 200 body as returned (see `resultBytesOfBody`), or why there are none. */
function resultOfBody(bodyText: string): { readonly ok: true; readonly body: Record<string, unknown>; readonly bytes: Uint8Array } | VerifyFailure {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    return fail('body_invalid', 'the body is not JSON');
  }
  if (!isObject(body)) return fail('body_invalid', 'the body is not a JSON object');
  const members = topLevelMembers(bodyText);
  if (!(members instanceof Map)) return members;
  const raw = members.get('result');
  if (raw === undefined) return fail('result_mismatch', 'the body has no result');
  return { ok: true, body, bytes: new TextEncoder().encode(raw) };
}

/**
 * The result bytes of a 200 body as returned (its text): the raw text of the top-level `result`
 * member exactly as it stands in the body (the node writes `JSON.stringify(result)` there);
 * undefined when the body has no such member, is not JSON, or repeats a key anywhere.
 */
export function resultBytesOfBody(bodyText: string): Uint8Array | undefined {
  const r = resultOfBody(bodyText);
  return r.ok ? r.bytes : undefined;
}

/** Verifies a paid call's 200 body (its text, exactly as returned): its receipts, and that they cover its result bytes. */
export function verifyPaidBody(bodyText: string, didDocument: unknown, expect?: ReceiptExpectations): VerifiedReceipt | VerifyFailure {
  const r = resultOfBody(bodyText);
  if (!r.ok) return r;
  if (r.body.paid !== true) return fail('body_invalid', 'not the body of a paid call ({paid: true, result, receipt})');
  return verifyReceipt(r.body.receipt, didDocument, { resultBytes: r.bytes, ...(expect ? { expect } : {}) });
}

/**
 * Verifies a paid MCP tool result (`structuredContent` = `{paid, result, receipt}`, `content[0]`
 * the text an agent reads): the receipts, that they cover `JSON.stringify(structuredContent.result)`
 * (the bytes the node hashed), and that `content[0].text` is that result (the JSON text, or the
 * string itself when the result is a string).
 */
export function verifyMcpResult(toolResult: unknown, didDocument: unknown, expect?: ReceiptExpectations): VerifiedReceipt | VerifyFailure {
  const t = isObject(toolResult) ? toolResult : {};
  const sc = t.structuredContent;
  if (!isObject(sc) || sc.paid !== true || !('result' in sc)) return fail('body_invalid', 'not a paid tool result (structuredContent {paid: true, result, receipt})');
  const first = Array.isArray(t.content) ? (t.content[0] as Record<string, unknown> | undefined) : undefined;
  const shown = typeof sc.result === 'string' ? sc.result : JSON.stringify(sc.result);
  if (!isObject(first) || first.type !== 'text' || first.text !== shown) return fail('result_mismatch', 'content[0].text is not the result the receipt covers');
  return verifyReceipt(sc.receipt, didDocument, { resultBytes: resultBytesOf(sc.result), ...(expect ? { expect } : {}) });
}
