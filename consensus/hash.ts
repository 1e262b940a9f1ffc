/** Hash primitives of the chain: SHA-256, SHA-256d, tagged hashes, hex helpers. */
import { createHash, hash as oneShotHash } from 'node:crypto';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';

/**
 * SHA-256 of `data` (node's native implementation). `crypto.hash` (Node ≥ 20.12) skips the Hash
 * object: 20–25 % faster for the 80-byte headers and few-kB transactions hashed here.
 */
export function sha256(data: Uint8Array): Uint8Array {
  return new Uint8Array(oneShotHash('sha256', data, 'buffer')); // a copy: its own ArrayBuffer, safe to transfer
}

/** SHA-256d: the chain's hash for headers, transactions and merkle nodes. */
export function sha256d(data: Uint8Array): Uint8Array {
  return new Uint8Array(oneShotHash('sha256', oneShotHash('sha256', data, 'buffer'), 'buffer'));
}

const tagCache = new Map<string, Uint8Array>();
/** BIP-340-style tagged hash `sha256(sha256(tag) ‖ sha256(tag) ‖ data)`, for domain separation. */
export function taggedHash(tag: string, data: Uint8Array): Uint8Array {
  let prefix = tagCache.get(tag);
  if (!prefix) {
    const t = nobleSha256(new TextEncoder().encode(tag));
    prefix = new Uint8Array(64);
    prefix.set(t, 0);
    prefix.set(t, 32);
    tagCache.set(tag, prefix);
  }
  return new Uint8Array(createHash('sha256').update(prefix).update(data).digest());
}

/** Lowercase hex of bytes (Node's native encoder: the API answers and the ledger write many). */
export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/**
 * Bytes of a hex string; throws on odd length or non-hex characters. Node's decoder stops at the
 * first pair that is not hex, so a short result is the refusal; the bytes are copied out of
 * Buffer's shared pool into an array of their own.
 */
export function fromHex(hex: string): Uint8Array {
  if (typeof hex !== 'string') throw new TypeError(`hex string expected, got ${typeof hex}`);
  const decoded = Buffer.from(hex, 'hex');
  if (decoded.length * 2 !== hex.length) throw new Error(hex.length % 2 ? `hex string of odd length ${hex.length}` : 'hex string with a non-hex character');
  return new Uint8Array(decoded);
}

/** Whether `s` is exactly `bytes` bytes of lowercase or uppercase hex. */
export function isHex(s: unknown, bytes?: number): s is string {
  return typeof s === 'string' && /^[0-9a-fA-F]*$/.test(s) && s.length % 2 === 0 && (bytes === undefined || s.length === bytes * 2);
}

/** Constant-length byte equality. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Concatenation of byte arrays. */
export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}
