/**
 * Never charge for an answer the service cannot give, over the real HTTP surface
 * (test/services/paidHarness.ts: a devnet chain, mempool, ledger, refunds, native settlement and
 * the /api/x402 routes on 127.0.0.1): the chain-data services refuse with 400 and a stable
 * reason, before any quote, an input that names nothing on this chain (an unknown token or pool,
 * NATIVE where a token is needed, an address of another network, a transaction or block this node
 * does not hold, a bridge network it does not bridge); they used to quote it, take the payment and
 * answer `found: false`. A payment already on chain skips the pre-payment check (it settles), so a
 * run that meets such an input — or a chain that changed since the quote — is refunded on-chain.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { encodeAddress } from '../../consensus/address.js';
import { getDevKeyPair } from '../../consensus/devnet.js';
import { fromHex } from '../../consensus/hash.js';
import { createAgentInvokeTx } from '../../consensus/txBuilder.js';
import { requestCommitment } from '../../x402/core/wire.js';
import { testKey } from '../helpers/keys.js';
import { mineFromPool } from '../helpers/mine.js';
import { cleanupTmp } from '../helpers/tmp.js';
import { tableResolver } from './outboundFakes.js';
import { startPaidHarness, type PaidHarness } from './paidHarness.js';

let h: PaidHarness;

beforeAll(async () => {
  h = await startPaidHarness({ resolver: tableResolver({}) });
  // A few blocks, so heights 1..3 exist.
  for (let i = 0; i < 3; i++) await h.mine();
}, 120_000);

afterAll(async () => {
  await h?.close();
  await cleanupTmp();
});

const post = (serviceId: string, body: Record<string, unknown>) => h.post(`/api/x402/${serviceId}`, body);

/** Pays the price of `serviceId` for `request` with a mined agent_invoke committed to it, without a quote (what a payment that skipped the pre-payment check is). */
async function payWithoutQuote(serviceId: string, request: string): Promise<{ txId: string; salt: string }> {
  const salt = '6b'.repeat(32);
  const requestHash = fromHex(requestCommitment({ sellerId: h.ledger.sellerId, serviceId, request, salt }));
  const nonce = (await h.chain.getAccount(getDevKeyPair().address)).nonce;
  const amount = h.context.registry.get(serviceId)!.priceBase;
  const built = createAgentInvokeTx({ key: getDevKeyPair(), chainId: h.context.params.chainId, serviceId, payTo: testKey('payee').address, amount, requestHash, nonce, includeKey: nonce === 0n, fee: 30_000n });
  await h.pool.add(built.bytes);
  await mineFromPool(h.chain, h.pool, testKey('miner').address);
  return { txId: built.id, salt };
}

describe('inputs naming nothing on this chain: 400 with a stable reason, no quote', () => {
  const mainnetAddress = encodeAddress(new Uint8Array(20).fill(7), 'native');
  test.each([
    ['native-token-audit', 'NOPE', 'unknown_token'],
    ['native-token-audit', 'NATIVE', 'not_a_token'],
    ['native-supply-audit', 'NOPE', 'unknown_token'],
    ['native-supply-audit', 'NATIVE', 'not_a_token'],
    ['native-holder-stats', 'NOPE/NATIVE', 'unknown_pool'],
    ['native-holder-stats', 'native', 'not_a_token'],
    ['native-pool-analytics', 'NOPE', 'unknown_token'],
    // The harness chain has no pool at all: not even NATIVE has one.
    ['native-pool-analytics', 'NATIVE', 'no_pool'],
    ['native-wallet-portfolio', mainnetAddress, 'foreign_address'],
    ['native-tx-lookup', 'ee'.repeat(32), 'tx_not_found'],
    ['native-block-inspect', '999', 'block_not_found'],
    ['native-block-inspect', 'ee'.repeat(32), 'block_not_found'],
    ['native-bridge-route-check', 'mars-native-5', 'unknown_network'],
    ['native-bridge-route-check', 'base-base-5', 'same_network'],
    ['native-swap-quote', '1 NATIVE -> NOPE', 'unknown_token'],
  ])('%s %s → 400 %s', async (serviceId, request, reason) => {
    const r = await post(serviceId, { request });
    expect({ status: r.status, code: r.body.error?.code, reason: r.body.error?.reason, accepts: r.body.accepts }).toEqual({ status: 400, code: 'invalid_request', reason, accepts: undefined });
    expect(r.body.error.message).toEqual(expect.any(String));
  });

  test('what the chain holds is still quoted and answered', async () => {
    expect((await post('native-block-inspect', { request: '2' })).status).toBe(402);
    expect((await post('native-supply-audit', { request: '' })).status).toBe(402);
    const paid = await h.paidCall('native-block-inspect', '1');
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ paid: true, result: { found: true, height: 1 } });
    // The payment itself is a transaction this node holds: its lookup is quoted.
    expect((await post('native-tx-lookup', { request: paid.txId })).status).toBe(402);
  });
});

describe('a payment that skipped the pre-payment check: the run re-checks and refunds', () => {
  test.each([
    ['native-token-audit', 'NOPE', 'unknown_token'],
    ['native-wallet-portfolio', encodeAddress(new Uint8Array(20).fill(9), 'native'), 'foreign_address'],
    ['native-tx-lookup', 'ef'.repeat(32), 'tx_not_found'],
  ])('%s %s: paid, refunded on-chain with %s, the payer loses only the fee', async (serviceId, request, code) => {
    const before = await h.agentBalance();
    const pay = await payWithoutQuote(serviceId, request);
    const r = await post(serviceId, { request, payment: pay });
    expect(r.status).toBe(502);
    expect(r.body).toMatchObject({ paid: true, refunded: true, error: { code } });
    expect(r.body.result).toBeUndefined();
    await h.mine();
    expect((await h.ledger.get(pay.txId))?.status).toBe('refunded');
    const invoke = (await h.chain.getTx(pay.txId))!;
    expect(await h.agentBalance()).toBe(before - invoke.tx.fee);
  });
});
