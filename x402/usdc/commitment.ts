/**
 * The USDC rail's request commitment: an EIP-3009 nonce that binds one authorization to one
 * seller, one service, one request and one secret of the payer, the USDC twin of the native
 * rail's `requestCommitment` (x402/core/wire.ts). The nonce is the payer's to choose (EIP-3009 only
 * asks it to be unused), so a client that knows this scheme chooses
 *
 *   nonce = TAG(6) ‖ sellerId(8) ‖ first 18 bytes of sha256( utf8(USDC_COMMITMENT_SCHEME)
 *             ‖ sellerId(8) ‖ u8 len ‖ utf8(serviceId) ‖ u32be len ‖ utf8(request) ‖ salt(32) )
 *
 * with TAG = the first 6 bytes of sha256(utf8(USDC_COMMITMENT_SCHEME)), and sends the salt beside
 * the payment, in the payment payload's `extensions["request-commitment"].info.salt`, never on
 * chain. The tag makes a bound nonce recognisable by every node: a node whose seller id is not
 * the one named refuses it before anything runs (`wrong_seller`), so one authorization can never
 * buy two results from two sellers that share a USDC payee. The salt proves the payer on a retry:
 * the authorization is public calldata on Base once settled, the salt is not.
 *
 * A random nonce (what the official x402 clients send) starts with the tag with probability
 * 2^-48; such an authorization is unbound (see docs/usdc-rail.md for what protects it).
 *
 * Imports only `consensus/` (hashing): the SDK uses it without the server.
 */
import { fromHex, isHex, sha256, toHex } from '../../consensus/hash.js';
import { SALT_BYTES, SELLER_ID_BYTES } from '../core/wire.js';

import { USDC_COMMITMENT_SCHEME } from '../core/wire.js';

export { USDC_COMMITMENT_SCHEME } from '../core/wire.js';
/** The payment payload extension that carries the salt: `extensions["request-commitment"].info.salt`. */
export const USDC_COMMITMENT_EXTENSION = 'request-commitment';
/** Bytes of the tag that marks a bound nonce. */
export const USDC_COMMITMENT_TAG_BYTES = 6;
/** Bytes of the hash in a bound nonce. */
const HASH_BYTES = 32 - USDC_COMMITMENT_TAG_BYTES - SELLER_ID_BYTES;

const enc = new TextEncoder();
/** The tag a bound nonce starts with (hex, 12 characters). */
export const USDC_COMMITMENT_TAG = toHex(sha256(enc.encode(USDC_COMMITMENT_SCHEME)).subarray(0, USDC_COMMITMENT_TAG_BYTES));

/** The parts of a USDC commitment. */
export interface UsdcCommitmentInput {
  /** Hex id of the seller (ledger) that quoted the call: the USDC option's `extra.sellerId`. */
  readonly sellerId: string;
  readonly serviceId: string;
  /** The request string; absent = the empty string. */
  readonly request: string | undefined;
  /** Hex of the payer's 32-byte secret. */
  readonly salt: string;
}

const u32be = (n: number) => new Uint8Array([n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]);

/** The EIP-3009 nonce (0x hex, 32 bytes) that commits to `c` (see module comment). Throws TypeError on a malformed seller id or salt. */
export function usdcCommitmentNonce(c: UsdcCommitmentInput): string {
  if (!isHex(c.sellerId, SELLER_ID_BYTES)) throw new TypeError(`sellerId must be ${SELLER_ID_BYTES * 2} hex characters`);
  if (!isHex(c.salt, SALT_BYTES)) throw new TypeError(`salt must be ${SALT_BYTES * 2} hex characters`);
  const seller = fromHex(c.sellerId.toLowerCase());
  const service = enc.encode(c.serviceId);
  if (service.length > 255) throw new TypeError('serviceId is longer than 255 bytes');
  const request = enc.encode(c.request ?? '');
  const parts = [enc.encode(USDC_COMMITMENT_SCHEME), seller, new Uint8Array([service.length]), service, u32be(request.length), request, fromHex(c.salt.toLowerCase())];
  const msg = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    msg.set(p, o);
    o += p.length;
  }
  return `0x${USDC_COMMITMENT_TAG}${c.sellerId.toLowerCase()}${toHex(sha256(msg).subarray(0, HASH_BYTES))}`;
}

/** Whether an EIP-3009 nonce (0x hex) is a bound one (starts with the tag). */
export function isCommittedNonce(nonce: string): boolean {
  return nonce.length === 66 && nonce.slice(2, 2 + USDC_COMMITMENT_TAG_BYTES * 2).toLowerCase() === USDC_COMMITMENT_TAG;
}

/** The seller id a bound nonce names (16 hex characters), or undefined for an unbound nonce. */
export function sellerOfNonce(nonce: string): string | undefined {
  if (!isCommittedNonce(nonce)) return undefined;
  const at = 2 + USDC_COMMITMENT_TAG_BYTES * 2;
  return nonce.slice(at, at + SELLER_ID_BYTES * 2).toLowerCase();
}

/** The salt a payment payload carries in `extensions["request-commitment"].info.salt` (64 hex characters), or undefined. */
export function commitmentSaltOf(payment: object): string | undefined {
  const ext = (payment as { extensions?: Record<string, unknown> }).extensions?.[USDC_COMMITMENT_EXTENSION] as { info?: { salt?: unknown } } | undefined;
  const salt = ext?.info?.salt;
  return typeof salt === 'string' && isHex(salt, SALT_BYTES) ? salt.toLowerCase() : undefined;
}

/** The extension entry that carries `salt` (what a client adds to its payment payload's `extensions`). */
export function commitmentExtension(salt: string): Record<string, unknown> {
  return { [USDC_COMMITMENT_EXTENSION]: { info: { scheme: USDC_COMMITMENT_SCHEME, salt } } };
}

/** A payment payload without the salt (what the facilitator gets: the salt stays between payer and seller). */
export function withoutCommitmentSalt<T extends object>(payment: T): T {
  const ext = (payment as { extensions?: Record<string, unknown> }).extensions;
  if (!ext || !(USDC_COMMITMENT_EXTENSION in ext)) return payment;
  const { [USDC_COMMITMENT_EXTENSION]: _salt, ...rest } = ext;
  const out = { ...payment } as Record<string, unknown>;
  if (Object.keys(rest).length > 0) out.extensions = rest;
  else delete out.extensions;
  return out as T;
}
