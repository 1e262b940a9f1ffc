/**
 * The agent toolkit's pieces without a node: loadWallet on the node's wallet files (clear dev
 * wallet, encrypted with and without the passphrase, an edited address), the native x402 scheme's
 * refusals before anything is paid (no request named, price above the agent's limit or the x402
 * client's cap) and its payload, the rail policy, the spend controls it adds, and the node's
 * reading of a native payment in an x402 payment header.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getDevKeyPair } from '../../consensus/devnet.js';
import { bytesEqual } from '../../consensus/hash.js';
import { createWalletFile, devWalletFile } from '../../node/wallet.js';
import { MAX_ECHOED_REQUEST_BYTES, nativePaymentOfHeader, paymentRequiredV2Of } from '../../node/api/paymentDialects.js';
import type { PaymentRequirements } from '../../x402/core/quote.js';
import { AgentErrorCode, type AgentClient, type AgentQuote } from '../../sdk/client.js';
import { loadWallet } from '../../sdk/walletFile.js';
import { createNativeScheme, preferRail, registerNativeScheme, REQUEST_UNKNOWN, type X402Requirement } from '../../sdk/x402Scheme.js';

const codeOf = (p: Promise<unknown>) => p.then(() => 'resolved', (e: { code?: string }) => e.code);
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');

describe('loadWallet', () => {
  const dir = mkdtempSync(join(tmpdir(), 'native-loadwallet-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('a clear devnet wallet needs no passphrase and gives the dev key', async () => {
    const path = join(dir, 'dev-wallet.json');
    writeFileSync(path, JSON.stringify(devWalletFile('native-devnet', 'tnative')));
    const w = await loadWallet(path);
    expect(w.clear).toBe(true);
    expect(bytesEqual(w.key.address, getDevKeyPair().address)).toBe(true);
    expect(w.address.startsWith('tnative1')).toBe(true);
  });

  test('an encrypted wallet (wallet new) opens with its passphrase only', async () => {
    const path = join(dir, 'enc.json');
    const created = await createWalletFile(path, { network: 'native-devnet', hrp: 'tnative', passphrase: 'correct horse' });
    expect(await codeOf(loadWallet(path))).toBe('wallet_passphrase_required');
    expect(await codeOf(loadWallet(path, { passphrase: 'wrong' }))).toBe('wallet_bad_passphrase');
    const w = await loadWallet(path, { passphrase: 'correct horse' });
    expect(w).toMatchObject({ address: created.address, network: 'native-devnet', clear: false });
  });

  test('a clear file whose address was edited is refused', async () => {
    const path = join(dir, 'edited.json');
    const f = devWalletFile('native-devnet', 'tnative');
    writeFileSync(path, JSON.stringify({ ...f, address: 'tnative1zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3jw2try' }));
    expect(await codeOf(loadWallet(path))).toBe('wallet_invalid');
    expect(await codeOf(loadWallet(join(dir, 'missing.json')))).toBe('wallet_not_found');
    expect(readFileSync(join(dir, 'dev-wallet.json'), 'utf8')).toContain('"seed"');
  });
});

/** A stub agent that records what it was asked to pay. */
function stubAgent(): AgentClient & { paid: AgentQuote[] } {
  const paid: AgentQuote[] = [];
  return {
    paid,
    nodeUrl: 'http://127.0.0.1:1',
    quote: async () => {
      throw new Error('not used');
    },
    pay: async () => 'x',
    async sendPayment(q) {
      paid.push(q);
      return { txId: 'ab'.repeat(32), feeBase: 5000n, nonce: 0n, salt: q.salt };
    },
    settle: async () => {
      throw new Error('not used');
    },
    call: async () => {
      throw new Error('not used');
    },
    waitForPayment: async () => ({ height: 1, confirmations: 1 }),
  };
}

const requirement = (extra: Record<string, unknown>, amount = '200000'): X402Requirement => ({
  scheme: 'native-x402',
  network: 'native:1337',
  asset: 'NATIVE',
  amount,
  payTo: 'tnative1zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3jw2try',
  maxTimeoutSeconds: 60,
  extra: { txType: 'agent_invoke', chainId: 1337, serviceId: 'native-world-clock', sellerId: '0123456789abcdef', commitment: 'native-x402/request-commitment/v1', confirmations: 1, ...extra },
});

