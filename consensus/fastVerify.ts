/**
 * Fast hybrid verification: ML-DSA-87 through liboqs (WASM) and Ed25519 through node:crypto (OpenSSL).
 *
 * It must accept exactly what `verifyHybridReference` accepts. ML-DSA-87 verification is fully
 * specified by FIPS 204, so liboqs and @noble agree. Ed25519 is not: @noble with `zip215: false`
 * rejects non-canonical and small-order public keys and checks the cofactored equation
 * `[8][S]B = [8]R + [8][k]A`, while OpenSSL accepts those keys and checks the cofactorless
 * `[S]B = R + [k]A`. So the fast path
 *   1. rejects public keys @noble rejects before decoding (y ≥ p, x = 0 with the sign bit, the
 *      eight small-order points) — the only cases where OpenSSL says yes and @noble says no;
 *   2. trusts an OpenSSL "valid" (cofactorless ⇒ cofactored);
 *   3. asks @noble when OpenSSL says "invalid" but the ML-DSA signature is valid: a torsion
 *      component in R or A makes OpenSSL reject what @noble accepts. Honest signers never get
 *      there; an attacker pays a valid ML-DSA signature for each slow check.
 */
import { createMLDSA87 } from '@oqs/liboqs-js/sig';
import { ed25519 } from '@noble/curves/ed25519.js';
import { createPublicKey, verify as cryptoVerify, type KeyObject } from 'node:crypto';
import {
  ED25519_PUBLIC_KEY_SIZE,
  ED25519_SIGNATURE_SIZE,
  MLDSA_PUBLIC_KEY_SIZE,
  MLDSA_SIGNATURE_SIZE,
  verifyHybridReference,
  type HybridPublicKey,
  type HybridSignature,
} from './keys.js';

/** A hybrid signature checker: true only if both the ML-DSA-87 and the Ed25519 signature verify over `msg`. */
export interface HybridVerifier {
  verify(pub: HybridPublicKey, msg: Uint8Array, sig: HybridSignature): boolean;
}

/** The reference verifier (pure JS @noble), the rule every other verifier must match. */
export const referenceVerifier: HybridVerifier = { verify: verifyHybridReference };

/**
 * Encodings (hex) of Ed25519 public keys that @noble's strict mode rejects but OpenSSL decodes:
 * the eight points of small order, plus the two x = 0 points written with the sign bit set.
 */
const REJECTED_ED25519_KEYS = new Set([
  '0100000000000000000000000000000000000000000000000000000000000000',
  '0100000000000000000000000000000000000000000000000000000000000080',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff',
  '0000000000000000000000000000000000000000000000000000000000000000',
  '0000000000000000000000000000000000000000000000000000000000000080',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85',
]);

function view(b: Uint8Array): Buffer {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

/** RFC 8032 strict decoding rules OpenSSL skips: canonical y (< 2^255 − 19) and not of small order. */
function isStrictEd25519PublicKey(pub: Uint8Array): boolean {
  // y ≥ p = 2^255 − 19 ⇔ the low 255 bits are 0x7fff…ffed or more (19 encodings).
  if ((pub[31] & 0x7f) === 0x7f && pub[0] >= 0xed) {
    let allFF = true;
    for (let i = 1; i < 31; i++) {
      if (pub[i] !== 0xff) {
        allFF = false;
        break;
      }
    }
    if (allFF) return false;
  }
  return !REJECTED_ED25519_KEYS.has(view(pub).toString('hex'));
}

/** Imported Ed25519 keys by encoding (base64url): a sender signs many transactions. Bounded; starts over when full. */
const ed25519Keys = new Map<string, KeyObject>();
const MAX_CACHED_KEYS = 20_000;

function verifyEd25519OpenSsl(pub: Uint8Array, msg: Uint8Array, sig: Uint8Array): boolean {
  try {
    const x = view(pub).toString('base64url');
    let key = ed25519Keys.get(x);
    if (!key) {
      // A JWK import is about 10x cheaper than parsing an SPKI DER key (7 µs against 90 µs here).
      key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
      if (ed25519Keys.size >= MAX_CACHED_KEYS) ed25519Keys.clear();
      ed25519Keys.set(x, key);
    }
    return cryptoVerify(null, msg, key, sig);
  } catch {
    return false;
  }
}

function verifyEd25519Reference(pub: Uint8Array, msg: Uint8Array, sig: Uint8Array): boolean {
  try {
    return ed25519.verify(sig, msg, pub, { zip215: false });
  } catch {
    return false;
  }
}

/** liboqs checks `constructor.name === 'Uint8Array'`, so Buffers and other views are copied first. */
function plain(b: Uint8Array): Uint8Array {
  return b.constructor.name === 'Uint8Array' ? b : new Uint8Array(b);
}

/** Loads the liboqs WASM module once and returns a synchronous verifier equivalent to the reference. */
export async function createFastVerifier(): Promise<HybridVerifier> {
  const oqs = await createMLDSA87();
  const verifyMldsa = (pub: Uint8Array, msg: Uint8Array, sig: Uint8Array): boolean => {
    try {
      return oqs.verify(plain(msg), plain(sig), plain(pub));
    } catch {
      return false;
    }
  };
  return {
    verify(pub: HybridPublicKey, msg: Uint8Array, sig: HybridSignature): boolean {
      try {
        if (pub.mldsa.length !== MLDSA_PUBLIC_KEY_SIZE || pub.ed25519.length !== ED25519_PUBLIC_KEY_SIZE) return false;
        if (sig.mldsa.length !== MLDSA_SIGNATURE_SIZE || sig.ed25519.length !== ED25519_SIGNATURE_SIZE) return false;
        if (!isStrictEd25519PublicKey(pub.ed25519)) return false;
        // Ed25519 first: it is the cheap check and rejects most forgeries.
        const edValid = verifyEd25519OpenSsl(pub.ed25519, msg, sig.ed25519);
        if (!verifyMldsa(pub.mldsa, msg, sig.mldsa)) return false;
        return edValid || verifyEd25519Reference(pub.ed25519, msg, sig.ed25519);
      } catch {
        return false;
      }
    },
  };
}
