/** Deterministic test wallets (keygen is slow-ish, so they are derived once per process). */
import { createKeyPairFromSeed, type HybridKeyPair } from '../../consensus/keys.js';
import { sha256 } from '../../consensus/hash.js';

const cache = new Map<string, HybridKeyPair>();
export function testKey(name: string): HybridKeyPair {
  let kp = cache.get(name);
  if (!kp) {
    kp = createKeyPairFromSeed(sha256(new TextEncoder().encode(`test-key:${name}`)));
    cache.set(name, kp);
  }
  return kp;
}
