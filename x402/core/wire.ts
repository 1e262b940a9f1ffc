/**
 * The x402 wire schema of the paid-call API, shared by the server (`x402/`) and the agent SDK
 * (`sdk/`): the 402 quote and its payment options (the native option's `extra` above all), the
 * settlement bodies, the request hash of the USDC rail and the request commitment that binds a
 * native payment to one request, one seller and one secret of the payer. Plain types and pure
 * functions; amounts are strings of base or atomic units, as on the wire.
 *
 * Imports only `consensus/` (hashing): the SDK must be able to use it without the server.
 */
import { fromHex, isHex, sha256, toHex } from '../../consensus/hash.js';

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
}
