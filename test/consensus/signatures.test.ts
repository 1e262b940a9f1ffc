/**
 * Every hybrid verifier — the @noble reference, the fast path (liboqs + OpenSSL) and the worker
 * pool — must give the same answer for every input, valid or not: a disagreement is a chain split.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { ml_dsa87 } from '@noble/post-quantum/ml-dsa.js';
import { ed25519 } from '@noble/curves/ed25519.js';
import { sha512 } from '@noble/hashes/sha2.js';
import { createMLDSA87 } from '@oqs/liboqs-js/sig';
import {
  createKeyPairFromSeed,
  signHybrid,
  verifyHybridReference,
  type HybridKeyPair,
  type HybridPublicKey,
  type HybridSignature,
} from '../../consensus/keys.js';
import { createFastVerifier, referenceVerifier, type HybridVerifier } from '../../consensus/fastVerify.js';
import { createVerifyPool, type VerifyPool } from '../../chain/verifyPool.js';
import { sha256, toHex } from '../../consensus/hash.js';

interface Case {
  readonly name: string;
  readonly pub: HybridPublicKey;
  readonly msg: Uint8Array;
  readonly sig: HybridSignature;
}

const seedOf = (n: number): Uint8Array => sha256(new TextEncoder().encode(`signatures-test-seed-${n}`));
const msgOf = (n: number): Uint8Array => sha256(new TextEncoder().encode(`signatures-test-msg-${n}`));

function flip(bytes: Uint8Array, bit: number): Uint8Array {
  const out = bytes.slice();
  out[bit >> 3] ^= 1 << (bit & 7);
  return out;
}

/** Bit positions to flip in a field of `len` bytes: first and last bytes, both ends of each, and a few inside. */
function bitPositions(len: number): number[] {
  const last = len * 8 - 1;
  return [...new Set([0, 7, 8, Math.floor(last / 3), Math.floor(last / 2), last - 8, last - 7, last])];
}

const L = ed25519.Point.Fn.ORDER;
const le32 = (n: bigint): Uint8Array => {
  const b = new Uint8Array(32);
  for (let i = 0; i < 32; i++, n >>= 8n) b[i] = Number(n & 0xffn);
  return b;
};
const fromLe = (b: Uint8Array): bigint => b.reduceRight((acc, x) => (acc << 8n) | BigInt(x), 0n);
/** Ed25519 signing written out, so tests can put torsion where honest signers never do. */
function edSignRaw(secretScalar: bigint, pubBytes: Uint8Array, R: Uint8Array, r: bigint, msg: Uint8Array): Uint8Array {
  const k = fromLe(sha512(new Uint8Array([...R, ...pubBytes, ...msg]))) % L;
  return new Uint8Array([...R, ...le32((r + k * secretScalar) % L)]);
}
/** A point of order 8. */
function torsionPoint8() {
  for (let y = 2n; ; y++) {
    try {
      const p = ed25519.Point.fromBytes(le32(y));
      const t = p.multiplyUnsafe(L - 1n).add(p); // [L]p: only the torsion component survives
      if (!t.double().double().is0()) return t;
    } catch {
      // not a curve point
    }
  }
}

