/**
 * The native x402 rail against a real devnet node process over HTTP: quotes (402 with the
 * native option), input errors before any quote, unknown and unavailable services, and the full
 * paid flow (quote → agent_invoke committed to the quote's seller, the request and a salt →
 * broadcast → settle with the salt → result + receipt) for every service the node implements itself.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getDevKeyPair } from '../../consensus/devnet.js';
import { encodeAddress } from '../../consensus/address.js';
import { randomBytes } from 'node:crypto';
import { fromHex, toHex } from '../../consensus/hash.js';
import { encodeTx, encodeUnsignedTx, signTx, TxType, TX_VERSION } from '../../consensus/tx.js';
import { agentInvoke } from '../../consensus/txTypes/agentInvoke.js';
import { tryDecodeAddress } from '../../consensus/address.js';
import { COMMITMENT_SCHEME, requestCommitment } from '../../x402/core/wire.js';
import { startNode, type NodeProc } from '../helpers/nodeProcess.js';

let dir: string;
let node: NodeProc;
let url: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'native-x402-'));
  node = await startNode(['--dev', '--data-dir', join(dir, 'data'), '--http-port', '0', '--block-time', '1'], { cwd: dir });
  url = node.url;
}, 120_000);

afterAll(async () => {
  node?.child.kill('SIGTERM');
  await node?.exited;
  rmSync(dir, { recursive: true, force: true });
});

async function post(path: string, body: unknown): Promise<{ status: number; body: Record<string, any> }> {
  const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

async function get(path: string): Promise<Record<string, any>> {
  return (await (await fetch(`${url}${path}`)).json()) as Record<string, any>;
}

/** The services the node runs itself, with a valid request each. */
const CALLS: [string, string | undefined][] = [
  ['native-world-clock', 'Europe/Berlin'],
  ['native-address-validator', encodeAddress(getDevKeyPair().address, 'tnative')],
  ['native-network-stats', undefined],
  ['native-gas-tracker', undefined],
  ['native-block-inspect', '1'],
  ['native-explorer-summary', undefined],
  ['native-staking-rewards', '1000'],
  ['native-service-search', 'clock'],
  ['native-agent-roster', undefined],
];

