/**
 * Payee transactions a ledger restored from a backup forgot it sent (found by the randomized fleet
 * test's restore): the refunds and payouts it owes again are never signed a second time.
 *
 *   - a refund the chain already has: the refund manager signs nothing for it;
 *   - a refund still pending in the mempool, its nonce slot lost with the restore: it takes its
 *     slot back and stands for the refund;
 *   - a native provider payout the chain already has, owed again: marked paid, nothing signed.
 *
 * Before, each was signed again; the first and the last are refused by consensus, and written ahead
 * in its nonce slot, such a transaction held the payee's next nonce for good: every later refund
 * and payout waited behind it, never mined. The second was mined once, its twin then refused.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import { openChain } from '../../chain/chain.js';
import { createMempool } from '../../chain/mempool.js';
import { encodeAddress } from '../../consensus/address.js';
import { createDevnetChainParams, getDevKeyPair } from '../../consensus/devnet.js';
import { fromHex, toHex } from '../../consensus/hash.js';
import { COIN } from '../../consensus/params.js';
import { txId, TxType } from '../../consensus/tx.js';
import { createAgentInvokeTx } from '../../consensus/txBuilder.js';
import { decodeInvokeRecord, invokeKey } from '../../consensus/txTypes/agentInvoke.js';
import { refund as refundType } from '../../consensus/txTypes/refund.js';
import { providerPayout } from '../../consensus/txTypes/providerPayout.js';
import { payoutKey } from '../../consensus/registryState.js';
import { Level } from 'level';
import { openLedger } from '../../x402/ledger/open.js';
import { RefundManager } from '../../x402/native/refunds.js';
import { PayoutManager } from '../../x402/providers/payouts.js';
import { testKey } from '../helpers/keys.js';
import { mineFromPool } from '../helpers/mine.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';
import { CountingVerifier } from '../helpers/verifier.js';
import { payeeTxBytes } from '../helpers/chainRig.js';

const agent = getDevKeyPair();
const payee = testKey('refund-ended-payee');
const miner = testKey('refund-ended-miner');
const params = createDevnetChainParams({ genesisBits: 0x207fffff, allocations: [{ address: encodeAddress(payee.address, 'tnative'), amount: COIN }] });
const PRICE = 200_000n;
const failure = { code: 'service_failed', message: 'the service failed' };

afterAll(cleanupTmp);

/** A chain where the payee is funded, its mempool and a LevelDB ledger. */
async function world() {
  const dir = await tmpDir();
  const verifier = new CountingVerifier();
  const chain = await openChain({ dataDir: join(dir, 'chain'), params, verifier, now: () => params.genesis.time + 1_000_000 });
  const pool = createMempool(chain, verifier, params);
  pool.start();
  const ledger = await openLedger(join(dir, 'ledger'));
  const invokes = (n: number, from = 0) => Array.from({ length: n }, (_, i) => createAgentInvokeTx({ key: agent, chainId: params.chainId, serviceId: 'native-echo', payTo: payee.address, amount: PRICE, requestHash: fromHex('11'.repeat(32)), nonce: BigInt(from + i), includeKey: from + i === 0 }));
  /** A payee transaction signed outside this node's allocator (by the holder whose ledger was lost). */
  const payeeTx = (nonce: bigint, type: number, payload: Uint8Array) => payeeTxBytes(params, payee, nonce, type, payload);
  const payeeInPool = () => pool.list(100).filter((e) => toHex(e.tx.from) === toHex(payee.address));
  /** The claim of a native call of `id` by the agent, as a settle writes it. */
  const claim = (id: string) => ledger.claim({ id, rail: 'native', serviceId: 'native-echo', requestHash: '11'.repeat(32), caller: encodeAddress(agent.address, params.hrp), amount: PRICE.toString() });
  const close = async () => {
    pool.stop();
    await ledger.close();
    await chain.close();
  };
  return { dir, chain, pool, ledger, invokes, payeeTx, payeeInPool, claim, close };
}

