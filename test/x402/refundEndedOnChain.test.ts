/**
 * A refund owed for a payment the chain already refunded — what a ledger restored from a backup
 * holds when the refund was sent after the backup (found by the randomized fleet test's restore):
 * the refund manager signs nothing for it. Before, it signed a second refund, which consensus
 * refuses; written ahead in its nonce slot, that refund held the payee's next nonce for good, and
 * every later refund and payout waited behind it, never mined.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import { openChain } from '../../chain/chain.js';
import { createMempool } from '../../chain/mempool.js';
import { encodeAddress } from '../../consensus/address.js';
import { createDevnetChainParams, getDevKeyPair } from '../../consensus/devnet.js';
import { fromHex, toHex } from '../../consensus/hash.js';
import { COIN } from '../../consensus/params.js';
import { encodeTx, signTx, TxType, TX_VERSION } from '../../consensus/tx.js';
import { createAgentInvokeTx } from '../../consensus/txBuilder.js';
import { decodeInvokeRecord, invokeKey } from '../../consensus/txTypes/agentInvoke.js';
import { refund as refundType } from '../../consensus/txTypes/refund.js';
import { openLedger } from '../../x402/ledger/open.js';
import { RefundManager } from '../../x402/native/refunds.js';
import { testKey } from '../helpers/keys.js';
import { mineFromPool } from '../helpers/mine.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';
import { CountingVerifier } from '../helpers/verifier.js';

const agent = getDevKeyPair();
const payee = testKey('refund-ended-payee');
const miner = testKey('refund-ended-miner');
const params = createDevnetChainParams({ genesisBits: 0x207fffff, allocations: [{ address: encodeAddress(payee.address, 'tnative'), amount: COIN }] });
const PRICE = 200_000n;
const failure = { code: 'service_failed', message: 'the service failed' };

afterAll(cleanupTmp);

describe('a refund the chain already has', () => {
  test('is not signed again: the next refund takes the next nonce and is mined', async () => {
    const dir = await tmpDir();
    const verifier = new CountingVerifier();
    const chain = await openChain({ dataDir: join(dir, 'chain'), params, verifier, now: () => params.genesis.time + 1_000_000 });
    const pool = createMempool(chain, verifier, params);
    pool.start();
    const ledger = await openLedger(join(dir, 'ledger'));
    const refunds = new RefundManager(chain, pool, ledger, payee, params, { retryMs: 60_000 });
    try {
      const [lost, next] = [0n, 1n].map((nonce) => createAgentInvokeTx({ key: agent, chainId: params.chainId, serviceId: 'native-echo', payTo: payee.address, amount: PRICE, requestHash: fromHex('11'.repeat(32)), nonce, includeKey: nonce === 0n }));
      for (const i of [lost!, next!]) await pool.add(i.bytes);
      await mineFromPool(chain, pool, miner.address);
      // The refund of the first, sent by the ledger that was lost: on chain, unknown to the ledger.
      const sent = encodeTx(signTx({ version: TX_VERSION, chainId: params.chainId, type: TxType.refund, nonce: 0n, fee: 100_000n, payload: refundType.encodePayload({ invokeId: fromHex(lost!.id), to: agent.address, amount: PRICE }), publicKey: payee.publicKey }, payee));
      await pool.add(sent);
      await mineFromPool(chain, pool, miner.address);
      // The restored ledger: both owed (refund_pending without a transaction), as a node without the lease records them.
      for (const i of [lost!, next!]) {
        await ledger.claim({ id: i.id, rail: 'native', serviceId: 'native-echo', requestHash: '11'.repeat(32), caller: encodeAddress(agent.address, params.hrp), amount: PRICE.toString() });
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
      expect(pool.list(100).filter((e) => toHex(e.tx.from) === toHex(payee.address))).toEqual([]);
      expect(refunds.pendingIds()).toEqual([]);
    } finally {
      refunds.stop();
      await refunds.idle();
      pool.stop();
      await ledger.close();
      await chain.close();
    }
  }, 60_000);
});
