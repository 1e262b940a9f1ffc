/**
 * Reconciliation of ambiguous USDC settlements from Base, against anvil (chain 8453)
 * holding a hand-assembled EIP-3009 stand-in at the Base USDC address (test/helpers/anvil.ts:
 * real `authorizationState` answers and real `AuthorizationUsed` logs in real transactions), the
 * test facilitator settling on that chain, a real LevelDB ledger, and the reconciler reading the
 * chain over JSON-RPC through the outbound client, as the node does:
 *   (a) /settle hangs after submitting the transfer → the retry gets result + receipt (real tx);
 *   (b) /settle hangs and never submits → expired_unsettled once a block passes validBefore;
 *   (c) /settle answers success:false after submitting → the retry gets result + receipt;
 *   a restart mid-reconciliation resumes from the ledger.
 * Then as an attacker: a stranger holding the Base calldata and the request gets no stored
 * result (only the proven payer does: payment-identifier, sign-in, or a bound nonce's salt); an
 * authorization whose nonce was used on Base by another transfer is never settled; a definitive
 * /settle refusal is final, whatever Base shows later.
 */
import { afterAll, beforeAll, describe, expect, jest, test } from '@jest/globals';
import { join } from 'node:path';
import { encodeFunctionData, parseAbi, type Address, type Hex } from 'viem';
import { silentLogger } from '../../chain/types.js';
import { createOutboundClient } from '../../services/outbound/client.js';
import type { ServiceContext, ServiceDefinition } from '../../services/types.js';
import { openLedger, type SettlementLedger } from '../../x402/ledger/open.js';
import { BASE_USDC, usdcRequirements, type PaymentRequirements } from '../../x402/core/quote.js';
import { createFacilitator } from '../../x402/usdc/facilitator.js';
import { createBaseAuthorizationChain, createUsdcReconciler, type UsdcReconciler } from '../../x402/usdc/reconcile.js';
import { authorizationId, createUsdcSettlement, type UsdcOutcome, type UsdcSettlement } from '../../x402/usdc/settle.js';
import { commitmentExtension, usdcCommitmentNonce } from '../../x402/usdc/commitment.js';
import { EIP3009_STUB_CODE, startAnvil, useAuthorization, type Anvil } from '../helpers/anvil.js';
import { startTestFacilitator, type TestFacilitator } from '../helpers/facilitator.js';
import { decodeHeader, encodeHeader, NODE_PAY_TO, otherAccount, payerAccount, paymentHeader, referenceViem, signedPayment } from '../helpers/facilitatorPayments.js';
import { stubService } from '../helpers/stubService.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';
import { listUsdcPayments } from '../../cli/usdcPaymentsCommand.js';

const describeUsdc = referenceViem.ok ? describe : describe.skip;
const USDC = BASE_USDC.asset as Address;
const PRICE_ATOMIC = '1000';
const usdcAbi = parseAbi(['function authorizationState(address, bytes32) view returns (bool)']);

let anvil: Anvil;
let f: TestFacilitator;
let dir: string;
let ledger: SettlementLedger;
let reconciler: UsdcReconciler;
let usdc: UsdcSettlement;
let runs = 0;
const echo: ServiceDefinition = stubService('native-echo', async (_ctx, input) => {
  runs++;
  return { echoed: input, run: runs };
});
const context = { log: silentLogger, now: Date.now } as unknown as Omit<ServiceContext, 'signal'>;
const outbound = createOutboundClient({ timeoutMs: 3000, connectTimeoutMs: 1000 });
const req: PaymentRequirements = usdcRequirements(echo, { resource: 'http://127.0.0.1/api/x402/native-echo', network: 'native-devnet', chainId: 1337, payTo: 'tnative1x', sellerId: '0123456789abcdef', confirmations: 1, microUsd: 500_000n, usdc: { payTo: NODE_PAY_TO } });

/** Records the reconciler reported settled (`onSettled`: a provider's call owes its payout then). */
const reconciledSettled: { id: string; status: string }[] = [];

async function open(initialDelayMs = 150): Promise<void> {
  ledger = await openLedger(join(dir, 'ledger'));
  reconciler = createUsdcReconciler(ledger, createBaseAuthorizationChain(anvil.url, outbound), { initialDelayMs, maxDelayMs: 600, onSettled: async (rec) => void reconciledSettled.push({ id: rec.id, status: rec.status }) });
  usdc = createUsdcSettlement(ledger, context, { payTo: NODE_PAY_TO, facilitator: createFacilitator({ url: f.url, verifyTimeoutMs: 2000, settleTimeoutMs: 1200, retryDelayMs: 20 }), reconciler });
  await reconciler.start();
}