describe('payee transactions a restored ledger forgot it sent', () => {
  test('a refund the chain already has is not signed again: the next refund takes the next nonce and is mined', async () => {
    const w = await world();
    const { chain, pool, ledger } = w;
    const refunds = new RefundManager(chain, pool, ledger, payee, params, { retryMs: 60_000 });
    try {
      const [lost, next] = w.invokes(2);
      for (const i of [lost!, next!]) await pool.add(i.bytes);
      await mineFromPool(chain, pool, miner.address);
      // The refund of the first, sent by the ledger that was lost: on chain, unknown to the ledger.
      const sent = w.payeeTx(0n, TxType.refund, refundType.encodePayload({ invokeId: fromHex(lost!.id), to: agent.address, amount: PRICE }));
      await pool.add(sent);
      await mineFromPool(chain, pool, miner.address);
      // The restored ledger: both owed (refund_pending without a transaction), as a node without the lease records them.
      for (const i of [lost!, next!]) {
        await w.claim(i.id);
        await ledger.refundPending(i.id, failure);
      }
      // The holder's sweep asks for both refunds.
      await refunds.refund(lost!.id, failure);
      await refunds.refund(next!.id, failure);
      await refunds.start();
      for (let i = 0; i < 2; i++) {
        await mineFromPool(chain, pool, miner.address);
        await refunds.idle();
      }
      const refunded = async (id: string) => {
        const raw = (await chain.getStateView([invokeKey(fromHex(id))])).get(invokeKey(fromHex(id)));
        return raw !== undefined && decodeInvokeRecord(raw).refunded;
      };
      expect(await refunded(next!.id)).toBe(true);
      expect((await chain.getAccount(payee.address)).nonce).toBe(2n);
      expect(await ledger.get(lost!.id)).toMatchObject({ status: 'refunded' });
      expect(await ledger.get(next!.id)).toMatchObject({ status: 'refunded' });
      expect(w.payeeInPool()).toEqual([]);
      expect(refunds.pendingIds()).toEqual([]);
    } finally {
      refunds.stop();
      await refunds.idle();
      await w.close();
    }
  }, 60_000);

  test('still pending in the mempool, its slot lost: it stands for the refund, none is signed', async () => {
    const w = await world();
    const refunds = new RefundManager(w.chain, w.pool, w.ledger, payee, params, { retryMs: 60_000 });
    try {
      const [inv] = w.invokes(1);
      await w.pool.add(inv!.bytes);
      await mineFromPool(w.chain, w.pool, miner.address);
      const pending = w.payeeTx(0n, TxType.refund, refundType.encodePayload({ invokeId: fromHex(inv!.id), to: agent.address, amount: PRICE }));
      await w.pool.add(pending);
      await w.claim(inv!.id);
      const rec = await refunds.refund(inv!.id, failure);
      expect(rec.refundTxId).toBe(toHex(txId(pending)));
      expect(w.payeeInPool().map((e) => e.id)).toEqual([toHex(txId(pending))]);
      await refunds.start();
      await mineFromPool(w.chain, w.pool, miner.address);
      await refunds.idle();
      expect((await w.chain.getAccount(payee.address)).nonce).toBe(1n);
      expect(await w.ledger.get(inv!.id)).toMatchObject({ status: 'refunded', refundTxId: toHex(txId(pending)) });
      expect(w.payeeInPool()).toEqual([]);
    } finally {
      refunds.stop();
      await refunds.idle();
      await w.close();
    }
  }, 60_000);

  test('a native payout the chain already has, owed again: marked paid, nothing signed', async () => {
    const w = await world();
    const db = new Level<string, string>(join(w.dir, 'providers'), { keyEncoding: 'utf8', valueEncoding: 'utf8' });
    const provider = testKey('refund-ended-provider');
    const payouts = new PayoutManager(db, w.chain, w.pool, w.ledger, payee, params, { payoutAddressOf: () => encodeAddress(provider.address, params.hrp) }, { retryMs: 60_000 });
    const refunds = new RefundManager(w.chain, w.pool, w.ledger, payee, params, { retryMs: 60_000 });
    try {
      const [paid, failed] = w.invokes(2);
      for (const i of [paid!, failed!]) await w.pool.add(i.bytes);
      await mineFromPool(w.chain, w.pool, miner.address);
      await w.pool.add(w.payeeTx(0n, TxType.provider_payout, providerPayout.encodePayload({ invokeId: fromHex(paid!.id), to: provider.address, amount: PRICE / 2n })));
      await mineFromPool(w.chain, w.pool, miner.address);
      await payouts.start();
      await refunds.start();
      // The restored ledger owes that payout again; a refund follows.
      await payouts.owe(paid!.id, 'native-echo', PRICE);
      await payouts.idle();
      expect(payouts.pendingIds()).toEqual([]);
      expect(w.payeeInPool()).toEqual([]);
      await w.claim(failed!.id);
      await refunds.refund(failed!.id, failure);
      await mineFromPool(w.chain, w.pool, miner.address);
      await refunds.idle();
      expect((await w.chain.getAccount(payee.address)).nonce).toBe(2n);
      expect(await w.ledger.get(failed!.id)).toMatchObject({ status: 'refunded' });
      expect((await w.chain.getStateView([payoutKey(fromHex(paid!.id))])).get(payoutKey(fromHex(paid!.id)))).toBeDefined();
    } finally {
      payouts.stop();
      await payouts.idle();
      refunds.stop();
      await refunds.idle();
      await db.close();
      await w.close();
    }
  }, 60_000);
});
