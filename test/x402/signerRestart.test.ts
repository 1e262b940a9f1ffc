/**
 * The signer's roles start again after a stop: in a fleet, a node that loses the signer
 * lease stops its payment watcher and its USDC reconciler, and starts them again when it takes the
 * lease back (node/payments.ts). Found by test/integration/fleetRandom.test.ts: both kept a
 * `stopped` flag set, so a node holding the lease a second time judged no block (a payment it
 * would never honour stayed unrefunded) and reconciled no pending USDC settlement.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import { openChain } from '../../chain/chain.js';
import { createMempool } from '../../chain/mempool.js';
import { silentLogger } from '../../chain/types.js';
import { encodeAddress } from '../../consensus/address.js';
import { createDevnetChainParams, getDevKeyPair } from '../../consensus/devnet.js';
import { fromHex, toHex } from '../../consensus/hash.js';
import { COIN } from '../../consensus/params.js';
import { encodeTx, signTx, txId, TxType, TX_VERSION } from '../../consensus/tx.js';
import { agentInvoke } from '../../consensus/txTypes/agentInvoke.js';
import { openLedger } from '../../x402/ledger/open.js';
import { RefundManager } from '../../x402/native/refunds.js';
import { createUnhonoredPayments } from '../../x402/native/unhonored.js';
import { createUsdcReconciler, type AuthorizationChain } from '../../x402/usdc/reconcile.js';
import { requestCommitment } from '../../x402/core/wire.js';
import { testKey } from '../helpers/keys.js';
import { mineFromPool } from '../helpers/mine.js';
import { stubService } from '../helpers/stubService.js';
import { closeRefundsWorld } from '../helpers/chainRig.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';
import { CountingVerifier } from '../helpers/verifier.js';

const payee = testKey('payee');
const miner = testKey('miner');
const params = createDevnetChainParams({ genesisBits: 0x207fffff, allocations: [{ address: encodeAddress(payee.address, 'tnative'), amount: 1n * COIN }] });

afterAll(cleanupTmp);

describe('the signer roles after a stop', () => {
  test('the payment watcher started again refunds a payment it will not honour', async () => {
    const d = await tmpDir();
    const verifier = new CountingVerifier();
    const chain = await openChain({ dataDir: join(d, 'chain'), params, verifier, now: () => params.genesis.time + 1_000_000 });
    const pool = createMempool(chain, verifier, params);
    pool.start();
    const ledger = await openLedger(join(d, 'ledger'));
    const echo = stubService('native-echo', async () => 'ran');
    const catalog = { get: (id: string) => (id === echo.id ? echo : undefined), isAvailable: () => true, isHonorable: () => true };
    const refunds = new RefundManager(chain, pool, ledger, payee, params, { retryMs: 60_000 });
    const watcher = createUnhonoredPayments({ chain, ledger, catalog, payees: [{ address: payee.address, refunds }], params }, { windowMs: 60_000, checkMs: 60_000, logger: silentLogger });
    try {
      await refunds.start();
      await watcher.start();
      // The lease lost, then taken back.
      watcher.stop();
      await watcher.idle();
      await watcher.start();
      const agent = getDevKeyPair();
      const requestHash = fromHex(requestCommitment({ sellerId: ledger.sellerId, serviceId: echo.id, request: 'hi', salt: '5a'.repeat(32) }));
      const payload = agentInvoke.encodePayload({ serviceId: echo.id, payTo: payee.address, amount: 1n, requestHash });
      const tx = signTx({ version: TX_VERSION, chainId: params.chainId, type: TxType.agent_invoke, nonce: 0n, fee: 30_000n, payload, publicKey: agent.publicKey }, agent);
      await pool.add(encodeTx(tx));
      await mineFromPool(chain, pool, miner.address);
      await watcher.idle();
      await refunds.idle();
      expect(await ledger.get(toHex(txId(tx)))).toMatchObject({ status: 'refund_pending', refused: true, error: { code: 'amount_mismatch' }, refundTxId: expect.stringMatching(/^[0-9a-f]{64}$/) });
    } finally {
      watcher.stop();
      await watcher.idle();
      await closeRefundsWorld({ refunds, ledger, pool, chain });
    }
  });

  test('the USDC reconciler started again reconciles a pending settlement', async () => {
    const ledger = await openLedger(join(await tmpDir(), 'ledger'));
    const id = 'usdc:8453:0xasset:0xpayer:0x01';
    const base: AuthorizationChain = {
      read: async () => ({ used: true, blockNumber: 10n, blockTimestamp: Math.floor(Date.now() / 1000) }),
      usedIn: async () => ({ txHash: `0x${'ab'.repeat(32)}`, transfer: { from: '0xpayer', to: '0xpayee', value: '1000' } }),
    };
    const reconciler = createUsdcReconciler(ledger, base, { initialDelayMs: 10, maxDelayMs: 20 });
    try {
      await reconciler.start();
      await reconciler.stop();
      await ledger.claim({ id, rail: 'usdc', serviceId: 'native-echo', requestHash: 'h', caller: '0xPayer', amount: '1000' });
      await ledger.settlePending(id, 'the result', { authorizer: '0xpayer', nonce: '0x01', validBefore: Math.floor(Date.now() / 1000) + 60, receipt: { txId: '', payTo: '0xpayee' }, network: 'base' }, { code: 'settlement_pending', message: 'pending' });
      expect(await reconciler.start()).toBe(1);
      for (let i = 0; i < 100 && (await ledger.get(id))?.status !== 'settled'; i++) await new Promise((r) => setTimeout(r, 20));
      expect(await ledger.get(id)).toMatchObject({ status: 'settled', result: 'the result', receipt: { txId: `0x${'ab'.repeat(32)}`, reconciled: true } });
    } finally {
      await reconciler.stop();
      await ledger.close();
    }
  });
});