describe('hybrid signatures: reference, fast path and pool agree', () => {
  let fast: HybridVerifier;
  let pool: VerifyPool;
  const keys: HybridKeyPair[] = [];

  beforeAll(async () => {
    fast = await createFastVerifier();
    pool = await createVerifyPool({ threads: 2, cacheSize: 0 });
    for (let i = 0; i < 3; i++) keys.push(createKeyPairFromSeed(seedOf(i)));
  });
  afterAll(async () => {
    await pool.stop();
  });

  /** Runs every implementation over the cases and checks they all give `expected`. */
  async function expectAll(cases: Case[], expected: boolean | boolean[]): Promise<void> {
    const want = Array.isArray(expected) ? expected : cases.map(() => expected);
    const byPool = await pool.verifyBatch(cases);
    cases.forEach((c, i) => {
      const got = {
        name: c.name,
        reference: referenceVerifier.verify(c.pub, c.msg, c.sig),
        fast: fast.verify(c.pub, c.msg, c.sig),
        pool: byPool[i],
      };
      expect(got).toEqual({ name: c.name, reference: want[i], fast: want[i], pool: want[i] });
    });
  }

  test('valid signatures verify everywhere, for several keys and messages', async () => {
    const cases: Case[] = [];
    keys.forEach((kp, k) => {
      for (let m = 0; m < 3; m++) {
        const msg = msgOf(m);
        cases.push({ name: `key ${k} msg ${m}`, pub: kp.publicKey, msg, sig: signHybrid(kp, msg) });
      }
    });
    // Messages of other lengths than a sighash verify too.
    const odd = new Uint8Array([1, 2, 3]);
    cases.push({ name: 'short message', pub: keys[0].publicKey, msg: odd, sig: signHybrid(keys[0], odd) });
    cases.push({ name: 'empty message', pub: keys[0].publicKey, msg: new Uint8Array(0), sig: signHybrid(keys[0], new Uint8Array(0)) });
    await expectAll(cases, true);
  });

  test('the fast path accepts Buffers and views at an offset', () => {
    const kp = keys[1];
    const msg = msgOf(7);
    const sig = signHybrid(kp, msg);
    const inBig = (b: Uint8Array): Uint8Array => {
      const big = new Uint8Array(b.length + 13);
      big.set(b, 5);
      return big.subarray(5, 5 + b.length);
    };
    expect(fast.verify({ mldsa: Buffer.from(kp.publicKey.mldsa), ed25519: Buffer.from(kp.publicKey.ed25519) }, Buffer.from(msg), {
      mldsa: Buffer.from(sig.mldsa),
      ed25519: Buffer.from(sig.ed25519),
    })).toBe(true);
    expect(fast.verify({ mldsa: inBig(kp.publicKey.mldsa), ed25519: inBig(kp.publicKey.ed25519) }, inBig(msg), {
      mldsa: inBig(sig.mldsa),
      ed25519: inBig(sig.ed25519),
    })).toBe(true);
  });

  test('a flipped bit anywhere (message, either key, either signature) is rejected by every implementation', async () => {
    const kp = keys[0];
    const msg = msgOf(0);
    const sig = signHybrid(kp, msg);
    const pub = kp.publicKey;
    const cases: Case[] = [];
    for (const b of bitPositions(msg.length)) cases.push({ name: `msg bit ${b}`, pub, msg: flip(msg, b), sig });
    for (const b of bitPositions(pub.mldsa.length)) cases.push({ name: `mldsa pub bit ${b}`, pub: { ...pub, mldsa: flip(pub.mldsa, b) }, msg, sig });
    for (const b of bitPositions(pub.ed25519.length)) cases.push({ name: `ed25519 pub bit ${b}`, pub: { ...pub, ed25519: flip(pub.ed25519, b) }, msg, sig });
    // The ML-DSA signature ends with the hint section (positions, then per-row counts): flip there too.
    const mldsaBits = [...bitPositions(sig.mldsa.length), (sig.mldsa.length - 20) * 8, (sig.mldsa.length - 84) * 8 + 3];
    for (const b of mldsaBits) cases.push({ name: `mldsa sig bit ${b}`, pub, msg, sig: { ...sig, mldsa: flip(sig.mldsa, b) } });
    // Ed25519: R (bytes 0–31) and S (32–63); bit 511 makes S ≥ L.
    for (const b of [...bitPositions(64), 255, 256]) cases.push({ name: `ed25519 sig bit ${b}`, pub, msg, sig: { ...sig, ed25519: flip(sig.ed25519, b) } });
    // Signatures swapped between keys or messages.
    const other = signHybrid(keys[1], msg);
    cases.push({ name: 'ed25519 sig of another key', pub, msg, sig: { ...sig, ed25519: other.ed25519 } });
    cases.push({ name: 'mldsa sig of another key', pub, msg, sig: { ...sig, mldsa: other.mldsa } });
    cases.push({ name: 'signature of another message', pub, msg, sig: signHybrid(kp, msgOf(1)) });
    await expectAll(cases, false);
  });

  test('wrong lengths are rejected by every implementation', async () => {
    const kp = keys[2];
    const msg = msgOf(2);
    const sig = signHybrid(kp, msg);
    const pub = kp.publicKey;
    const grow = (b: Uint8Array): Uint8Array => new Uint8Array([...b, 0]);
    const cases: Case[] = [
      { name: 'mldsa pub short', pub: { ...pub, mldsa: pub.mldsa.subarray(0, -1) }, msg, sig },
      { name: 'mldsa pub long', pub: { ...pub, mldsa: grow(pub.mldsa) }, msg, sig },
      { name: 'ed25519 pub short', pub: { ...pub, ed25519: pub.ed25519.subarray(0, 31) }, msg, sig },
      { name: 'ed25519 pub long', pub: { ...pub, ed25519: grow(pub.ed25519) }, msg, sig },
      { name: 'mldsa sig short', pub, msg, sig: { ...sig, mldsa: sig.mldsa.subarray(0, -1) } },
      { name: 'mldsa sig long', pub, msg, sig: { ...sig, mldsa: grow(sig.mldsa) } },
      { name: 'ed25519 sig short', pub, msg, sig: { ...sig, ed25519: sig.ed25519.subarray(0, 63) } },
      { name: 'ed25519 sig long', pub, msg, sig: { ...sig, ed25519: grow(sig.ed25519) } },
      { name: 'empty keys', pub: { mldsa: new Uint8Array(0), ed25519: new Uint8Array(0) }, msg, sig },
      { name: 'empty signatures', pub, msg, sig: { mldsa: new Uint8Array(0), ed25519: new Uint8Array(0) } },
    ];
    await expectAll(cases, false);
  });

  describe('Ed25519 edge cases where OpenSSL and RFC 8032 strict (@noble) differ', () => {
    // Each case pairs a crafted Ed25519 part with a valid ML-DSA-87 signature, so only Ed25519 decides.
    const T8 = torsionPoint8();
    const mldsaKp = () => keys[0];
    const withMldsa = (name: string, edPub: Uint8Array, msg: Uint8Array, edSig: Uint8Array): Case => {
      const kp = mldsaKp();
      return { name, pub: { mldsa: kp.publicKey.mldsa, ed25519: edPub }, msg, sig: { mldsa: signHybrid(kp, msg).mldsa, ed25519: edSig } };
    };

    test('small-order and non-canonical public keys with "valid" signatures are rejected (OpenSSL alone accepts them)', async () => {
      const msg = msgOf(20);
      const S = 4242n;
      const R = ed25519.Point.BASE.multiply(S).toBytes();
      const forged = new Uint8Array([...R, ...le32(S)]); // [S]B = R + [k]·identity for any message
      const cases: Case[] = [];
      // All eight points of small order, plus sign-bit variants of the two with x = 0.
      let p = T8;
      for (let i = 0; i < 8; i++, p = p.add(T8)) cases.push(withMldsa(`small order ${p.toHex()}`, p.toBytes(), msg, forged));
      const identitySigned = le32(1n);
      identitySigned[31] |= 0x80;
      cases.push(withMldsa('identity with sign bit', identitySigned, msg, forged));
      // y = p + 1 ≡ 1: the identity written non-canonically.
      cases.push(withMldsa('non-canonical identity (y = p + 1)', le32(ed25519.Point.Fp.ORDER + 1n), msg, forged));
      await expectAll(cases, false);
    });

    test('torsion in R or in the key: accepted by @noble (cofactored equation), and so by the fast path and the pool', async () => {
      const cases: Case[] = [];
      const expected: boolean[] = [];
      const secret = new Uint8Array(32).fill(5);
      const { scalar: a, point: A, pointBytes } = ed25519.utils.getExtendedPublicKey(secret);
      for (let j = 0; j < 4; j++) {
        const msg = msgOf(30 + j);
        const r = 1000n + BigInt(j);
        const R = ed25519.Point.BASE.multiply(r).add(T8).toBytes();
        cases.push(withMldsa(`torsion R ${j}`, pointBytes, msg, edSignRaw(a, pointBytes, R, r, msg)));
        expected.push(ed25519.verify(cases[cases.length - 1].sig.ed25519, msg, pointBytes, { zip215: false }));
      }
      const mixed = A.add(T8).toBytes();
      for (let j = 0; j < 8; j++) {
        const msg = msgOf(40 + j);
        const r = 2000n + BigInt(j);
        const R = ed25519.Point.BASE.multiply(r).toBytes();
        cases.push(withMldsa(`mixed-order key ${j}`, mixed, msg, edSignRaw(a, mixed, R, r, msg)));
        expected.push(ed25519.verify(cases[cases.length - 1].sig.ed25519, msg, mixed, { zip215: false }));
      }
      expect(expected.every((e) => e)).toBe(true); // @noble's rule: these are valid
      await expectAll(cases, expected);
    });

    test('a torsion R under a wrong ML-DSA signature is still rejected everywhere', async () => {
      const secret = new Uint8Array(32).fill(6);
      const { scalar: a, pointBytes } = ed25519.utils.getExtendedPublicKey(secret);
      const msg = msgOf(50);
      const R = ed25519.Point.BASE.multiply(77n).add(T8).toBytes();
      const c = withMldsa('torsion R, bad mldsa', pointBytes, msg, edSignRaw(a, pointBytes, R, 77n, msg));
      await expectAll([{ ...c, sig: { ...c.sig, mldsa: flip(c.sig.mldsa, 100) } }], false);
    });
  });

  test('ML-DSA-87 signatures from liboqs verify under @noble and vice versa', async () => {
    const oqs = await createMLDSA87();
    try {
      for (let i = 0; i < 3; i++) {
        const kp = keys[i];
        const msg = msgOf(60 + i);
        const byOqs = oqs.sign(msg, kp.mldsaSecret);
        expect(ml_dsa87.verify(byOqs, msg, kp.publicKey.mldsa)).toBe(true);
        const byNoble = ml_dsa87.sign(msg, kp.mldsaSecret);
        expect(oqs.verify(msg, byNoble, kp.publicKey.mldsa)).toBe(true);
        // And as the ML-DSA half of a hybrid signature, everywhere.
        const hybrid = { mldsa: byOqs, ed25519: signHybrid(kp, msg).ed25519 };
        expect(verifyHybridReference(kp.publicKey, msg, hybrid)).toBe(true);
        expect(fast.verify(kp.publicKey, msg, hybrid)).toBe(true);
        expect(await pool.verifyBatch([{ pub: kp.publicKey, msg, sig: hybrid }])).toEqual([true]);
        // A liboqs signature does not verify for another message.
        expect(ml_dsa87.verify(byOqs, msgOf(99), kp.publicKey.mldsa)).toBe(false);
        expect(oqs.verify(msgOf(99), byNoble, kp.publicKey.mldsa)).toBe(false);
      }
    } finally {
      oqs.destroy();
    }
  });
});

