/**
 * Hand-made USDC-rail payments for tests: EIP-3009 authorizations signed with a viem local
 * account, encoded as x402 v1 (`X-PAYMENT`) or v2 (`PAYMENT-SIGNATURE`) headers, with knobs to
 * make each one wrong in exactly one way. viem, the reference EVM library, comes from reference/
 * (installed on first use): the product checks signatures with its own code (x402/usdc/evm.ts), the
 * tests with the reference's. Suites skip when `referenceViem.ok` is false.
 */
import { randomBytes } from 'node:crypto';
import { BASE_USDC } from '../../x402/core/quote.js';
import { loadReferenceViem, type ReferenceViem, type ViemAccount } from './reference.js';

type Hex = `0x${string}`;

/** viem from reference/, or why it could not be loaded. */
export const referenceViem = await loadReferenceViem();
if (!referenceViem.ok) console.warn(`SKIPPED: USDC payment tests need reference/ installed (npm ci --prefix reference): ${referenceViem.reason}`);

/** viem; throws when reference/ is not installed (suites check `referenceViem.ok` first). */
export function requireViem(): ReferenceViem {
  if (!referenceViem.ok) throw new Error(referenceViem.reason);
  return referenceViem.viem;
}

/** Deterministic test accounts (never funded anywhere). */
export const PAYER_KEY: Hex = `0x${'11'.repeat(32)}`;
export const OTHER_KEY: Hex = `0x${'22'.repeat(32)}`;
export const payerAccount = (): ViemAccount => requireViem().privateKeyToAccount(PAYER_KEY);
export const otherAccount = (): ViemAccount => requireViem().privateKeyToAccount(OTHER_KEY);
/** A payTo of the node under test (EIP-55). */
export const NODE_PAY_TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';

/**
 * EIP-712 types of EIP-3009 `TransferWithAuthorization`, written out here for the test signer
 * and the test facilitator, apart from the product's copy (x402/usdc/verify.ts) on purpose: a
 * mistake there must not be repeated by the tests that check it.
 */
export const EIP3009_TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

/** What to sign (defaults: a valid payment of `value` to `payTo` for 60 s). */
export interface PaymentSpec {
  readonly payTo: string;
  readonly value: string;
  readonly account?: ViemAccount;
  /** Account whose address goes into `from` (default: the signer): a mismatch is a bad signature. */
  readonly claimedFrom?: string;
  readonly validAfter?: number;
  readonly validBefore?: number;
  readonly nonce?: Hex;
  readonly chainId?: number;
  readonly version?: 1 | 2;
  readonly network?: string;
  readonly scheme?: string;
  /** Override of v2 `accepted.amount`. */
  readonly acceptedAmount?: string;
}

/** A signed payment object (v1 or v2) ready to be base64-encoded. */
export async function signedPayment(spec: PaymentSpec): Promise<Record<string, unknown>> {
  const account = spec.account ?? payerAccount();
  const now = Math.floor(Date.now() / 1000);
  const authorization = {
    from: spec.claimedFrom ?? account.address,
    to: spec.payTo,
    value: spec.value,
    validAfter: String(spec.validAfter ?? now - 600),
    validBefore: String(spec.validBefore ?? now + 60),
    nonce: spec.nonce ?? (`0x${randomBytes(32).toString('hex')}` as Hex),
  };
  const signature = await account.signTypedData({
    domain: { name: BASE_USDC.name, version: BASE_USDC.version, chainId: spec.chainId ?? BASE_USDC.chainId, verifyingContract: BASE_USDC.asset as Hex },
    types: EIP3009_TYPES,
    primaryType: 'TransferWithAuthorization',
    message: {
      from: authorization.from as Hex,
      to: authorization.to as Hex,
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore: BigInt(authorization.validBefore),
      nonce: authorization.nonce as Hex,
    },
  });
  const payload = { signature, authorization };
  if ((spec.version ?? 1) === 1) return { x402Version: 1, scheme: spec.scheme ?? 'exact', network: spec.network ?? 'base', payload };
  return {
    x402Version: 2,
    accepted: { scheme: spec.scheme ?? 'exact', network: spec.network ?? 'eip155:8453', amount: spec.acceptedAmount ?? spec.value, asset: BASE_USDC.asset, payTo: spec.payTo, maxTimeoutSeconds: 60, extra: { name: BASE_USDC.name, version: BASE_USDC.version } },
    payload,
  };
}

/** base64 JSON, as x402 headers carry it. */
export function encodeHeader(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64');
}

/** A signed payment encoded for its header. */
export async function paymentHeader(spec: PaymentSpec): Promise<string> {
  return encodeHeader(await signedPayment(spec));
}

/** Decodes a base64 JSON header (X-PAYMENT-RESPONSE, PAYMENT-REQUIRED…). */
export function decodeHeader<T = Record<string, unknown>>(value: string | null | undefined): T {
  if (!value) throw new Error('header missing');
  return JSON.parse(Buffer.from(value, 'base64').toString('utf8')) as T;
}

/** The same signature with `s` replaced by `n − s` (and `v` flipped): valid for ecrecover, refused by USDC. */
export function malleate(signature: string): string {
  const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
  const r = signature.slice(2, 66);
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  const v = parseInt(signature.slice(130, 132), 16);
  const flipped = v === 27 ? 28 : v === 28 ? 27 : v ^ 1;
  return `0x${r}${(n - s).toString(16).padStart(64, '0')}${flipped.toString(16).padStart(2, '0')}`;
}
