/**
 * The x402 wire schema of the paid-call API, shared by the server (`x402/`) and the agent SDK
 * (`sdk/`): the 402 quote and its payment options (the native option's `extra` above all), the
 * settlement bodies, and the request hash that binds a payment to one request. Plain types and
 * one pure function; amounts are strings of base or atomic units, as on the wire.
 *
 * Imports only `consensus/` (hashing): the SDK must be able to use it without the server.
 */
import { sha256, toHex } from '../consensus/hash.js';

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
  /** Hex sha256 of the quoted request; absent when there was no request. */
  readonly requestHash?: string;
}

/** `extra` of the USDC option: the EIP-712 domain name and version of the token. */
export interface UsdcRequirementExtra {
  readonly name: string;
  readonly version: string;
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

/** 502 after a native payment: the service failed and the payment is refunded on-chain. */
export interface RefundedBody {
  paid: true;
  refunded: true;
  refundTxId: string | null;
  error: PaymentError;
}

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
