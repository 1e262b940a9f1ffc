import { describe, expect, test } from '@jest/globals';
import { createKeyPairFromSeed } from '../../consensus/keys.js';
import { DEV_PAYEE_SEED, DEV_SEED, DEVNET_ACTORS, DEVNET_ADDRESSES, getDevKeyPair, getDevnetActor, getDevPayeeKeyPair } from '../../consensus/devnet.js';
import { sha256, toHex } from '../../consensus/hash.js';

const actorSeed = (name: string) => sha256(new TextEncoder().encode(`native-node devnet actor ${name} v1`));

describe('the devnet’s well-known keys', () => {
  test('every well-known address is the one its public seed derives, and every actor has one', () => {
    const derived: Record<string, string> = { dev: toHex(createKeyPairFromSeed(DEV_SEED).address), payee: toHex(createKeyPairFromSeed(DEV_PAYEE_SEED).address) };
    for (const a of DEVNET_ACTORS) derived[a.name] = toHex(createKeyPairFromSeed(actorSeed(a.name)).address);
    expect(DEVNET_ADDRESSES).toEqual(derived);
  });

  test('a well-known key pair gives its address without deriving, and its keys equal a direct derivation', () => {
    for (const [kp, seed] of [
      [getDevKeyPair(), DEV_SEED],
      [getDevPayeeKeyPair(), DEV_PAYEE_SEED],
      [getDevnetActor('whale'), actorSeed('whale')],
    ] as const) {
      const direct = createKeyPairFromSeed(seed);
      expect(toHex(kp.address)).toBe(toHex(direct.address));
      expect(kp.publicKey.mldsa).toEqual(direct.publicKey.mldsa);
      expect(kp.publicKey.ed25519).toEqual(direct.publicKey.ed25519);
      expect(kp.mldsaSecret).toEqual(direct.mldsaSecret);
      expect(kp.ed25519Secret).toEqual(direct.ed25519Secret);
      // Spread copies (as callers do) carry the derived keys, not getters of an empty object.
      expect({ ...kp }.publicKey.mldsa).toEqual(direct.publicKey.mldsa);
    }
  });
});
