/** The node's own EIP-55 and EIP-712 (x402/usdc/evm.ts) against viem, the reference implementation (from reference/). */
import { describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { checksumAddress, recoverAddress, recoverTransferAuthorizationSigner, transferAuthorizationDigest } from '../../x402/usdc/evm.js';
import { BASE_USDC } from '../../x402/core/quote.js';
import { EIP3009_TYPES, referenceViem, requireViem } from '../helpers/facilitatorPayments.js';

const describeViem = referenceViem.ok ? describe : describe.skip;
const hex = (n: number): `0x${string}` => `0x${randomBytes(n).toString('hex')}`;

describeViem('x402/usdc/evm.ts agrees with viem', () => {
  test('EIP-55 checksums of random addresses', () => {
    const viem = requireViem();
    for (let i = 0; i < 50; i++) {
      const a = hex(20);
      expect(checksumAddress(a)).toBe(viem.getAddress(a));
      expect(checksumAddress(a.toUpperCase().replace('0X', '0x'))).toBe(viem.getAddress(a));
    }
    expect(() => checksumAddress('0x1234')).toThrow(RangeError);
  });

  test('TransferWithAuthorization signed by viem accounts recovers to the signer; any changed field or domain does not', async () => {
    const viem = requireViem();
    for (let i = 0; i < 5; i++) {
      const account = viem.privateKeyToAccount(hex(32));
      const auth = { from: account.address, to: viem.getAddress(hex(20)), value: String(1 + i * 12345), validAfter: '0', validBefore: String(2 ** 40 + i), nonce: hex(32) };
      const domain = { name: BASE_USDC.name, version: BASE_USDC.version, chainId: BASE_USDC.chainId, verifyingContract: BASE_USDC.asset as `0x${string}` };
      const signature = await account.signTypedData({
        domain,
        types: EIP3009_TYPES,
        primaryType: 'TransferWithAuthorization',
        message: { ...auth, value: BigInt(auth.value), validAfter: BigInt(auth.validAfter), validBefore: BigInt(auth.validBefore) },
      });
      expect(recoverTransferAuthorizationSigner(domain, auth, signature)).toBe(account.address);
      expect(recoverTransferAuthorizationSigner(domain, { ...auth, value: `${auth.value}0` }, signature)).not.toBe(account.address);
      expect(recoverTransferAuthorizationSigner({ ...domain, chainId: 1 }, auth, signature)).not.toBe(account.address);
      expect(recoverTransferAuthorizationSigner({ ...domain, version: '1' }, auth, signature)).not.toBe(account.address);
      expect(transferAuthorizationDigest(domain, auth)).toHaveLength(32);
    }
  });

  test('malformed input throws instead of recovering something', () => {
    const domain = { name: 'USD Coin', version: '2', chainId: 8453, verifyingContract: BASE_USDC.asset };
    const auth = { from: hex(20), to: hex(20), value: '1', validAfter: '0', validBefore: '1', nonce: hex(32) };
    expect(() => recoverTransferAuthorizationSigner(domain, auth, hex(64))).toThrow(RangeError);
    expect(() => recoverTransferAuthorizationSigner(domain, auth, `${hex(64)}05`)).toThrow(RangeError);
    expect(() => transferAuthorizationDigest(domain, { ...auth, value: (1n << 256n).toString() })).toThrow(RangeError);
    expect(() => transferAuthorizationDigest(domain, { ...auth, nonce: '0x12' })).toThrow(RangeError);
  });
});

describe('x402/usdc/evm.ts public-key recovery (libsecp256k1 in WASM) agrees with @noble', () => {
  const rsv = (rs: Uint8Array, recovery: number) => `0x${Buffer.from(rs).toString('hex')}${(27 + recovery).toString(16)}`;
  const addressOf = (pub: Uint8Array) => checksumAddress(`0x${Buffer.from(keccak_256(pub.subarray(1)).subarray(12)).toString('hex')}`);
  const nobleRecover = (digest: Uint8Array, rs: Uint8Array, recovery: number): string | undefined => {
    try {
      return addressOf(secp256k1.Signature.fromBytes(rs, 'compact').addRecoveryBit(recovery).recoverPublicKey(digest).toBytes(false));
    } catch {
      return undefined;
    }
  };
  const ours = (digest: Uint8Array, sig: string): string | undefined => {
    try {
      return recoverAddress(digest, sig);
    } catch {
      return undefined;
    }
  };

  test('random keys and digests recover to the signer; the other recovery bit does not', () => {
    for (let i = 0; i < 200; i++) {
      const sk = secp256k1.utils.randomSecretKey();
      const digest = new Uint8Array(randomBytes(32));
      const sig = secp256k1.sign(digest, sk, { prehash: false, format: 'recovered' });
      const [recovery, rs] = [sig[0], sig.subarray(1)];
      const signer = addressOf(secp256k1.getPublicKey(sk, false));
      expect(recoverAddress(digest, rsv(rs, recovery))).toBe(signer);
      const flipped = ours(digest, rsv(rs, recovery ^ 1));
      expect(flipped).toBe(nobleRecover(digest, rs, recovery ^ 1));
      expect(flipped).not.toBe(signer);
      // The high-s twin (n − s, the other recovery bit) recovers the same key in both (x402/usdc/verify.ts refuses it before).
      const n = secp256k1.Point.CURVE().n;
      const highS = new Uint8Array(Buffer.concat([Buffer.from(rs.subarray(0, 32)), Buffer.from((n - BigInt(`0x${Buffer.from(rs.subarray(32)).toString('hex')}`)).toString(16).padStart(64, '0'), 'hex')]));
      expect(ours(digest, rsv(highS, recovery ^ 1))).toBe(signer);
      expect(nobleRecover(digest, highS, recovery ^ 1)).toBe(signer);
    }
  });

  test('r or s of 0 or at least the group order, and an r that is no point, recover nothing in either', () => {
    const digest = new Uint8Array(randomBytes(32));
    const n = secp256k1.Point.CURVE().n;
    const word = (x: bigint) => Buffer.from(x.toString(16).padStart(64, '0'), 'hex');
    let notX = 1n;
    for (;;) {
      try {
        secp256k1.Point.fromHex(`02${notX.toString(16).padStart(64, '0')}`);
        notX++;
      } catch {
        break;
      }
    }
    const cases: [bigint, bigint][] = [[0n, 1n], [1n, 0n], [n, 1n], [1n, n], [notX, 1n]];
    for (const [r, s] of cases) {
      const rs = new Uint8Array(Buffer.concat([word(r), word(s)]));
      for (const recovery of [0, 1]) {
        expect(nobleRecover(digest, rs, recovery)).toBeUndefined();
        expect(() => recoverAddress(digest, rsv(rs, recovery))).toThrow();
      }
    }
  });
});
