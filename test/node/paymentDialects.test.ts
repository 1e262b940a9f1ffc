/** The dialect helpers without a node: challenge signing and expiry, JCS, the v2 header's CAIP-2 networks. */
import { describe, expect, test } from '@jest/globals';
import { canonicalJson, caip2NetworkOf, PaymentAuth, paymentRequiredV2Of } from '../../node/api/paymentDialects.js';
import type { PaymentRequirements } from '../../x402/core/quote.js';

const native: PaymentRequirements = { scheme: 'native-x402', network: 'native-devnet', maxAmountRequired: '200000', resource: 'http://h/api/x402/s', description: 'say "hi"\\', mimeType: 'application/json', payTo: 'tnative1x', maxTimeoutSeconds: 300, asset: 'NATIVE', extra: { chainId: 1337 } };
const usdc: PaymentRequirements = { scheme: 'exact', network: 'base', maxAmountRequired: '1000', resource: 'http://h/api/x402/s', description: 'd', mimeType: 'application/json', payTo: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C', maxTimeoutSeconds: 60, asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', extra: { name: 'USD Coin', version: '2' } };
const cred = (challenge: object, payload: object) => `Payment ${Buffer.from(JSON.stringify({ challenge, payload })).toString('base64url')}`;

describe('payment dialects', () => {
  test('CAIP-2 networks and the v2 PaymentRequired of every option', () => {
    expect(caip2NetworkOf(native)).toBe('native:1337');
    expect(caip2NetworkOf(usdc)).toBe('eip155:8453');
    expect(paymentRequiredV2Of([native, usdc], 'x').accepts.map((a) => a.network)).toEqual(['native:1337', 'eip155:8453']);
  });

  test('canonical JSON sorts keys at every level', () => {
    expect(canonicalJson({ b: 1, a: { d: 'x', c: [2, { f: 1, e: 0 }] } })).toBe('{"a":{"c":[2,{"e":0,"f":1}],"d":"x"},"b":1}');
  });

  test('challenges escape quoted strings; a credential is checked against the HMAC, the expiry and the resource', () => {
    const auth = new PaymentAuth(new Uint8Array(32).fill(1));
    const [header] = auth.challenges([native], 'h', 1_000_000);
    expect(header).toContain('description="say \\"hi\\"\\\\"');
    const c = auth.challengeOf(native, 'h', 1_000_000);
    // The native payload is {txId, salt} (the salt the payment's requestHash commits to); a salt that is not a string is malformed.
    expect(auth.proofOf(cred(c, { txId: 'ab', salt: 'cd' }), native.resource, 1_000_000)).toEqual({ rail: 'native', txId: 'ab', salt: 'cd' });
    expect(auth.proofOf(cred(c, { txId: 'ab', salt: 7 }), native.resource, 1_000_000)).toMatchObject({ rail: 'native', malformed: { code: 'invalid_payment_credential' } });
    // Without the salt it is passed on as is: the settle answers invalid_payment (x402/native/settle.ts).
    expect(auth.proofOf(cred(c, { txId: 'ab' }), native.resource, 1_000_000)).toEqual({ rail: 'native', txId: 'ab' });
    expect(auth.proofOf(cred(c, { txId: 'ab' }), native.resource, 1_000_000 + 301_000)).toMatchObject({ malformed: { code: 'payment_challenge_expired' } });
    expect(auth.proofOf(cred({ ...c, expires: '2099-01-01T00:00:00Z' }, { txId: 'ab' }), native.resource, 1_000_000)).toMatchObject({ malformed: { code: 'payment_challenge_invalid' } });
    expect(new PaymentAuth(new Uint8Array(32).fill(2)).proofOf(cred(c, { txId: 'ab' }), native.resource, 1_000_000)).toMatchObject({ malformed: { code: 'payment_challenge_invalid' } });
    expect(auth.proofOf(cred(c, { txId: 'ab' }), 'http://h/api/x402/other', 1_000_000)).toMatchObject({ malformed: { code: 'payment_challenge_mismatch' } });
    expect(auth.proofOf(cred(c, {}), native.resource, 1_000_000)).toMatchObject({ rail: 'native', malformed: { code: 'invalid_payment_credential' } });
    const u = auth.challengeOf(usdc, 'h', 1_000_000);
    expect(auth.proofOf(cred(u, { x402Version: 1 }), usdc.resource, 1_000_000)).toEqual({ rail: 'usdc', payload: { x402Version: 1 } });
    expect(auth.proofOf('Basic abc', usdc.resource, 0)).toBeUndefined();
    expect(auth.proofOf('Payment', usdc.resource, 0)).toMatchObject({ malformed: { code: 'invalid_payment_credential' } });
    expect(auth.proofOf(`Payment ${'A'.repeat(20_000)}`, usdc.resource, 0)).toMatchObject({ malformed: { code: 'invalid_payment_credential' } });
  });
});
