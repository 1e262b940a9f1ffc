/**
 * The x402 wire schema of the paid-call API, shared by the server (`x402/`) and the agent SDK
 * (`sdk/`): the 402 quote and its payment options (the native option's `extra` above all), the
 * settlement bodies, the request hash of the USDC rail and the request commitment that binds a
 * native payment to one request, one seller and one secret of the payer. Plain types and pure
 * functions; amounts are strings of base or atomic units, as on the wire.
 *
 * Imports only `consensus/` (hashing) and receiptBatch.ts (likewise): the SDK must be able to use it without the server.
 */
import { fromHex, isHex, sha256, taggedHash, toHex } from '../../consensus/hash.js';
import { RECEIPT_BATCH_SCHEME, type ReceiptBatchProof } from './receiptBatch.js';

/** Where signed transactions are broadcast (the native option's `extra.broadcast`). */
export const BROADCAST_PATH = '/api/v1/tx';

/**
 * Hex sha256 of a request string (UTF-8): the `requestHash` a native payment carries and the
 * settlement ledger keys a call by. A missing request hashes as the empty string; the hash covers
 * the raw string (input validation may trim, the hash never does).
 */
export function requestHashOf(request: string | undefined): string {
  return toHex(sha256(new TextEncoder().encode(request ?? '')));
}

/** Name (and domain tag) of the native rail's request commitment: the native option's `extra.commitment`. */
export const COMMITMENT_SCHEME = 'native-x402/request-commitment/v1';
/** Name (and domain tag) of the scheme: the USDC option's `extra.commitment`. */
export const USDC_COMMITMENT_SCHEME = 'native-x402/usdc-commitment/v1';
/** Bytes of a seller id (the settlement ledger's id, `extra.sellerId`, 16 hex characters). */
export const SELLER_ID_BYTES = 8;
/** Bytes of the payer's secret salt (`payment.salt`, 64 hex characters). */
export const SALT_BYTES = 32;

/** The parts of a request commitment. */
export interface CommitmentInput {
  /** Hex id of the seller (ledger) that quoted the call (`extra.sellerId`). */
  readonly sellerId: string;
  readonly serviceId: string;
  /** The request string; absent = the empty string. */
  readonly request: string | undefined;
  /** Hex of the payer's 32-byte secret, sent only in the settle. */
  readonly salt: string;
}

const u32be = (n: number) => new Uint8Array([n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]);

/**
 * The `requestHash` an `agent_invoke` carries on the native rail (32 bytes, hex):
 *
 *   sellerId(8) ‖ first 24 bytes of sha256( utf8(COMMITMENT_SCHEME) ‖ sellerId(8)
 *                   ‖ u8 len ‖ utf8(serviceId) ‖ u32be len ‖ utf8(request) ‖ salt(32) )
 *
 * The seller id in clear lets a node see which ledger a payment to a shared payee belongs to;
 * the 192-bit hash binds service, request and salt (the lengths make the encoding unambiguous).
 * Without the salt, which travels only in the settle's HTTP body, nobody who reads the chain or
 * the mempool can claim the payment or read its result, however guessable the request.
 */
export function requestCommitment(c: CommitmentInput): string {
  if (!isHex(c.sellerId, SELLER_ID_BYTES)) throw new TypeError(`sellerId must be ${SELLER_ID_BYTES * 2} hex characters`);
  if (!isHex(c.salt, SALT_BYTES)) throw new TypeError(`salt must be ${SALT_BYTES * 2} hex characters`);
  const enc = new TextEncoder();
  const tag = enc.encode(COMMITMENT_SCHEME);
  const seller = fromHex(c.sellerId.toLowerCase());
  const service = enc.encode(c.serviceId);
  if (service.length > 255) throw new TypeError('serviceId is longer than 255 bytes');
  const request = enc.encode(c.request ?? '');
  const salt = fromHex(c.salt.toLowerCase());
  const msg = new Uint8Array(tag.length + seller.length + 1 + service.length + 4 + request.length + salt.length);
  let o = 0;
  for (const part of [tag, seller, new Uint8Array([service.length]), service, u32be(request.length), request, salt]) {
    msg.set(part, o);
    o += part.length;
  }
  const out = new Uint8Array(32);
  out.set(seller, 0);
  out.set(sha256(msg).subarray(0, 32 - SELLER_ID_BYTES), SELLER_ID_BYTES);
  return toHex(out);
}

/** The seller id a commitment names in clear (its first 8 bytes, hex). */
export function sellerOfCommitment(commitment: Uint8Array | string): string {
  return typeof commitment === 'string' ? commitment.slice(0, SELLER_ID_BYTES * 2).toLowerCase() : toHex(commitment.subarray(0, SELLER_ID_BYTES));
}

