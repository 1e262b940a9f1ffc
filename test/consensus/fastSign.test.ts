/**
 * The fast hybrid signer (consensus/fastSign.ts: liboqs ML-DSA-87 with @noble's keys, OpenSSL
 * Ed25519) against the reference: every signature it makes verifies with @noble's verifier, its
 * Ed25519 half is byte for byte @noble's (RFC 8032 is deterministic), and a changed message fails.
 */
import { describe, expect, test } from '@jest/globals';
import { createFastSigner } from '../../consensus/fastSign.js';
import { createKeyPairFromSeed, signHybrid, verifyHybridReference } from '../../consensus/keys.js';

describe('the fast hybrid signer', () => {
  test('signs what the reference verifies, with the reference Ed25519 bytes', async () => {
    const sign = await createFastSigner();
    for (let k = 0; k < 3; k++) {
      const kp = createKeyPairFromSeed(new Uint8Array(32).fill(k + 1));
      for (const len of [0, 32, 1000]) {
        const msg = Buffer.alloc(len, 7 + k);
        const sig = sign(kp, msg);
        expect(verifyHybridReference(kp.publicKey, msg, sig)).toBe(true);
        expect(Buffer.from(sig.ed25519).equals(Buffer.from(signHybrid(kp, msg).ed25519))).toBe(true);
        const other = Buffer.alloc(len + 1, 7 + k);
        expect(verifyHybridReference(kp.publicKey, other, sig)).toBe(false);
      }
    }
  });
});