describe('createKeyPairFromSeed', () => {
  test('the same seed gives the same keys, address and signatures', () => {
    const a = createKeyPairFromSeed(seedOf(1));
    const b = createKeyPairFromSeed(seedOf(1));
    expect(toHex(a.publicKey.mldsa)).toBe(toHex(b.publicKey.mldsa));
    expect(toHex(a.publicKey.ed25519)).toBe(toHex(b.publicKey.ed25519));
    expect(toHex(a.mldsaSecret)).toBe(toHex(b.mldsaSecret));
    expect(toHex(a.ed25519Secret)).toBe(toHex(b.ed25519Secret));
    expect(toHex(a.address)).toBe(toHex(b.address));
    const msg = msgOf(1);
    const sa = signHybrid(a, msg);
    const sb = signHybrid(b, msg);
    expect(toHex(sa.mldsa)).toBe(toHex(sb.mldsa));
    expect(toHex(sa.ed25519)).toBe(toHex(sb.ed25519));
  });

  test('different seeds give different keys and addresses', () => {
    const kps = [0, 1, 2, 3].map((i) => createKeyPairFromSeed(seedOf(i)));
    expect(new Set(kps.map((k) => toHex(k.address))).size).toBe(4);
    expect(new Set(kps.map((k) => toHex(k.publicKey.mldsa))).size).toBe(4);
    expect(new Set(kps.map((k) => toHex(k.publicKey.ed25519))).size).toBe(4);
    // The two keys of one seed are derived independently.
    expect(toHex(kps[0].ed25519Secret)).not.toBe(toHex(kps[0].mldsaSecret.subarray(0, 32)));
  });

  test('sizes are the FIPS 204 / RFC 8032 ones and a seed must be 32 bytes', () => {
    const kp = createKeyPairFromSeed(seedOf(0));
    expect(kp.publicKey.mldsa.length).toBe(2592);
    expect(kp.publicKey.ed25519.length).toBe(32);
    expect(kp.address.length).toBe(20);
    const sig = signHybrid(kp, msgOf(0));
    expect(sig.mldsa.length).toBe(4627);
    expect(sig.ed25519.length).toBe(64);
    expect(() => createKeyPairFromSeed(new Uint8Array(31))).toThrow(RangeError);
  });
});
