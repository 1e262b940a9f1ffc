/**
 * Signed receipts on the USDC rail, in-process against the test facilitator and a real LevelDB
 * ledger: a settled call's 200 and its re-settle carry byte-identical receipts; a call whose
 * node died between /settle and its ledger write is settled from Base by the reconciler, which
 * signs its receipts over the stored result, so the payer's retry gets a 200 that verifies
 * offline, pinned to the seller and the payment, like any other.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import { silentLogger } from '../../chain/types.js';
import { getDevPayeeKeyPair } from '../../consensus/devnet.js';
import { TESTNET_HRP } from '../../consensus/address.js';
import type { ServiceContext } from '../../services/types.js';
import { openLedger, type SettlementLedger } from '../../x402/ledger/open.js';
import { usdcRequirements } from '../../x402/core/quote.js';
import { createSellerIdentity, type SellerIdentity } from '../../x402/core/offers.js';
import { createReceiptIssuer } from '../../x402/core/receipts.js';
import { createFacilitator } from '../../x402/usdc/facilitator.js';
import { createUsdcReconciler, type AuthorizationChain } from '../../x402/usdc/reconcile.js';
import { authorizationId, createUsdcSettlement } from '../../x402/usdc/settle.js';
import { verifyPaidBody } from '../../sdk/receipts.js';
import { startTestFacilitator, type TestFacilitator } from '../helpers/facilitator.js';
import { decodeHeader, encodeHeader, NODE_PAY_TO, payerAccount, paymentHeader, referenceViem } from '../helpers/facilitatorPayments.js';
import { stubService } from '../helpers/stubService.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';

const describeUsdc = referenceViem.ok ? describe : describe.skip;
const BASE = 'http://127.0.0.1:8402';
const RESOURCE = `${BASE}/api/x402/native-echo`;
const issue = { baseUrl: BASE, resource: RESOURCE };
let runs = 0;
const echo = stubService('native-echo', async (_ctx, input) => ({ echoed: input, run: ++runs }));
const context = { log: silentLogger, now: Date.now } as unknown as Omit<ServiceContext, 'signal'>;
const req = usdcRequirements(echo, { resource: RESOURCE, network: 'native-devnet', chainId: 1337, payTo: 'tnative1x', sellerId: '0123456789abcdef', confirmations: 1, microUsd: 500_000n, usdc: { payTo: NODE_PAY_TO } });

let f: TestFacilitator;
beforeAll(async () => {
  if (referenceViem.ok) f = await startTestFacilitator();
});
afterAll(async () => {
  await f?.stop();
  await cleanupTmp();
});

const sellerOf = (ledger: SettlementLedger): SellerIdentity => createSellerIdentity({ payee: getDevPayeeKeyPair(), hrp: TESTNET_HRP, chainId: 1337, sellerId: ledger.sellerId, usdcPayTo: () => NODE_PAY_TO });

/** A payment header carrying a payment identifier (what proves the payer on a retry). */
async function identifiedHeader(id: string): Promise<{ header: string; paymentId: string }> {
  const header = encodeHeader({ ...decodeHeader<Record<string, unknown>>(await paymentHeader({ payTo: NODE_PAY_TO, value: req.maxAmountRequired })), extensions: { 'payment-identifier': { info: { required: false, id } } } });
  return { header, paymentId: authorizationId(payerAccount().address, (decodeHeader(header) as { payload: { authorization: { nonce: string } } }).payload.authorization.nonce) };
}