describe('x402 native rail (real node)', () => {
  test('an unpaid call answers 402 with the native option', async () => {
    const q = await post('/api/x402/native-world-clock', { request: 'Europe/Berlin' });
    expect(q.status).toBe(402);
    expect(q.body).toMatchObject({ x402: true, x402Version: 1, error: 'Payment Required' });
    const native = q.body.accepts.find((a: { scheme: string }) => a.scheme === 'native-x402');
    expect(native).toMatchObject({
      network: 'native-devnet',
      asset: 'NATIVE',
      maxAmountRequired: '200000',
      resource: `${url}/api/x402/native-world-clock`,
      mimeType: 'application/json',
      extra: { txType: 'agent_invoke', chainId: 1337, serviceId: 'native-world-clock', priceAman: 0.002, broadcast: '/api/v1/tx', sellerId: expect.stringMatching(/^[0-9a-f]{16}$/), commitment: COMMITMENT_SCHEME, confirmations: 1 },
    });
    // The payment commits to the request with the payer's own salt: the quote never carries a request hash.
    expect(native.extra.requestHash).toBeUndefined();
    expect(tryDecodeAddress(native.payTo, 'tnative')).toBeDefined();
    // Endpoint 1 gives the same quote.
    const q1 = await post('/api/x402', { serviceId: 'native-world-clock', request: 'Europe/Berlin' });
    expect(q1.status).toBe(402);
    expect(q1.body.accepts[0].maxAmountRequired).toBe('200000');
    expect(q1.body.accepts[0].extra.sellerId).toBe(native.extra.sellerId);
    // The status names the same seller and confirmations.
    expect((await get('/api/v1/status')).payments).toMatchObject({ sellerId: native.extra.sellerId, confirmations: 1 });
  });

  test('bad input is a 400 and no quote; unknown is 404; an unavailable service is 503 and never quoted', async () => {
    const bad = await post('/api/x402/native-world-clock', { request: 'Mars/Olympus_Mons' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_request');
    expect(bad.body.accepts).toBeUndefined();
    const missing = await post('/api/x402/native-tx-lookup', {});
    expect(missing.status).toBe(400);
    const unknown = await post('/api/x402/native-nope', { request: 'x' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('unknown_service');
    const down = await post('/api/x402/native-image-gen', { request: 'a cat' });
    expect(down.status).toBe(503);
    expect(down.body.error.code).toBe('service_unavailable');
    expect(down.body.accepts).toBeUndefined();
  });

  test('POST /api/v1/tx refuses an invoke to the payee without a commitment, or committed to another seller (422)', async () => {
    const dev = getDevKeyPair();
    const status = await get('/api/v1/status');
    const nonce = BigInt((await get(`/api/v1/account/${encodeAddress(dev.address, 'tnative')}`)).pendingNonce);
    const q = await post('/api/x402/native-world-clock', { request: 'UTC' });
    const native = q.body.accepts.find((a: { scheme: string }) => a.scheme === 'native-x402');
    const send = async (requestHash: Uint8Array | undefined) => {
      const payload = agentInvoke.encodePayload({ serviceId: 'native-world-clock', payTo: tryDecodeAddress(native.payTo, 'tnative')!, amount: BigInt(native.maxAmountRequired), requestHash });
      const base = { version: TX_VERSION, chainId: status.chainId, type: TxType.agent_invoke, from: dev.address, nonce, payload, ...(nonce === 0n ? { publicKey: dev.publicKey } : {}) };
      const fee = BigInt(encodeUnsignedTx({ ...base, fee: 0n }).length + 4700) * BigInt(status.minFeeRate);
      return post('/api/v1/tx', { tx: toHex(encodeTx(signTx({ ...base, fee }, dev))) });
    };
    const missing = await send(undefined);
    expect(missing.status).toBe(422);
    expect(missing.body.error.code).toBe('invoke_commitment_missing');
    const otherSeller = native.extra.sellerId === '0123456789abcdef' ? 'fedcba9876543210' : '0123456789abcdef';
    const wrong = await send(fromHex(requestCommitment({ sellerId: otherSeller, serviceId: 'native-world-clock', request: 'UTC', salt: '33'.repeat(32) })));
    expect(wrong.status).toBe(422);
    expect(wrong.body.error.code).toBe('invoke_wrong_seller');
    // Neither entered the mempool: the nonce is still free.
    expect(BigInt((await get(`/api/v1/account/${encodeAddress(dev.address, 'tnative')}`)).pendingNonce)).toBe(nonce);
  });

  test('the full paid flow for every node-operated service', async () => {
    const dev = getDevKeyPair();
    const devAddr = encodeAddress(dev.address, 'tnative');
    // block-inspect '1' is refused before the quote while block 1 does not exist (400
    // block_not_found): wait for it, bounded (a loaded machine mined it after the tests began).
    for (const deadline = Date.now() + 60_000; (await get('/api/v1/status')).height < 1 && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 200));
    const status = await get('/api/v1/status');
    const settledBefore = status.payments.settled as number;
    expect(status.payments).toMatchObject({ settledUsdc: 0, refundsPending: 0, payTo: expect.stringMatching(/^tnative1/) });
    const acc = await get(`/api/v1/account/${devAddr}`);
    let nonce = BigInt(acc.pendingNonce);
    const paid: { serviceId: string; request?: string; txId: string; salt: string }[] = [];
    for (const [serviceId, request] of CALLS) {
      const q = await post(`/api/x402/${serviceId}`, request === undefined ? {} : { request });
      expect({ serviceId, status: q.status }).toEqual({ serviceId, status: 402 });
      const native = q.body.accepts.find((a: { scheme: string }) => a.scheme === 'native-x402');
      const salt = randomBytes(32).toString('hex');
      const payload = agentInvoke.encodePayload({
        serviceId,
        payTo: tryDecodeAddress(native.payTo, 'tnative')!,
        amount: BigInt(native.maxAmountRequired),
        requestHash: fromHex(requestCommitment({ sellerId: native.extra.sellerId, serviceId, request, salt })),
      });
      const base = { version: TX_VERSION, chainId: status.chainId, type: TxType.agent_invoke, from: dev.address, nonce, payload, ...(nonce === 0n ? { publicKey: dev.publicKey } : {}) };
      const fee = BigInt(encodeUnsignedTx({ ...base, fee: 0n }).length + 4700) * BigInt(status.minFeeRate);
      const tx = signTx({ ...base, fee }, dev);
      const sent = await post('/api/v1/tx', { tx: toHex(encodeTx(tx)) });
      expect(sent.status).toBe(200);
      paid.push({ serviceId, request, txId: sent.body.txId, salt });
      nonce++;
    }
    for (const p of paid) {
      let out = await post(`/api/x402/${p.serviceId}?wait=30`, { request: p.request, payment: { txId: p.txId, salt: p.salt } });
      for (let i = 0; i < 5 && out.status === 202; i++) out = await post(`/api/x402/${p.serviceId}?wait=30`, { request: p.request, payment: { txId: p.txId, salt: p.salt } });
      expect({ serviceId: p.serviceId, status: out.status }).toEqual({ serviceId: p.serviceId, status: 200 });
      expect(out.body.paid).toBe(true);
      expect(out.body.result).toBeDefined();
      expect(out.body.receipt).toMatchObject({ serviceId: p.serviceId, caller: devAddr, txId: p.txId });
    }
    // A settled payment is fetched again only with its salt: without it 400, with another 409 and no result.
    const first = paid[0];
    const again = await post(`/api/x402/${first.serviceId}?wait=0`, { request: first.request, payment: { txId: first.txId, salt: first.salt } });
    expect(again.status).toBe(200);
    expect(again.body.receipt.txId).toBe(first.txId);
    const noSalt = await post(`/api/x402/${first.serviceId}?wait=0`, { request: first.request, payment: { txId: first.txId } });
    expect(noSalt.status).toBe(400);
    expect(noSalt.body.error.code).toBe('invalid_payment');
    expect(noSalt.body.result).toBeUndefined();
    const otherSalt = await post(`/api/x402/${first.serviceId}?wait=0`, { request: first.request, payment: { txId: first.txId, salt: '00'.repeat(32) } });
    expect(otherSalt.status).toBe(402);
    expect(otherSalt.body.error.code).toBe('request_mismatch');
    expect(otherSalt.body.result).toBeUndefined();
    // The node's status counts them.
    expect((await get('/api/v1/status')).payments.settled).toBe(settledBefore + paid.length);
    // A tx-lookup of one of those payments, paid through endpoint 1.
    const lookup = paid[0].txId;
    const q = await post('/api/x402', { serviceId: 'native-tx-lookup', request: lookup });
    expect(q.status).toBe(402);
  }, 120_000);
});
