/** The node's own EIP-55 and EIP-712 (x402/evm.ts) against viem, the reference implementation (from reference/). */
import { describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { checksumAddress, recoverTransferAuthorizationSigner, transferAuthorizationDigest } from '../../x402/evm.js';
import { BASE_USDC } from '../../x402/quote.js';
import { EIP3009_TYPES, referenceViem, requireViem } from '../helpers/facilitatorPayments.js';

const describeViem = referenceViem.ok ? describe : describe.skip;
const hex = (n: number): `0x${string}` => `0x${randomBytes(n).toString('hex')}`;

describeViem('x402/evm.ts agrees with viem', () => {
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