describeUsdc('USDC receipts', () => {
  test('a settled call and its re-settle carry byte-identical signed receipts, pinned to the seller and the payment', async () => {
    const ledger = await openLedger(join(await tmpDir(), 'ledger'));
    try {
      const seller = sellerOf(ledger);
      const usdc = createUsdcSettlement(ledger, context, { payTo: NODE_PAY_TO, facilitator: createFacilitator({ url: f.url, verifyTimeoutMs: 2000, settleTimeoutMs: 2000 }), receipts: createReceiptIssuer(seller) });
      const { header } = await identifiedHeader('pay_resettle_0123456789abcdef');
      const first = await usdc.settle(echo, 'hi', 'hi', header, req, { issue });
      const again = await usdc.settle(echo, 'hi', 'hi', header, req, { issue });
      expect(first).toMatchObject({ kind: 'paid', body: { receipt: { offerReceipt: { format: 'jws' }, hybridReceipt: { format: 'native-x402/hybrid-receipt/v1' } } } });
      if (first.kind !== 'paid' || again.kind !== 'paid') throw new Error('not paid');
      // The same bytes: the body as the node writes it, and the settlement header's value.
      expect(JSON.stringify(again.body)).toBe(JSON.stringify(first.body));
      expect(JSON.stringify(again.response)).toBe(JSON.stringify(first.response));
      const tx = f.calls.settled.at(-1)!.transaction;
      const v = verifyPaidBody(JSON.stringify(again.body), seller.didDocument(BASE), { baseUrl: BASE, payee: seller.payeeAddress, sellerId: ledger.sellerId, txId: tx, payer: payerAccount().address, amount: req.maxAmountRequired, resourceUrl: RESOURCE });
      expect(v).toMatchObject({ ok: true, anchored: true, unpinned: [], resultVerified: true, hybrid: { rail: 'usdc', network: 'eip155:8453', asset: req.asset } });
      expect(runs).toBe(1);
    } finally {
      await ledger.close();
    }
  });

  test('a call settled later by reconciliation from Base gets its signed receipts too', async () => {
    const ledger = await openLedger(join(await tmpDir(), 'ledger'));
    const before = runs;
    const settledBefore = f.calls.settled.length;
    // Base as the facilitator left it: the authorization used by the transaction it reported.
    const base: AuthorizationChain = {
      read: async (_who, nonce) => ({ used: f.calls.settled.some((x) => x.nonce.toLowerCase() === nonce.toLowerCase()), blockNumber: 10n, blockTimestamp: Math.floor(Date.now() / 1000) }),
      usedIn: async (_who, nonce) => {
        const s = f.calls.settled.find((x) => x.nonce.toLowerCase() === nonce.toLowerCase());
        return s && { txHash: s.transaction, transfer: { from: s.payer, to: NODE_PAY_TO, value: s.value } };
      },
    };
    const facilitator = createFacilitator({ url: f.url, verifyTimeoutMs: 2000, settleTimeoutMs: 2000 });
    const seller = sellerOf(ledger);
    const receipts = createReceiptIssuer(seller);
    // The first run dies at the ledger write that follows /settle (its receipts die with it).
    const dying = new Proxy(ledger, {
      get: (t, k) => (k === 'settleReconciled' ? () => Promise.reject(new Error('the process died here')) : (t as unknown as Record<string | symbol, unknown>)[k as string]),
    }) as SettlementLedger;
    const first = createUsdcReconciler(dying, base, { initialDelayMs: 60_000 });
    const { header, paymentId } = await identifiedHeader('pay_reconciled_0123456789ab');
    try {
      await expect(createUsdcSettlement(dying, context, { payTo: NODE_PAY_TO, facilitator, reconciler: first, receipts }).settle(echo, 'hi', 'hi', header, req, { issue })).rejects.toThrow('the process died here');
      await first.stop();
      expect(f.calls.settled).toHaveLength(settledBefore + 1);
      expect(await ledger.get(paymentId)).toMatchObject({ status: 'settle_pending', reconcile: { settling: true, issue } });

      // The restart: the reconciler settles it from Base and signs its receipts over the stored result.
      const reconciler = createUsdcReconciler(ledger, base, { initialDelayMs: 10, maxDelayMs: 20, receipts });
      const usdc = createUsdcSettlement(ledger, context, { payTo: NODE_PAY_TO, facilitator, reconciler, receipts });
      expect(await reconciler.start()).toBe(1);
      for (let i = 0; i < 100 && (await ledger.get(paymentId))?.status !== 'settled'; i++) await new Promise((r) => setTimeout(r, 20));
      const retry = await usdc.settle(echo, 'hi', 'hi', header, req, { issue });
      const tx = f.calls.settled.at(-1)!.transaction;
      expect(retry).toMatchObject({ kind: 'paid', body: { result: { echoed: 'hi', run: before + 1 }, receipt: { txId: tx, reconciled: true } } });
      if (retry.kind !== 'paid') throw new Error('not paid');
      // The settlement header carries the extension's receipt, as for a direct settle.
      expect((retry.response.extensions as Record<string, any>)['offer-receipt'].info.receipt).toEqual(retry.body.receipt.offerReceipt);
      const v = verifyPaidBody(JSON.stringify(retry.body), seller.didDocument(BASE), { payee: seller.payeeAddress, sellerId: ledger.sellerId, txId: tx, payer: payerAccount().address, amount: req.maxAmountRequired, resourceUrl: RESOURCE });
      expect(v).toMatchObject({ ok: true, anchored: true, resultVerified: true, hybrid: { rail: 'usdc', network: 'eip155:8453', txId: tx } });
      expect(runs).toBe(before + 1);
      await reconciler.stop();
    } finally {
      await first.stop();
      await ledger.close();
    }
  });
});
