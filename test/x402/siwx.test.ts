/**
 * x402 sign-in-with-x (x402/usdc/siwx.ts) with real EIP-4361 messages signed by viem accounts: a
 * challenge of this node (or of its fleet: the same ledger key), signed by the payer for one
 * payment, proves its address for that payment; a sign-in captured for payment X proves nothing
 * for payment Y, nor one naming no payment; another node's challenge, another resource, an
 * expired one, a tampered field or a bad signature prove nothing.
 */
import { describe, expect, test } from '@jest/globals';
import { privateKeyToAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';
import { SiwxChallenges, SIWX_CHALLENGE_SECONDS } from '../../x402/usdc/siwx.js';

const payer = privateKeyToAccount(`0x${'11'.repeat(32)}`);
const RESOURCE = 'http://127.0.0.1:8402/api/x402/native-echo';
const NOW = Date.parse('2026-11-27T04:00:00.000Z');
/** Nonces of two authorizations of the same payer. */
const X = { nonce: `0x${'aa'.repeat(32)}` };
const Y = { nonce: `0x${'bb'.repeat(32)}` };

/** What a client does with the 402's declaration: sign its EIP-4361 message for one payment (requestId: its nonce) and send the fields (base64 JSON). */
async function signIn(decl: Record<string, any>, payment: { nonce: string } | null = X, account = payer, tamper: (p: Record<string, unknown>) => void = () => undefined): Promise<string> {
  const info = decl.info;
  const message = createSiweMessage({
    domain: info.domain,
    address: account.address,
    statement: info.statement,
    uri: info.uri,
    version: '1',
    chainId: 8453,
    nonce: info.nonce,
    issuedAt: new Date(info.issuedAt),
    expirationTime: new Date(info.expirationTime),
    ...(payment ? { requestId: payment.nonce } : {}),
    resources: info.resources,
  });
  const payload: Record<string, unknown> = { ...info, ...(payment ? { requestId: payment.nonce } : {}), address: account.address, chainId: 'eip155:8453', type: 'eip191', signature: await account.signMessage({ message }) };
  tamper(payload);
  return Buffer.from(JSON.stringify(payload)).toString('base64');
}

describe('sign-in-with-x', () => {
  const key = new Uint8Array(32).fill(7);
  const node = new SiwxChallenges(key);

  test('a challenge of this node signed by the payer for a payment proves its address for that payment', async () => {
    const decl = node.declaration(RESOURCE, NOW);
    expect(decl).toMatchObject({ info: { domain: '127.0.0.1:8402', uri: RESOURCE, version: '1' }, supportedChains: [{ chainId: 'eip155:8453', type: 'eip191' }] });
    expect(await node.verify(await signIn(decl), RESOURCE, NOW + 1000, X)).toEqual({ ok: true, address: payer.address });
    // The nonce's case is no other payment.
    expect(await node.verify(await signIn(decl), RESOURCE, NOW + 1000, { nonce: X.nonce.toUpperCase().replace('0X', '0x') })).toMatchObject({ ok: true });
  });

  test('a sign-in captured for payment X proves nothing for payment Y; one naming no payment proves nothing; re-pointed after signing it does not verify', async () => {
    const decl = node.declaration(RESOURCE, NOW);
    const forX = await signIn(decl, X);
    expect(await node.verify(forX, RESOURCE, NOW, Y)).toMatchObject({ ok: false, code: 'siwx_other_payment' });
    expect(await node.verify(await signIn(decl, null), RESOURCE, NOW, X)).toMatchObject({ ok: false, code: 'siwx_other_payment' });
    expect(await node.verify(await signIn(decl, X, payer, (p) => (p.requestId = Y.nonce)), RESOURCE, NOW, Y)).toMatchObject({ ok: false, code: 'siwx_bad_signature' });
  });

  test('the nodes of a fleet (one ledger key) check each other\'s challenges; a node with another key does not', async () => {
    const decl = node.declaration(RESOURCE, NOW);
    expect(await new SiwxChallenges(new Uint8Array(32).fill(7)).verify(await signIn(decl), RESOURCE, NOW, X)).toMatchObject({ ok: true });
    expect(await new SiwxChallenges(new Uint8Array(32).fill(8)).verify(await signIn(decl), RESOURCE, NOW, X)).toMatchObject({ ok: false, code: 'siwx_not_issued_here' });
  });

  test('another node\'s challenge, another resource, an expired challenge, a tampered field or a bad signature prove nothing', async () => {
    const decl = node.declaration(RESOURCE, NOW);
    const other = new SiwxChallenges();
    const cases: [string, Promise<{ ok: boolean }>][] = [
      ['another node', other.verify(await signIn(decl), RESOURCE, NOW, X)],
      ['another resource', node.verify(await signIn(decl), 'http://127.0.0.1:8402/api/x402/native-other', NOW, X)],
      ['expired', node.verify(await signIn(decl), RESOURCE, NOW + (SIWX_CHALLENGE_SECONDS + 1) * 1000, X)],
      ['address swapped after signing', node.verify(await signIn(decl, X, payer, (p) => (p.address = privateKeyToAccount(`0x${'22'.repeat(32)}`).address)), RESOURCE, NOW, X)],
      ['statement changed after signing', node.verify(await signIn(decl, X, payer, (p) => (p.statement = 'something else')), RESOURCE, NOW, X)],
      ['issuedAt moved (nonce no longer matches)', node.verify(await signIn(decl, X, payer, (p) => (p.issuedAt = new Date(NOW + 1).toISOString())), RESOURCE, NOW, X)],
      ['not base64 JSON', node.verify('%%%', RESOURCE, NOW, X)],
    ];
    for (const [name, p] of cases) expect({ name, ok: (await p).ok }).toEqual({ name, ok: false });
  });
});