/** `extra` of the native payment option. */
export interface NativeRequirementExtra {
  readonly txType: 'agent_invoke';
  readonly chainId: number;
  readonly serviceId: string;
  /** Price in NATIVE (the spec's number field). */
  readonly priceAman: number;
  /** Exact price as a NATIVE decimal string. */
  readonly priceNative: string;
  readonly decimals: number;
  /** Path of the broadcast endpoint, `/api/v1/tx`. */
  readonly broadcast: string;
  /** The seller (settlement ledger) that honours payments made for this quote: 16 hex characters. */
  readonly sellerId: string;
  /** How the invoke's requestHash is made: COMMITMENT_SCHEME (see `requestCommitment`). */
  readonly commitment: typeof COMMITMENT_SCHEME;
  /** Confirmations a payment needs before the settle runs the call (1 = mined). */
  readonly confirmations: number;
}

/** `extra` of the USDC option: the EIP-712 domain name and version of the token, and the seller a bound authorization commits to. */
export interface UsdcRequirementExtra {
  readonly name: string;
  readonly version: string;
  /** The seller (settlement ledger) that honours payments made for this quote: 16 hex characters. */
  readonly sellerId: string;
  /** How a bound authorization's EIP-3009 nonce is made (x402/usdc/commitment.ts); optional for the payer. */
  readonly commitment: string;
}

/** One x402 payment option (x402 v1 PaymentRequirements, plus our native scheme). */
export interface PaymentRequirements {
  scheme: string;
  network: string;
  /** Atomic units of `asset` (base units for NATIVE), decimal string. */
  maxAmountRequired: string;
  /** Absolute URL of the service endpoint. */
  resource: string;
  description: string;
  mimeType: string;
  payTo: string;
  maxTimeoutSeconds: number;
  asset: string;
  extra: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
}

/** The `native-x402` entry of a 402's `accepts`. */
export interface NativePaymentRequirement extends PaymentRequirements {
  readonly scheme: 'native-x402';
  /** Exact price, base units (1 NATIVE = 10^8), decimal string. */
  readonly maxAmountRequired: string;
  /** bech32m address of the provider. */
  readonly payTo: string;
  readonly asset: 'NATIVE';
  readonly extra: NativeRequirementExtra & Record<string, unknown>;
}

/** The 402 body (the spec's Quote). */
export interface QuoteBody {
  x402: true;
  x402Version: 1;
  error: 'Payment Required';
  accepts: PaymentRequirements[];
  /** x402 extensions of the 402: `offer-receipt` (signed offers, one per entry of `accepts`, x402/core/offers.ts). */
  extensions?: Record<string, unknown>;
}

/** A coded error of the API: a stable snake_case `code`, a sentence, and context fields. */
export interface PaymentError {
  readonly code: string;
  readonly message: string;
  readonly [field: string]: unknown;
}

/** 200: the Settlement result. */
export interface PaidBody {
  paid: true;
  result: unknown;
  receipt: Record<string, unknown>;
}

/** 202 (native rail): the payment is not mined with enough confirmations yet; settle again. */
export interface PendingBody {
  paid: false;
  status: 'payment_pending';
  txId: string;
  /** Seconds to wait before settling again. */
  retryAfter: number;
  error: PaymentError;
}

/**
 * 502 after a native payment: the service failed and the payment is refunded on-chain
 * (`refunded: true` with the refund's tx id), or the refund is owed but could not be sent yet
 * (`refunded: false`, `refund: "pending"`, `reason`: the payee cannot cover it now; the node sends
 * it as soon as it can).
 */
export type RefundedBody =
  | { paid: true; refunded: true; refundTxId: string; error: PaymentError }
  | { paid: true; refunded: false; refund: 'pending'; reason: string; refundTxId: null; error: PaymentError };

/** The settlement answer of x402 (`X-PAYMENT-RESPONSE`, MCP `x402/payment-response`). */
export interface PaymentResponse {
  readonly success: true;
  /** The transaction that moved the money (native tx id, or the 0x hash on Base). */
  readonly transaction: string;
  /** The network as the payment named it (`native-devnet`, `base`, `eip155:8453`…). */
  readonly network: string;
  /** The payer's address. */
  readonly payer: string;
  /** x402 extensions of the settlement: `offer-receipt` (the signed receipt, x402/core/receipts.ts). */
  readonly extensions?: Record<string, unknown>;
}

/**
 * Signed offers and receipts (the x402 Offer and Receipt extension, JWS form, plus this chain's
 * hybrid receipt). What both sides need to agree on bytes: the extension's key, the domain tags of
 * the payee-signed messages, the DID of a node and the canonical JSON they sign.
 */
/** Key of the x402 Offer and Receipt extension in `extensions` (402s and settlement responses). */
export const OFFER_RECEIPT = 'offer-receipt';
/** Format (and domain tag) of the hybrid receipt: ML-DSA-87 + Ed25519 of the payee over its payload. */
export const HYBRID_RECEIPT_SCHEME = 'native-x402/hybrid-receipt/v1';
/** Domain tag of the payee's binding of the offer key (published in did.json, `x402Payee`). */
export const OFFER_KEY_BINDING_SCHEME = 'native-x402/offer-key-binding/v1';