async function close(): Promise<void> {
  await reconciler.stop();
  await ledger.close();
}

async function onChainUsed(authorizer: string, nonce: string): Promise<boolean> {
  const data = encodeFunctionData({ abi: usdcAbi, functionName: 'authorizationState', args: [authorizer as Address, nonce as Hex] });
  return BigInt(await anvil.rpc<Hex>('eth_call', [{ to: USDC, data }, 'latest'])) === 1n;
}

/** Polls the ledger (bounded) until the payment leaves settle_pending. */
async function until(id: string, status: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    const rec = await ledger.get(id);
    if (rec?.status === status) return;
    if (Date.now() > end) throw new Error(`payment ${id} still ${rec?.status} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const codeOf = (o: UsdcOutcome) => (o.kind === 'refused' ? o.error.code : o.kind === 'failed' ? o.body.error.code : o.kind);

const randomHex = (bytes: number) => Buffer.from(Array.from({ length: bytes }, () => Math.floor(Math.random() * 256))).toString('hex');

/**
 * A payment of 'hi' to native-echo. `proof`: how its payer proves itself on a retry — a
 * payment-identifier (default, as @x402/fetch with the extension sends), a bound nonce with its
 * salt (x402/usdc/commitment.ts), or nothing (`bare`: the official clients' default).
 */
async function pay(validBeforeIn = 60, proof: 'id' | 'bound' | 'bare' = 'id') {
  const salt = randomHex(32);
  const nonce = (proof === 'bound' ? usdcCommitmentNonce({ sellerId: ledger.sellerId, serviceId: 'native-echo', request: 'hi', salt }) : `0x${randomHex(32)}`) as Hex;
  const signed = decodeHeader<Record<string, unknown>>(await paymentHeader({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC, nonce, validBefore: Math.floor(Date.now() / 1000) + validBeforeIn }));
  // What anyone reads on Base once it is settled: the authorization and its signature.
  const calldataOnly = encodeHeader(signed);
  const extensions = proof === 'id' ? { 'payment-identifier': { info: { required: false, id: `pay_${randomHex(12)}` } } } : proof === 'bound' ? commitmentExtension(salt) : undefined;
  const header = extensions ? encodeHeader({ ...signed, extensions }) : calldataOnly;
  const id = authorizationId(payerAccount().address, nonce);
  return { header, calldataOnly, nonce, id, settle: () => usdc.settle(echo, 'hi', 'hi', header, req) };
}

beforeAll(async () => {
  if (!referenceViem.ok) return;
  anvil = await startAnvil(8453);
  await anvil.rpc('anvil_setCode', [USDC, EIP3009_STUB_CODE]);
  f = await startTestFacilitator({ submit: (auth) => useAuthorization(anvil, USDC, auth.from as Address, auth.nonce as Hex, { to: auth.to, value: auth.value }) });
  dir = await tmpDir();
  await open();
}, 120_000);

afterAll(async () => {
  await close().catch(() => undefined);
  await f?.stop();
  await anvil?.stop();
  await cleanupTmp();
});

describeUsdc('the EIP-3009 stand-in on anvil', () => {
  test('authorizationState is false until the authorization is used, then true, with an AuthorizationUsed log and its Transfer; a second use reverts', async () => {
    const nonce = `0x${'ab'.repeat(32)}` as Hex;
    const who = payerAccount().address;
    expect(await onChainUsed(who, nonce)).toBe(false);
    const tx = await useAuthorization(anvil, USDC, who, nonce, { to: NODE_PAY_TO, value: '1000' });
    expect(await onChainUsed(who, nonce)).toBe(true);
    const chain = createBaseAuthorizationChain(anvil.url, outbound);
    expect(await chain.usedIn(who, nonce, 0n)).toEqual({ txHash: tx, transfer: { from: who.toLowerCase(), to: NODE_PAY_TO.toLowerCase(), value: '1000' } });
    expect(await chain.usedIn(who, `0x${'cd'.repeat(32)}`, 0n)).toBeUndefined();
    await expect(useAuthorization(anvil, USDC, who, nonce, { to: NODE_PAY_TO, value: '1000' })).rejects.toThrow(/did not succeed/);
  });
});

describeUsdc('ambiguous settlements are reconciled from Base', () => {
  test('(a) /settle hangs after submitting: 504 settlement_pending, then the retry gets the stored result and the receipt with the real tx hash', async () => {
    f.modes.settle = 'hangAfterSubmit';
    const p = await pay();
    const before = runs;
    const first = await p.settle();
    expect({ status: first.status, code: codeOf(first) }).toEqual({ status: 504, code: 'settlement_pending' });
    const body = (first as { body: { error: { message: string }; retryAfter: number } }).body;
    expect(body.error.message).toMatch(/retry with the same payment header after \d+ s/);
    expect(body.error.message).not.toMatch(/operator/);
    expect(body.retryAfter).toBeGreaterThan(0);
    expect(runs).toBe(before + 1);
    await until(p.id, 'settled');
    for (let i = 0; i < 50 && !reconciledSettled.some((r) => r.id === p.id); i++) await new Promise((r) => setTimeout(r, 20));
    expect(reconciledSettled.filter((r) => r.id === p.id)).toEqual([{ id: p.id, status: 'settled' }]);
    const tx = f.calls.settled.find((s) => s.nonce === p.nonce)!.transaction;
    expect(tx).toMatch(/^0x[0-9a-f]{64}$/);
    const again = await p.settle();
    expect(again.kind).toBe('paid');
    if (again.kind !== 'paid') return;
    expect(again.body.result).toEqual({ echoed: 'hi', run: before + 1 });
    expect(again.body.receipt).toMatchObject({ txId: tx, caller: payerAccount().address, amountAtomic: PRICE_ATOMIC, serviceId: 'native-echo' });
    expect(again.response).toMatchObject({ success: true, transaction: tx });
    expect(runs).toBe(before + 1); // the service ran once
    const mined = await anvil.rpc<{ status: string; to: string }>('eth_getTransactionReceipt', [tx]);
    expect(mined.status).toBe('0x1');
    expect(mined.to.toLowerCase()).toBe(USDC.toLowerCase());
  }, 30_000);

  test('(c) /settle answers success:false after submitting: 502 settlement_pending, then result + receipt with the real tx hash', async () => {
    f.modes.settle = 'failAfterSubmit';
    const p = await pay(8);
    const first = await p.settle();
    expect({ status: first.status, code: codeOf(first) }).toEqual({ status: 502, code: 'settlement_pending' });
    // While pending, a retry says so (and when to come back), not "in progress" forever.
    const early = await p.settle();
    if ((await ledger.get(p.id))?.status === 'settle_pending') {
      expect({ status: early.status, code: codeOf(early) }).toEqual({ status: 409, code: 'settlement_pending' });
      expect(early.kind === 'refused' && early.error.message).toMatch(/retry with the same payment header after \d+ s/);
    }
    await until(p.id, 'settled');
    const tx = f.calls.settled.find((s) => s.nonce === p.nonce)!.transaction;
    const again = await p.settle();
    expect(again.kind === 'paid' && again.body.receipt.txId).toBe(tx);
    expect(again.kind === 'paid' && again.body.result).toMatchObject({ echoed: 'hi' });
    // After validBefore the same header still gets the stored answer (it was paid).
    const validBefore = Number((await ledger.get(p.id))!.reconcile!.validBefore);
    while (Date.now() / 1000 <= validBefore) await new Promise((r) => setTimeout(r, 250));
    const late = await p.settle();
    expect({ kind: late.kind, tx: late.kind === 'paid' ? late.body.receipt.txId : undefined }).toEqual({ kind: 'paid', tx });
  }, 30_000);

  test('(b) /settle hangs and never submits: expired_unsettled once a block passes validBefore; nothing charged', async () => {
    f.modes.settle = 'hang';
    const p = await pay(8);
    const first = await p.settle();
    expect({ status: first.status, code: codeOf(first) }).toEqual({ status: 504, code: 'settlement_pending' });
    const validBefore = Number((await ledger.get(p.id))!.reconcile!.validBefore);
    // Base makes a block every 2 s; anvil here mines on demand: one block after validBefore.
    while (Date.now() / 1000 <= validBefore + 1) await new Promise((r) => setTimeout(r, 250));
    await anvil.rpc('evm_mine');
    await until(p.id, 'expired_unsettled');
    expect(await onChainUsed(payerAccount().address, p.nonce)).toBe(false);
    expect(f.calls.settled.some((s) => s.nonce === p.nonce)).toBe(false);
    const rec = (await ledger.get(p.id))!;
    expect(rec.result).toBeUndefined();
    const again = await p.settle();
    expect({ status: again.status, code: codeOf(again) }).toEqual({ status: 402, code: 'expired_unsettled' });
    expect(again.kind === 'refused' && again.error.message).toMatch(/nothing was charged/);
    expect(ledger.counts().expired_unsettled).toBeGreaterThanOrEqual(1);
  }, 40_000);

  test('a restart mid-reconciliation resumes from the ledger', async () => {
    f.modes.settle = 'hang';
    const p = await pay();
    const first = await p.settle();
    expect(codeOf(first)).toBe('settlement_pending');
    // Let the reconciler check (unused so far), then stop the node.
    await new Promise((r) => setTimeout(r, 500));
    expect((await ledger.get(p.id))!.status).toBe('settle_pending');
    // While pending, a retry says so and when to come back; the service does not run again.
    const runsBefore = runs;
    const early = await p.settle();
    expect({ status: early.status, code: codeOf(early) }).toEqual({ status: 409, code: 'settlement_pending' });
    expect(early.kind === 'refused' && early.error.message).toMatch(/retry with the same payment header after \d+ s/);
    expect(runs).toBe(runsBefore);
    await close();
    // The facilitator settles late, while the node is down.
    const tx = await useAuthorization(anvil, USDC, payerAccount().address, p.nonce, { to: NODE_PAY_TO, value: PRICE_ATOMIC });
    await open();
    expect(ledger.counts().settle_pending).toBeGreaterThanOrEqual(1);
    await until(p.id, 'settled');
    const again = await p.settle();
    expect(again.kind === 'paid' && again.body.receipt.txId).toBe(tx);
    expect(again.kind === 'paid' && again.body.result).toMatchObject({ echoed: 'hi' });
  }, 30_000);

  test('the operator lists them (native-node usdc-payments): by status, with the tx hash; not while the node holds the ledger', async () => {
    await expect(listUsdcPayments(dir)).rejects.toMatchObject({ code: 'ledger_locked' });
    await close();
    try {
      const rows = await listUsdcPayments(dir);
      const settled = rows.filter((r) => r.status === 'settled');
      expect(settled.length).toBe(3); // (a), (c), the restart
      for (const r of settled) expect(r.txId).toMatch(/^0x[0-9a-f]{64}$/);
      const expired = await listUsdcPayments(dir, 'expired_unsettled');
      expect(expired).toHaveLength(1);
      expect(expired[0]).toMatchObject({ txId: null, error: 'expired_unsettled', serviceId: 'native-echo' });
      await expect(listUsdcPayments(dir, 'bogus')).rejects.toMatchObject({ code: 'invalid_payment_status' });
      // The command itself, as an operator runs it (JSON output).
      const { main } = await import('../../cli/cli.js');
      const written: string[] = [];
      const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => (written.push(String(chunk)), true));
      let code: number;
      try {
        code = await main(['usdc-payments', '--data-dir', dir, '--status', 'settled', '--json'], { env: {}, cwd: dir });
      } finally {
        spy.mockRestore();
      }
      expect(code).toBe(0);
      const listed = JSON.parse(written.join('')) as { payments: { status: string; txId: string }[] };
      expect(listed.payments.map((r) => r.status)).toEqual(['settled', 'settled', 'settled']);
    } finally {
      await open();
    }
  });
});

describeUsdc('as an attacker: who gets a reconciled result, and which settlement counts', () => {
  const stored = (o: UsdcOutcome) => (o.kind === 'paid' ? o.body.result : undefined);

  test('a stranger holding the Base calldata and the request gets nothing; the payer signed in gets the result', async () => {
    f.modes.settle = 'hangAfterSubmit';
    const p = await pay(60, 'bare');
    expect(codeOf(await p.settle())).toBe('settlement_pending');
    await until(p.id, 'settled');
    // The stranger rebuilds the payment header from the transaction's calldata and guesses the request.
    const stranger = await usdc.settle(echo, 'hi', 'hi', p.calldataOnly, req);
    expect({ status: stranger.status, code: codeOf(stranger), result: stored(stranger) }).toEqual({ status: 409, code: 'payment_already_used', result: undefined });
    expect(stranger.kind === 'refused' && stranger.error.message).toMatch(/proven payer/);
    // Signed in as someone else: nothing either.
    const other = await usdc.settle(echo, 'hi', 'hi', p.calldataOnly, req, { provenPayer: otherAccount().address });
    expect(stored(other)).toBeUndefined();
    const payer = await usdc.settle(echo, 'hi', 'hi', p.calldataOnly, req, { provenPayer: payerAccount().address });
    expect({ kind: payer.kind, result: stored(payer) }).toEqual({ kind: 'paid', result: { echoed: 'hi', run: runs } });
  }, 30_000);

  test('a bound nonce: its salt proves the payer; the calldata alone is refused commitment_mismatch', async () => {
    f.modes.settle = 'hangAfterSubmit';
    const p = await pay(60, 'bound');
    expect(codeOf(await p.settle())).toBe('settlement_pending');
    await until(p.id, 'settled');
    const stranger = await usdc.settle(echo, 'hi', 'hi', p.calldataOnly, req);
    expect({ status: stranger.status, code: codeOf(stranger), result: stored(stranger) }).toEqual({ status: 402, code: 'commitment_mismatch', result: undefined });
    const payer = await p.settle();
    expect({ kind: payer.kind, result: stored(payer) }).toEqual({ kind: 'paid', result: { echoed: 'hi', run: runs } });
  }, 30_000);

  test('the nonce used on Base by another transfer (same payer and nonce, paying someone else) is never settled', async () => {
    f.modes.settle = 'hang';
    const p = await pay(60, 'id');
    expect(codeOf(await p.settle())).toBe('settlement_pending');
    // The payer spends the same nonce with another authorization of its own, to itself.
    await useAuthorization(anvil, USDC, payerAccount().address, p.nonce, { to: otherAccount().address, value: '1' });
    await until(p.id, 'expired_unsettled');
    const rec = (await ledger.get(p.id))!;
    expect({ result: rec.result, code: rec.error?.code }).toEqual({ result: undefined, code: 'authorization_used_elsewhere' });
    const again = await p.settle();
    expect({ status: again.status, code: codeOf(again), result: stored(again) }).toEqual({ status: 402, code: 'authorization_used_elsewhere', result: undefined });
  }, 30_000);

  test('a v2 payment whose accepted.extra names another seller (what @x402/fetch copies from that seller\'s quote) is refused wrong_seller before anything runs', async () => {
    const signed = await signedPayment({ payTo: NODE_PAY_TO, value: PRICE_ATOMIC, version: 2 });
    const accepted = signed.accepted as Record<string, unknown>;
    const header = encodeHeader({ ...signed, accepted: { ...accepted, extra: { ...(accepted.extra as object), sellerId: 'fedcba9876543210' } } });
    const before = { runs, verify: f.calls.verify };
    const out = await usdc.settle(echo, 'hi', 'hi', header, req);
    expect({ status: out.status, code: codeOf(out) }).toEqual({ status: 402, code: 'wrong_seller' });
    expect({ runs, verify: f.calls.verify }).toEqual(before);
  });

  test('a definitive /settle refusal is final: 402 with its reason, the result dropped, never settled from Base afterwards', async () => {
    for (const reason of ['duplicate_settlement', 'invalid_exact_evm_nonce_already_used']) {
      f.modes.settle = { reject: reason };
      const p = await pay(60, 'id');
      const first = await p.settle();
      expect({ status: first.status, code: codeOf(first), result: stored(first) }).toEqual({ status: 402, code: reason, result: undefined });
      expect((await ledger.get(p.id))).toMatchObject({ status: 'expired_unsettled', error: { code: reason } });
      expect((await ledger.get(p.id))!.result).toBeUndefined();
      // Base shows it used by a transfer to this payee (another seller's settlement): still nothing here.
      await useAuthorization(anvil, USDC, payerAccount().address, p.nonce, { to: NODE_PAY_TO, value: PRICE_ATOMIC });
      await new Promise((r) => setTimeout(r, 400));
      const again = await p.settle();
      expect({ status: again.status, code: codeOf(again), result: stored(again) }).toEqual({ status: 402, code: reason, result: undefined });
    }
  }, 30_000);
});
