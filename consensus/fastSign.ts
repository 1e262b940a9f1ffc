/**
 * Fast hybrid signing for what the node signs per paid call (receipts): ML-DSA-87 through liboqs
 * (WASM, about 10× @noble's pure JS here) with the key @noble derived from the seed (FIPS 204's
 * secret-key encoding, which both read), and Ed25519 through node:crypto (OpenSSL: the same
 * deterministic RFC 8032 signature as @noble's). Transactions keep `signHybrid` (keys.ts), whose
 * ML-DSA signatures are deterministic; these are hedged, and verify the same way.
 */
import { createPrivateKey, sign as cryptoSign, type KeyObject } from 'node:crypto';
import { createMLDSA87 } from '@oqs/liboqs-js/sig';
import type { HybridKeyPair, HybridSignature } from './keys.js';

/** PKCS#8 DER of an Ed25519 private key, before its 32-byte seed. */
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** Signs `msg` with both keys of `kp`. */
export type HybridSigner = (kp: HybridKeyPair, msg: Uint8Array) => HybridSignature;

/** liboqs checks `constructor.name === 'Uint8Array'`, so Buffers and other views are copied first. */
const plain = (b: Uint8Array): Uint8Array => (b.constructor.name === 'Uint8Array' ? b : new Uint8Array(b));

/** Loads the liboqs WASM module once and returns a synchronous signer (each Ed25519 key imported once). */
export async function createFastSigner(): Promise<HybridSigner> {
  const oqs = await createMLDSA87();
  const edKeys = new WeakMap<HybridKeyPair, KeyObject>();
  const edKey = (kp: HybridKeyPair): KeyObject => {
    let k = edKeys.get(kp);
    if (!k) edKeys.set(kp, (k = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, kp.ed25519Secret]), format: 'der', type: 'pkcs8' })));
    return k;
  };
  return (kp, msg) => ({ mldsa: oqs.sign(plain(msg), plain(kp.mldsaSecret)), ed25519: new Uint8Array(cryptoSign(null, msg, edKey(kp))) });
}
