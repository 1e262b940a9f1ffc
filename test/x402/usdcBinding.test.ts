/**
 * The USDC seller binding's pure parts: the bound nonce (its tag, the seller in clear, the hash of
 * service, request and salt), the salt extension and its removal before the facilitator, and
 * which /settle failures are final.
 */
import { describe, expect, test } from '@jest/globals';
import { commitmentExtension, commitmentSaltOf, isCommittedNonce, sellerOfNonce, USDC_COMMITMENT_TAG, usdcCommitmentNonce, withoutCommitmentSalt } from '../../x402/usdc/commitment.js';
import { isDefinitiveSettleFailure, usdcRequestHash } from '../../x402/usdc/settle.js';
import { requestHashOf } from '../../x402/core/wire.js';

const SELLER = '0123456789abcdef';
const SALT = 'ab'.repeat(32);

describe('the bound nonce', () => {
  test('tag ‖ seller ‖ hash: 32 bytes, the seller readable by every node, different for each service, request, salt and seller', () => {
    const nonce = usdcCommitmentNonce({ sellerId: SELLER, serviceId: 'native-echo', request: 'hi', salt: SALT });
    expect(nonce).toMatch(/^0x[0-9a-f]{64}$/);
    expect(nonce.slice(2, 14)).toBe(USDC_COMMITMENT_TAG);
    expect(isCommittedNonce(nonce)).toBe(true);
    expect(sellerOfNonce(nonce)).toBe(SELLER);
    const others = [
      { sellerId: 'fedcba9876543210', serviceId: 'native-echo', request: 'hi', salt: SALT },
      { sellerId: SELLER, serviceId: 'native-echo2', request: 'hi', salt: SALT },
      { sellerId: SELLER, serviceId: 'native-echo', request: 'hi!', salt: SALT },
      { sellerId: SELLER, serviceId: 'native-echo', request: 'hi', salt: 'cd'.repeat(32) },
    ].map(usdcCommitmentNonce);
    expect(new Set([nonce, ...others]).size).toBe(5);
    // Lengths make the encoding unambiguous: service and request cannot trade bytes.
    expect(usdcCommitmentNonce({ sellerId: SELLER, serviceId: 'ab', request: 'c', salt: SALT })).not.toBe(usdcCommitmentNonce({ sellerId: SELLER, serviceId: 'a', request: 'bc', salt: SALT }));
  });

  test('a random nonce is unbound; malformed parts are a TypeError', () => {
    expect(isCommittedNonce(`0x${'11'.repeat(32)}`)).toBe(false);
    expect(sellerOfNonce(`0x${'11'.repeat(32)}`)).toBeUndefined();
    expect(() => usdcCommitmentNonce({ sellerId: 'xyz', serviceId: 's', request: '', salt: SALT })).toThrow(TypeError);
    expect(() => usdcCommitmentNonce({ sellerId: SELLER, serviceId: 's', request: '', salt: 'ab' })).toThrow(TypeError);
  });

  test('the salt travels in extensions["request-commitment"] and is removed before the facilitator, other extensions kept', () => {
    const payment = { x402Version: 1, payload: {}, extensions: { ...commitmentExtension(SALT), 'payment-identifier': { info: { id: 'pay_0123456789abcdef' } } } };
    expect(commitmentSaltOf(payment)).toBe(SALT);
    expect(withoutCommitmentSalt(payment)).toEqual({ x402Version: 1, payload: {}, extensions: { 'payment-identifier': { info: { id: 'pay_0123456789abcdef' } } } });
    expect(withoutCommitmentSalt({ x402Version: 1, extensions: commitmentExtension(SALT) })).toEqual({ x402Version: 1 });
    expect(commitmentSaltOf({ extensions: { 'request-commitment': { info: { salt: 'nothex' } } } })).toBeUndefined();
  });

  test('an unbound payment\'s request hash is domain-separated, never the plain sha256 of the request', () => {
    const h = usdcRequestHash('usdc:8453:0xa:0xb:0x01', 'Europe/Berlin');
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(h).not.toBe(requestHashOf('Europe/Berlin'));
    expect(h).not.toBe(usdcRequestHash('usdc:8453:0xa:0xb:0x02', 'Europe/Berlin'));
  });
});

describe('which /settle failures are final', () => {
  const tx = `0x${'cd'.repeat(32)}`;
  test.each([
    [{ errorReason: 'duplicate_settlement' }, true],
    [{ errorReason: 'invalid_exact_evm_nonce_already_used' }, true],
    [{ errorReason: 'invalid_exact_evm_payload_signature' }, true],
    [{ errorReason: 'insufficient_funds' }, true],
    [{ errorReason: 'invalid_exact_evm_transaction_failed', transaction: tx }, true],
    [{ errorReason: 'invalid_transaction_state', transaction: tx }, true],
    [{ errorReason: 'invalid_exact_evm_transaction_failed', transaction: '' }, false],
    [{ errorReason: 'unexpected_settle_error' }, false],
    [{ errorReason: 'invalid_exact_evm_transfer_event_mismatch', transaction: tx }, false],
    [{ errorReason: 'Timed out while waiting for transaction' }, false],
    [{}, false],
  ])('%j → definitive %s', (answer, definitive) => {
    expect(isDefinitiveSettleFailure(answer)).toBe(definitive);
  });
});
