/**
 * A node that dies between the facilitator's /settle (the USDC moved on Base) and its ledger
 * write: found by test/integration/fleetRandom.test.ts, where such a payment's claim
 * was then recovered as `failed` — the payer charged on Base, no result. With a reconciler the
 * result is written ahead of /settle (`settle_pending`, `settling`), so the recovery finds it
 * there and the reconciler settles it from Base with that result; the payer's retry (its payment
 * identifier) gets it, the service having run once. The death is a ledger write that throws.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import { silentLogger } from '../../chain/types.js';
import type { ServiceContext } from '../../services/types.js';
import { openLedger, type SettlementLedger } from '../../x402/ledger/open.js';
import { usdcRequirements } from '../../x402/core/quote.js';
import { createFacilitator } from '../../x402/usdc/facilitator.js';
import { createUsdcReconciler, type AuthorizationChain } from '../../x402/usdc/reconcile.js';
import { authorizationId, createUsdcSettlement } from '../../x402/usdc/settle.js';
import { startTestFacilitator, type TestFacilitator } from '../helpers/facilitator.js';
import { decodeHeader, encodeHeader, NODE_PAY_TO, payerAccount, paymentHeader, referenceViem } from '../helpers/facilitatorPayments.js';
import { stubService } from '../helpers/stubService.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';

const describeUsdc = referenceViem.ok ? describe : describe.skip;
let runs = 0;
const echo = stubService('native-echo', async (_ctx, input) => ({ echoed: input, run: ++runs }));
const context = { log: silentLogger, now: Date.now } as unknown as Omit<ServiceContext, 'signal'>;
const req = usdcRequirements(echo, { resource: 'http://127.0.0.1/api/x402/native-echo', network: 'native-devnet', chainId: 1337, payTo: 'tnative1x', sellerId: '0123456789abcdef', confirmations: 1, microUsd: 500_000n, usdc: { payTo: NODE_PAY_TO } });

let f: TestFacilitator;
beforeAll(async () => {
  if (referenceViem.ok) f = await startTestFacilitator();
});
afterAll(async () => {
  await f?.stop();
  await cleanupTmp();
});

describeUsdc('a USDC settlement interrupted after /settle', () => {
  test('the result written ahead is settled from Base after the restart, and given to the payer once', async () => {
    const ledger = await openLedger(join(await tmpDir(), 'ledger'));
    // Base as the facilitator left it: the authorization used by the transaction it reported.
    const base: AuthorizationChain = {
      read: async () => ({ used: f.calls.settled.length > 0, blockNumber: 10n, blockTimestamp: Math.floor(Date.now() / 1000) }),
      usedIn: async (_who, nonce) => {
        const s = f.calls.settled.find((x) => x.nonce.toLowerCase() === nonce.toLowerCase());
        return s && { txHash: s.transaction, transfer: { from: s.payer, to: NODE_PAY_TO, value: s.value } };
      },
    };
    const facilitator = createFacilitator({ url: f.url, verifyTimeoutMs: 2000, settleTimeoutMs: 2000 });
    // The first run dies at the ledger write that follows /settle.
    const dying = new Proxy(ledger, {
      get: (t, k) => (k === 'settleReconciled' ? () => Promise.reject(new Error('the process died here')) : (t as unknown as Record<string | symbol, unknown>)[k as string]),
    }) as SettlementLedger;
    const first = createUsdcReconciler(dying, base, { initialDelayMs: 60_000 });
    const header = encodeHeader({ ...decodeHeader<Record<string, unknown>>(await paymentHeader({ payTo: NODE_PAY_TO, value: req.maxAmountRequired })), extensions: { 'payment-identifier': { info: { required: false, id: 'pay_write_ahead_0123456789' } } } });
    const id = authorizationId(payerAccount().address, (decodeHeader(header) as { payload: { authorization: { nonce: string } } }).payload.authorization.nonce);
    try {
      await expect(createUsdcSettlement(dying, context, { payTo: NODE_PAY_TO, facilitator, reconciler: first }).settle(echo, 'hi', 'hi', header, req)).rejects.toThrow('the process died here');
      await first.stop();
      expect(f.calls.settled).toHaveLength(1);
      // What the dead node left: the result, kept before the USDC moved.
      expect(await ledger.get(id)).toMatchObject({ status: 'settle_pending', result: { echoed: 'hi', run: 1 }, reconcile: { settling: true } });

      // The restart (or a fleet's lease holder): the reconciler settles it from Base; the payer's retry gets the result.
      const reconciler = createUsdcReconciler(ledger, base, { initialDelayMs: 10, maxDelayMs: 20 });
      const usdc = createUsdcSettlement(ledger, context, { payTo: NODE_PAY_TO, facilitator, reconciler });
      expect(await reconciler.start()).toBe(1);
      for (let i = 0; i < 100 && (await ledger.get(id))?.status !== 'settled'; i++) await new Promise((r) => setTimeout(r, 20));
      const retry = await usdc.settle(echo, 'hi', 'hi', header, req);
      expect(retry).toMatchObject({ kind: 'paid', body: { result: { echoed: 'hi', run: 1 }, receipt: { txId: f.calls.settled[0]!.transaction } } });
      expect(runs).toBe(1);
      expect(f.calls.settled).toHaveLength(1);
      await reconciler.stop();
    } finally {
      await first.stop();
      await ledger.close();
    }
  });
});
