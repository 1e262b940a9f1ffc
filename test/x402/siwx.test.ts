/**
 * x402 sign-in-with-x (x402/siwx.ts) with real EIP-4361 messages signed by viem accounts: a
 * challenge of this node, signed by the payer, proves its address; another node's challenge,
 * another resource, an expired one, a tampered field or a bad signature prove nothing.
 */
import { describe, expect, test } from '@jest/globals';
import { privateKeyToAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';
import { SiwxChallenges, SIWX_CHALLENGE_SECONDS } from '../../x402/siwx.js';

const payer = privateKeyToAccount(`0x${'11'.repeat(32)}`);
const RESOURCE = 'http://127.0.0.1:8402/api/x402/native-echo';
const NOW = Date.parse('2026-11-27T04:00:00.000Z');

/** What a client does with the 402's declaration: sign its EIP-4361 message and send the fields (base64 JSON). */
async function signIn(decl: Record<string, any>, account = payer, tamper: (p: Record<string, unknown>) => void = () => undefined): Promise<string> {
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
    resources: info.resources,
  });
  const payload: Record<string, unknown> = { ...info, address: account.address, chainId: 'eip155:8453', type: 'eip191', signature: await account.signMessage({ message }) };
  tamper(payload);
  return Buffer.from(JSON.stringify(payload)).toString('base64');
}

describe('sign-in-with-x', () => {
  const node = new SiwxChallenges();

  test('a challenge of this node signed by the payer proves its address', async () => {
    const decl = node.declaration(RESOURCE, NOW);
    expect(decl).toMatchObject({ info: { domain: '127.0.0.1:8402', uri: RESOURCE, version: '1' }, supportedChains: [{ chainId: 'eip155:8453', type: 'eip191' }] });
    expect(await node.verify(await signIn(decl), RESOURCE, NOW + 1000)).toEqual({ ok: true, address: payer.address });
  });

  test('another node\'s challenge, another resource, an expired challenge, a tampered field or a bad signature prove nothing', async () => {
    const decl = node.declaration(RESOURCE, NOW);
    const other = new SiwxChallenges();
    const cases: [string, Promise<{ ok: boolean }>][] = [
      ['another node', other.verify(await signIn(decl), RESOURCE, NOW)],
      ['another resource', node.verify(await signIn(decl), 'http://127.0.0.1:8402/api/x402/native-other', NOW)],
      ['expired', node.verify(await signIn(decl), RESOURCE, NOW + (SIWX_CHALLENGE_SECONDS + 1) * 1000)],
      ['address swapped after signing', node.verify(await signIn(decl, payer, (p) => (p.address = privateKeyToAccount(`0x${'22'.repeat(32)}`).address)), RESOURCE, NOW)],
      ['statement changed after signing', node.verify(await signIn(decl, payer, (p) => (p.statement = 'something else')), RESOURCE, NOW)],
      ['issuedAt moved (nonce no longer matches)', node.verify(await signIn(decl, payer, (p) => (p.issuedAt = new Date(NOW + 1).toISOString())), RESOURCE, NOW)],
      ['not base64 JSON', node.verify('%%%', RESOURCE, NOW)],
    ];
    for (const [name, p] of cases) expect({ name, ok: (await p).ok }).toEqual({ name, ok: false });
  });
});