/** JSON with object keys sorted at every level (RFC 8785 JCS for the strings, integers and objects used in signed payloads). */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/**
 * The `did:web` of a node's base URL (W3C did:web): the host with its port's colon as `%3A`, then
 * the path's segments joined by `:`. `https://node.example` → `did:web:node.example` (document at
 * `/.well-known/did.json`); `https://x.example/node` → `did:web:x.example:node` (at `/node/did.json`).
 */
export function didWebOf(baseUrl: string): string {
  const u = new URL(baseUrl);
  const segments = u.pathname.split('/').filter((s) => s !== '').map(encodeURIComponent);
  return ['did:web', encodeURIComponent(u.host.toLowerCase()), ...segments].join(':');
}

/** What the hybrid receipt signs: one paid call, who was paid, and what was delivered. */
export interface HybridReceiptPayload {
  /** Payload version (1). */
  readonly version: 1;
  /** The seller (settlement ledger) that settled the call (16 hex characters). */
  readonly sellerId: string;
  /** bech32m address of the payee key that signs (the native option's `payTo`). */
  readonly payee: string;
  readonly serviceId: string;
  /** The paid resource URL (the quote's `resource`). */
  readonly resourceUrl: string;
  readonly rail: 'native' | 'usdc';
  /** CAIP-2 network of the payment: `native:<chainId>` or `eip155:8453`. */
  readonly network: string;
  /** The payment's transaction (native tx id, or the 0x hash on Base). */
  readonly txId: string;
  /** The payer's address. */
  readonly payer: string;
  /** Amount paid in atomic units of `asset` (NATIVE base units or USDC atomic units), decimal string. */
  readonly amount: string;
  /** `NATIVE` or the token contract. */
  readonly asset: string;
  /** Unix seconds when the receipt was issued. */
  readonly issuedAt: number;
  /** Hex sha256 of the result bytes as returned: the UTF-8 of `JSON.stringify(result)`, which the 200 body carries verbatim. */
  readonly resultSha256: string;
}

/**
 * A hybrid receipt: the payload and the payee's two signatures (base64url). In the v1 format they
 * are over `hybridReceiptMessage(payload)`; in the batch format (receiptBatch.ts) over the batch's
 * signed message, `batch` leading from `hybridReceiptMessage(payload)` to its root.
 */
export interface HybridReceipt {
  readonly format: typeof HYBRID_RECEIPT_SCHEME | typeof RECEIPT_BATCH_SCHEME;
  readonly payload: HybridReceiptPayload;
  readonly signature: { readonly mldsa: string; readonly ed25519: string };
  /** Batch format only: the receipt's place in the batch the signatures cover. */
  readonly batch?: ReceiptBatchProof;
}

/** The 32 bytes the payee signs for a hybrid receipt: taggedHash(HYBRID_RECEIPT_SCHEME, canonical JSON of the payload). */
export function hybridReceiptMessage(payload: HybridReceiptPayload): Uint8Array {
  return taggedHash(HYBRID_RECEIPT_SCHEME, new TextEncoder().encode(canonicalJson(payload)));
}

/** What the payee's key binding states: this Ed25519 key (`kid`, JWK) signs offers and receipts for this payee at this DID. */
export interface OfferKeyBinding {
  readonly version: 1;
  readonly did: string;
  readonly kid: string;
  readonly publicKeyJwk: { readonly kty: 'OKP'; readonly crv: 'Ed25519'; readonly x: string };
  /** bech32m address of the payee (the hybrid key that signs this binding). */
  readonly payee: string;
  /** The seller (settlement ledger) id. */
  readonly sellerId: string;
  /** CAIP-2 network of the native rail (`native:<chainId>`). */
  readonly network: string;
  /** The USDC payee (checksummed EVM address) the binding also authorizes in offers, when the rail is on. */
  readonly usdcPayTo?: string;
}

/** The 32 bytes the payee signs for a key binding: taggedHash(OFFER_KEY_BINDING_SCHEME, canonical JSON of the binding). */
export function offerKeyBindingMessage(binding: OfferKeyBinding): Uint8Array {
  return taggedHash(OFFER_KEY_BINDING_SCHEME, new TextEncoder().encode(canonicalJson(binding)));
}

/** Hex sha256 of result bytes (the `resultSha256` of a hybrid receipt). */
export function resultSha256Of(bytes: Uint8Array): string {
  return toHex(sha256(bytes));
}

/** The result bytes a hybrid receipt covers: the UTF-8 of `JSON.stringify(result)` (a missing result is `null`). */
export function resultBytesOf(result: unknown): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(result === undefined ? null : result));
}
