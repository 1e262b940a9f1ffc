/**
 * Hybrid wallet keys: one 32-byte seed → an ML-DSA-87 key pair and an Ed25519 key pair.
 *
 * HKDF-SHA256 derives each algorithm's seed with its own info string, so the two keys are
 * independent. Signing uses @noble (the reference implementation); verification has a
 * reference path here and a fast path in `fastVerify.ts`, which must agree bit for bit.
 */
import { ml_dsa87 } from '@noble/post-quantum/ml-dsa.js';
import { ed25519 } from '@noble/curves/ed25519.js';
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { randomBytes } from 'node:crypto';
import { concatBytes, sha256 } from './hash.js';

/** ML-DSA-87 public key size in bytes. */
export const MLDSA_PUBLIC_KEY_SIZE = 2592;
/** ML-DSA-87 signature size in bytes. */
export const MLDSA_SIGNATURE_SIZE = 4627;
/** Ed25519 public key size in bytes. */
export const ED25519_PUBLIC_KEY_SIZE = 32;
/** Ed25519 signature size in bytes. */
export const ED25519_SIGNATURE_SIZE = 64;
/** Address payload size: the first 20 bytes of `sha256(mldsaPub ‖ ed25519Pub)`. */
export const ADDRESS_SIZE = 20;

const INFO_MLDSA = new TextEncoder().encode('native-node/v1/ml-dsa-87');
const INFO_ED25519 = new TextEncoder().encode('native-node/v1/ed25519');
const SALT = new TextEncoder().encode('native-node/v1/wallet-seed');

/** The public half of a hybrid key: what an account publishes in its first transaction. */
export interface HybridPublicKey {
  readonly mldsa: Uint8Array;
  readonly ed25519: Uint8Array;
}

/** A hybrid key pair derived from a seed. */
export interface HybridKeyPair {
  readonly seed: Uint8Array;
  readonly publicKey: HybridPublicKey;
  readonly mldsaSecret: Uint8Array;
  readonly ed25519Secret: Uint8Array;
  /** 20-byte account id. */
  readonly address: Uint8Array;
}

/** The two signatures every transaction carries, over the same sighash. */
export interface HybridSignature {
  readonly mldsa: Uint8Array;
  readonly ed25519: Uint8Array;
}

/** A fresh random 32-byte wallet seed. */
export function randomSeed(): Uint8Array {
  return new Uint8Array(randomBytes(32));
}

/** Derives the hybrid key pair of a 32-byte seed (deterministic). */
export function createKeyPairFromSeed(seed: Uint8Array): HybridKeyPair {
  if (seed.length !== 32) throw new RangeError('wallet seed must be 32 bytes');
  const mldsaSeed = hkdf(nobleSha256, seed, SALT, INFO_MLDSA, 32);
  const edSecret = hkdf(nobleSha256, seed, SALT, INFO_ED25519, 32);
  const { publicKey, secretKey } = ml_dsa87.keygen(mldsaSeed);
  const edPub = ed25519.getPublicKey(edSecret);
  const pub = { mldsa: publicKey, ed25519: edPub };
  return { seed: seed.slice(), publicKey: pub, mldsaSecret: secretKey, ed25519Secret: edSecret, address: addressOfPublicKey(pub) };
}

/** The 20-byte account id of a hybrid public key. */
export function addressOfPublicKey(pub: HybridPublicKey): Uint8Array {
  return sha256(concatBytes(pub.mldsa, pub.ed25519)).slice(0, ADDRESS_SIZE);
}

/** Signs a 32-byte sighash with both keys. ML-DSA uses its deterministic variant, so equal inputs give equal bytes. */
export function signHybrid(kp: HybridKeyPair, msg: Uint8Array): HybridSignature {
  return {
    mldsa: ml_dsa87.sign(msg, kp.mldsaSecret, { extraEntropy: false }),
    ed25519: ed25519.sign(msg, kp.ed25519Secret),
  };
}

/** Reference verification (pure JS @noble): true only if both signatures verify. */
export function verifyHybridReference(pub: HybridPublicKey, msg: Uint8Array, sig: HybridSignature): boolean {
  if (pub.mldsa.length !== MLDSA_PUBLIC_KEY_SIZE || pub.ed25519.length !== ED25519_PUBLIC_KEY_SIZE) return false;
  if (sig.mldsa.length !== MLDSA_SIGNATURE_SIZE || sig.ed25519.length !== ED25519_SIGNATURE_SIZE) return false;
  try {
    // zip215: false is RFC 8032's strict rule, the one OpenSSL (the fast path) enforces.
    return ed25519.verify(sig.ed25519, msg, pub.ed25519, { zip215: false }) && ml_dsa87.verify(sig.mldsa, msg, pub.mldsa);
  } catch {
    return false;
  }
}
