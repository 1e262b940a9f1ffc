/**
 * Wire formats of the USDC rail (x402 `exact` on Base, EIP-3009): the payment payload of the
 * `X-PAYMENT` (x402 v1) and `PAYMENT-SIGNATURE` (x402 v2) headers, decoded and shape-checked
 * with ajv; the v2 forms of our requirements (`PAYMENT-REQUIRED` header); the settlement header
 * (`X-PAYMENT-RESPONSE` / `PAYMENT-RESPONSE`).
 *
 * Every refusal is a value with a snake_case reason (the x402 reference's names where one
 * exists), never a throw: a malformed header is the payer's mistake, answered 402.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { BASE_USDC } from '../core/quote.js';
import type { PaymentRequirements, PaymentResponse } from '../core/wire.js';

/** Network name of Base in x402 v1. */
export const BASE_NETWORK_V1 = 'base';
/** Network name of Base in x402 v2 (CAIP-2). */
export const BASE_NETWORK_V2 = `eip155:${BASE_USDC.chainId}`;

/** Largest accepted payment header, characters (a v2 payload with extensions stays far below). */
export const MAX_PAYMENT_HEADER_CHARS = 16 * 1024;

export { UsdcErrorCode } from '../core/errors.js';
import { UsdcErrorCode } from '../core/errors.js';

/** EIP-3009 `TransferWithAuthorization` fields as x402 carries them: all strings. */
export interface ExactEvmAuthorization {
  readonly from: string;
  readonly to: string;
  /** USDC atomic units, decimal. */
  readonly value: string;
  /** Unix seconds, decimal. */
  readonly validAfter: string;
  readonly validBefore: string;
  /** 32 bytes, 0x hex. */
  readonly nonce: string;
}

/** The `payload` of an `exact` EVM payment. */
export interface ExactEvmPayload {
  /** 0x hex of the EIP-712 signature. */
  readonly signature: string;
  readonly authorization: ExactEvmAuthorization;
}

/** x402 v1 payment payload (`X-PAYMENT`). */
export interface PaymentPayloadV1 {
  readonly x402Version: 1;
  readonly scheme: string;
  readonly network: string;
  readonly payload: ExactEvmPayload;
}

/** x402 v2 payment requirements (one `accepts` entry of a v2 PaymentRequired). */
export interface PaymentRequirementsV2 {
  readonly scheme: string;
  /** CAIP-2, `eip155:8453` for Base. */
  readonly network: string;
  /** Atomic units, decimal. */
  readonly amount: string;
  readonly asset: string;
  readonly payTo: string;
  readonly maxTimeoutSeconds: number;
  readonly extra: Record<string, unknown>;
}

/** x402 v2 payment payload (`PAYMENT-SIGNATURE`). */
export interface PaymentPayloadV2 {
  readonly x402Version: 2;
  readonly accepted: PaymentRequirementsV2;
  readonly payload: ExactEvmPayload;
  readonly resource?: { readonly url?: string; readonly description?: string; readonly mimeType?: string };
  readonly extensions?: Record<string, unknown>;
}

/** A decoded payment of either version. */
export type UsdcPaymentPayload = PaymentPayloadV1 | PaymentPayloadV2;

/** x402 v2 PaymentRequired (the `PAYMENT-REQUIRED` header). */
export interface PaymentRequiredV2 {
  readonly x402Version: 2;
  readonly error?: string;
  readonly resource: { readonly url: string; readonly description: string; readonly mimeType: string };
  readonly accepts: readonly PaymentRequirementsV2[];
  /** Extensions the server supports (`payment-identifier`). */
  readonly extensions?: Record<string, unknown>;
}

/** Name of x402's `payment-identifier` extension (a client-chosen id in the payment payload's `extensions`, never on chain). */
export const PAYMENT_IDENTIFIER = 'payment-identifier';
/** What a payment identifier may be (the extension's rules: 16-128 characters of [A-Za-z0-9_-]). */
const PAYMENT_ID_RE = /^[A-Za-z0-9_-]{16,128}$/;

/** The 402's declaration of the extension: optional, with its JSON schema (as @x402/extensions declares it). */
export function paymentIdentifierDeclaration(): Record<string, unknown> {
  return {
    info: { required: false },
    schema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { required: { type: 'boolean' }, id: { type: 'string', minLength: 16, maxLength: 128, pattern: '^[a-zA-Z0-9_-]+$' } },
      required: ['required'],
    },
  };
}

/**
 * The payment identifier a payment carries (`extensions["payment-identifier"].info.id`), when
 * well-formed; undefined otherwise. It is what proves, on a retry, that the caller is the one
 * who paid: the signed authorization itself becomes public once settled on Base.
 */