describe('the native x402 scheme', () => {
  test('pays the option for the request the node names and returns {txId, salt}', async () => {
    const agent = stubAgent();
    const out = await createNativeScheme({ agent }).createPaymentPayload(2, requirement({ request: 'Europe/Paris' }));
    expect(agent.paid).toHaveLength(1);
    expect(agent.paid[0]).toMatchObject({ serviceId: 'native-world-clock', request: 'Europe/Paris', amount: 200000n });
    expect(out).toEqual({ x402Version: 2, payload: { txId: 'ab'.repeat(32), salt: agent.paid[0].salt } });
    const v1 = await createNativeScheme({ agent }).createPaymentPayload(1, requirement({ request: null }));
    expect(v1).toMatchObject({ x402Version: 1, scheme: 'native-x402', network: 'native:1337' });
    expect(agent.paid[1].request).toBeUndefined();
  });

  test('refuses before paying: no request named, above maxPriceBase, above the client cap', async () => {
    const agent = stubAgent();
    expect(await codeOf(createNativeScheme({ agent }).createPaymentPayload(2, requirement({})))).toBe(REQUEST_UNKNOWN);
    expect(await codeOf(createNativeScheme({ agent }).createPaymentPayload(2, requirement({ requestOmitted: 'too_large' })))).toBe(REQUEST_UNKNOWN);
    expect(await codeOf(createNativeScheme({ agent, maxPriceBase: 199_999n }).createPaymentPayload(2, requirement({ request: 'x' })))).toBe(AgentErrorCode.PRICE_ABOVE_LIMIT);
    expect(await codeOf(createNativeScheme({ agent }).createPaymentPayload(2, requirement({ request: 'x' }), { maxAmountPerPayment: '100' }))).toBe(AgentErrorCode.PRICE_ABOVE_LIMIT);
    expect(agent.paid).toHaveLength(0);
  });

  test('registerNativeScheme registers native:* and allows NATIVE in the spend controls, keeping the others', () => {
    const calls: unknown[] = [];
    const client = {
      spendControls: { maxAmountPerPayment: '$0.50', allowedAssets: [{ network: 'eip155:*', asset: '0xabc' }] } as unknown,
      register(network: string, c: { scheme: string }) {
        calls.push([network, c.scheme]);
      },
      setSpendControls(c: unknown) {
        this.spendControls = c;
      },
    };
    registerNativeScheme(client, { agent: stubAgent(), maxPriceBase: 1_000_000n });
    expect(calls).toEqual([['native:*', 'native-x402']]);
    expect(client.spendControls).toEqual({ maxAmountPerPayment: '$0.50', allowedAssets: [{ network: 'eip155:*', asset: '0xabc' }, { network: 'native:*', asset: 'NATIVE', maxAmountPerPayment: '1000000' }] });
    const off = { spendControls: false as unknown, register() {}, setSpendControls(c: unknown) { this.spendControls = c; } };
    registerNativeScheme(off, { agent: stubAgent() });
    expect(off.spendControls).toBe(false);
  });

  test('preferRail puts one rail first', () => {
    const reqs = [{ scheme: 'exact' }, { scheme: 'native-x402' }];
    expect(preferRail('native')(2, reqs).map((r) => r.scheme)).toEqual(['native-x402', 'exact']);
    expect(preferRail('usdc')(2, [...reqs].reverse()).map((r) => r.scheme)).toEqual(['exact', 'native-x402']);
  });
});

describe('the node reads a native payment from an x402 payment header', () => {
  test('v2 PAYMENT-SIGNATURE and v1 X-PAYMENT of native-x402; anything else is left to the USDC rail', () => {
    const txId = 'cd'.repeat(32);
    const salt = 'ef'.repeat(32);
    expect(nativePaymentOfHeader(b64({ x402Version: 2, accepted: { scheme: 'native-x402' }, payload: { txId, salt } }))).toEqual({ txId, salt });
    expect(nativePaymentOfHeader(b64({ x402Version: 1, scheme: 'native-x402', network: 'native-devnet', payload: { txId, salt } }))).toEqual({ txId, salt });
    expect(nativePaymentOfHeader(b64({ x402Version: 2, accepted: { scheme: 'native-x402' }, payload: { salt } }))).toHaveProperty('malformed');
    expect(nativePaymentOfHeader(b64({ x402Version: 2, accepted: { scheme: 'exact' }, payload: { authorization: {} } }))).toBeUndefined();
    expect(nativePaymentOfHeader('not base64 json')).toBeUndefined();
  });
});

describe('the x402 v2 native option names the request a payment must commit to', () => {
  const native: PaymentRequirements = { scheme: 'native-x402', network: 'native-devnet', maxAmountRequired: '200000', resource: 'http://h/api/x402/s', description: 'd', mimeType: 'application/json', payTo: 'tnative1x', maxTimeoutSeconds: 300, asset: 'NATIVE', extra: { chainId: 1337 } };
  const extraOf = (request?: string) => paymentRequiredV2Of([native], undefined, undefined, request).accepts[0].extra;
  test('the request, null without one, requestOmitted above the echo limit', () => {
    expect(extraOf('Europe/Paris')).toEqual({ chainId: 1337, request: 'Europe/Paris' });
    expect(extraOf(undefined)).toEqual({ chainId: 1337, request: null });
    expect(extraOf('é'.repeat(MAX_ECHOED_REQUEST_BYTES / 2))).toHaveProperty('request');
    expect(extraOf('x'.repeat(MAX_ECHOED_REQUEST_BYTES + 1))).toEqual({ chainId: 1337, requestOmitted: 'too_large' });
  });
});