export function paymentIdentifierOf(payment: object): string | undefined {
  const ext = (payment as { extensions?: Record<string, unknown> }).extensions?.[PAYMENT_IDENTIFIER] as { info?: { id?: unknown } } | undefined;
  const id = ext?.info?.id;
  return typeof id === 'string' && PAYMENT_ID_RE.test(id) ? id : undefined;
}

/** The settlement header's JSON (`X-PAYMENT-RESPONSE`, `PAYMENT-RESPONSE`). */
export type PaymentResponseHeader = PaymentResponse;

/** A refusal: snake_case reason and a sentence for humans. */
export interface UsdcRefusal {
  readonly code: string;
  readonly message: string;
}

/** Result of decoding a payment header. */
export type DecodedPaymentHeader = { readonly ok: true; readonly payment: UsdcPaymentPayload } | ({ readonly ok: false } & UsdcRefusal);

const ADDRESS = '^0x[0-9a-fA-F]{40}$';
const UINT = '^[0-9]{1,78}$';
const SECONDS = '^[0-9]{1,20}$';

const exactEvmPayloadSchema = {
  type: 'object',
  required: ['signature', 'authorization'],
  properties: {
    signature: { type: 'string', pattern: '^0x[0-9a-fA-F]+$', maxLength: 8194 },
    authorization: {
      type: 'object',
      required: ['from', 'to', 'value', 'validAfter', 'validBefore', 'nonce'],
      properties: {
        from: { type: 'string', pattern: ADDRESS },
        to: { type: 'string', pattern: ADDRESS },
        value: { type: 'string', pattern: UINT },
        validAfter: { type: 'string', pattern: SECONDS },
        validBefore: { type: 'string', pattern: SECONDS },
        nonce: { type: 'string', pattern: '^0x[0-9a-fA-F]{64}$' },
      },
    },
  },
} as const;

const v1Schema = {
  type: 'object',
  required: ['x402Version', 'scheme', 'network', 'payload'],
  properties: {
    x402Version: { const: 1 },
    scheme: { type: 'string', maxLength: 64 },
    network: { type: 'string', maxLength: 64 },
    payload: exactEvmPayloadSchema,
  },
} as const;

const v2Schema = {
  type: 'object',
  required: ['x402Version', 'accepted', 'payload'],
  properties: {
    x402Version: { const: 2 },
    accepted: {
      type: 'object',
      required: ['scheme', 'network', 'amount', 'asset', 'payTo', 'maxTimeoutSeconds'],
      properties: {
        scheme: { type: 'string', maxLength: 64 },
        network: { type: 'string', maxLength: 64 },
        amount: { type: 'string', pattern: UINT },
        asset: { type: 'string', maxLength: 128 },
        payTo: { type: 'string', maxLength: 128 },
        maxTimeoutSeconds: { type: 'integer' },
        extra: { type: 'object' },
      },
    },
    payload: exactEvmPayloadSchema,
    resource: { type: 'object' },
    extensions: { type: 'object' },
  },
} as const;

let validators: { v1: ValidateFunction; v2: ValidateFunction } | undefined;
function getValidators(): { v1: ValidateFunction; v2: ValidateFunction } {
  if (!validators) {
    const ajv = new Ajv({ allErrors: false, strict: true });
    validators = { v1: ajv.compile(v1Schema), v2: ajv.compile(v2Schema) };
  }
  return validators;
}

function refuse(code: string, message: string): { ok: false; code: string; message: string } {
  return { ok: false, code, message };
}

/**
 * Decodes a payment header (base64 of JSON) into a v1 or v2 `exact` payload of the right shape
 * (`checkPaymentPayload`). Accepts standard and URL-safe base64, padded or not.
 */
export function decodePaymentHeader(value: string): DecodedPaymentHeader {
  const text = value.trim();
  if (text.length === 0 || text.length > MAX_PAYMENT_HEADER_CHARS) {
    return refuse(UsdcErrorCode.INVALID_PAYMENT_BASE64, `the payment header must be base64 of at most ${MAX_PAYMENT_HEADER_CHARS} characters`);
  }
  if (!/^(?:[A-Za-z0-9+/]+|[A-Za-z0-9_-]+)={0,2}$/.test(text) || text.replace(/=+$/, '').length % 4 === 1 || (text.includes('=') && text.length % 4 !== 0)) {
    return refuse(UsdcErrorCode.INVALID_PAYMENT_BASE64, 'the payment header is not valid base64');
  }
  let json: string;
  try {
    json = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(text, text.includes('-') || text.includes('_') ? 'base64url' : 'base64'));
  } catch {
    return refuse(UsdcErrorCode.INVALID_PAYMENT_BASE64, 'the payment header does not decode to UTF-8 text');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return refuse(UsdcErrorCode.INVALID_PAYMENT_JSON, 'the payment header does not decode to JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return refuse(UsdcErrorCode.INVALID_PAYLOAD, 'the payment header must decode to a JSON object');
  }
  return checkPaymentPayload(parsed);
}

/**
 * Checks a decoded payment (the JSON of a payment header, or what MCP's `_meta["x402/payment"]`
 * carries) against the v1 / v2 `exact` schemas. Scheme and network are checked here too: only
 * `exact` on Base is payable on this rail.
 */
export function checkPaymentPayload(parsed: unknown): DecodedPaymentHeader {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return refuse(UsdcErrorCode.INVALID_PAYLOAD, 'the payment must be a JSON object');
  }
  const version = (parsed as { x402Version?: unknown }).x402Version;
  if (version !== 1 && version !== 2) return refuse(UsdcErrorCode.INVALID_X402_VERSION, 'x402Version must be 1 (X-PAYMENT) or 2 (PAYMENT-SIGNATURE)');
  const validate = version === 1 ? getValidators().v1 : getValidators().v2;
  if (!validate(parsed)) {
    const err = validate.errors![0];
    return refuse(UsdcErrorCode.INVALID_PAYLOAD, `payment payload${err.instancePath.replaceAll('/', '.')} ${err.message ?? 'is malformed'}`);
  }
  const payment = parsed as UsdcPaymentPayload;
  const scheme = payment.x402Version === 1 ? payment.scheme : payment.accepted.scheme;
  const network = payment.x402Version === 1 ? payment.network : payment.accepted.network;
  if (scheme !== 'exact') return refuse(UsdcErrorCode.UNSUPPORTED_SCHEME, `scheme ${scheme} is not accepted here; the USDC rail is exact on ${BASE_NETWORK_V1}`);
  const expected = payment.x402Version === 1 ? BASE_NETWORK_V1 : BASE_NETWORK_V2;
  if (network !== expected) return refuse(UsdcErrorCode.INVALID_NETWORK, `network ${network} is not accepted here; x402 v${payment.x402Version} pays on ${expected}`);
  return { ok: true, payment };
}

/** The network string of a payment (`base` for v1, `eip155:8453` for v2). */
export function networkOf(payment: UsdcPaymentPayload): string {
  return payment.x402Version === 1 ? payment.network : payment.accepted.network;
}

/** The v2 form of our v1 USDC requirements. */
export function toRequirementsV2(req: PaymentRequirements): PaymentRequirementsV2 {
  return { scheme: req.scheme, network: BASE_NETWORK_V2, amount: req.maxAmountRequired, asset: req.asset, payTo: req.payTo, maxTimeoutSeconds: req.maxTimeoutSeconds, extra: req.extra };
}

/** The v2 PaymentRequired of our USDC requirements, with the reason of a refusal when there is one. */
export function paymentRequiredV2(req: PaymentRequirements, error?: string): PaymentRequiredV2 {
  return {
    x402Version: 2,
    ...(error ? { error } : {}),
    resource: { url: req.resource, description: req.description, mimeType: req.mimeType },
    accepts: [toRequirementsV2(req)],
  };
}

/**
 * Whether a v2 payload's `accepted` names our requirements (scheme, network, asset, payTo and
 * amount; addresses compared without case). The authorization itself is checked separately.
 */
export function acceptedMatches(accepted: PaymentRequirementsV2, req: PaymentRequirements): boolean {
  const v2 = toRequirementsV2(req);
  return accepted.scheme === v2.scheme && accepted.network === v2.network && accepted.amount === v2.amount && accepted.asset.toLowerCase() === v2.asset.toLowerCase() && accepted.payTo.toLowerCase() === v2.payTo.toLowerCase();
}

/** base64 of the JSON of `value` (x402 header encoding). */
export function encodeJsonHeader(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64');
}

/** Response headers carrying the settlement (v1 and v2 names). */
export function paymentResponseHeaders(value: PaymentResponseHeader): Record<string, string> {
  const encoded = encodeJsonHeader(value);
  return { 'X-PAYMENT-RESPONSE': encoded, 'PAYMENT-RESPONSE': encoded, 'Access-Control-Expose-Headers': 'X-PAYMENT-RESPONSE, PAYMENT-RESPONSE' };
}

/** Whether `reason` is a snake_case reason we can pass on to the payer as a code. */
export function isSnakeCaseReason(reason: unknown): reason is string {
  return typeof reason === 'string' && /^[a-z][a-z0-9_]{0,99}$/.test(reason);
}
