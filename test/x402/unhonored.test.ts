/**
 * The payment watcher against a real LevelDB chain, mempool and ledger: every mined payment the
 * node will not honour (amount above or below the price, unknown, retired, suspended or
 * unimplemented service) is refunded on-chain exactly once and never runs, and a settle names
 * the refund; a valid payment never settled is refunded after the window (also one bound to a
 * request the caller never sends); a settle racing the window's end executes XOR refunds; the
 * watcher's work survives restarts and reorganizations; a payment for a service in its start-up
 * grace is awaited and served, and refunded once as soon as the grace ends without its agent.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import { openChain, type Chain } from '../../chain/chain.js';
import { silentLogger } from '../../chain/types.js';
import { createMempool, type Mempool } from '../../chain/mempool.js';
import { createDevnetChainParams, getDevKeyPair } from '../../consensus/devnet.js';
import { encodeAddress } from '../../consensus/address.js';
import { COIN } from '../../consensus/params.js';
import { fromHex, toHex } from '../../consensus/hash.js';
import { requestCommitment } from '../../x402/core/wire.js';
import { encodeTx, signTx, txId, TxType, TX_VERSION, type Tx } from '../../consensus/tx.js';
import { agentInvoke, decodeInvokeRecord, invokeKey } from '../../consensus/txTypes/agentInvoke.js';
import { refund as refundType } from '../../consensus/txTypes/refund.js';
import { createTransferTx } from '../../consensus/txBuilder.js';
import type { HybridKeyPair } from '../../consensus/keys.js';
import { assembleBlock, grindHeader } from '../../consensus/assemble.js';
import { blockTouchedKeys } from '../../consensus/apply.js';
import { blockHash, type Block } from '../../consensus/block.js';
import type { ServiceContext, ServiceDefinition } from '../../services/types.js';
import { LevelLedger, openLedger, type SettlementLedger } from '../../x402/ledger/open.js';
import { WITNESS_FILE } from '../../x402/ledger/witness.js';
import { RefundManager } from '../../x402/native/refunds.js';
import { NativeSettlement } from '../../x402/native/settle.js';
import type { RefusedOutcome, SettleOutcome } from '../../x402/core/outcome.js';
import { createUnhonoredPayments, GAPS_MARK, LEGACY_GAP_TOLERANCE_BLOCKS, recordLedgerRestore, type LedgerGap, type UnhonoredPayments } from '../../x402/native/unhonored.js';
import { createReferencePriceSource } from '../../x402/core/pricing.js';
import { testKey } from '../helpers/keys.js';
import { CountingVerifier } from '../helpers/verifier.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';
import { mineFromPool } from '../helpers/mine.js';
import { stubService } from '../helpers/stubService.js';

const agent = getDevKeyPair();
const payee = testKey('payee');
const miner = testKey('miner');
const params = createDevnetChainParams({ genesisBits: 0x207fffff, allocations: [{ address: encodeAddress(payee.address, 'tnative'), amount: 1n * COIN }] });
const chainNow = () => params.genesis.time + 1_000_000;
const WINDOW_MS = 60_000;
const PRICE = 200_000n;

afterAll(cleanupTmp);

/** The catalog of the tests: services by id (removing one "retires" it), some suspended. */
function createCatalog(defs: ServiceDefinition[]) {
  const byId = new Map(defs.map((d) => [d.id, d]));
  const suspended = new Set<string>();
  /** Not available but still honoured (a provider's start-up grace after a restart). */
  const graced = new Set<string>();
  const isAvailable = (def: ServiceDefinition) => typeof def.run === 'function' && !suspended.has(def.id);
  return {
    byId,
    suspended,
    graced,
    get: (id: string) => byId.get(id),
    isAvailable,
    isHonorable: (def: ServiceDefinition) => isAvailable(def) || graced.has(def.id),
  };
}

interface Env {
  dir: string;
  chain: Chain;
  pool: Mempool;
  ledger: SettlementLedger;
  refunds: RefundManager;
  watcher: UnhonoredPayments;
  settlement: NativeSettlement;
  nonces: Map<HybridKeyPair, bigint>;
  runs: Map<string, number>;
  catalog: ReturnType<typeof createCatalog>;
  clock: { t: number };
}

async function setup(o: { dir?: string; reuse?: Env; start?: boolean; legacy?: boolean } = {}): Promise<Env> {
  const d = o.dir ?? o.reuse?.dir ?? (await tmpDir());
  const verifier = new CountingVerifier();
  const chain = o.reuse?.chain ?? (await openChain({ dataDir: join(d, 'chain'), params, verifier, now: chainNow }));
  const pool = o.reuse?.pool ?? createMempool(chain, verifier, params);
  if (!o.reuse) pool.start();
  const runs = o.reuse?.runs ?? new Map<string, number>();
  const counted = (id: string, run?: ServiceDefinition['run']) =>
    stubService(id, async (ctx, input) => {
      runs.set(id, (runs.get(id) ?? 0) + 1);
      return run ? run(ctx, input) : { ok: input ?? null };
    });
  const catalog = o.reuse?.catalog ?? createCatalog([counted('native-echo'), counted('native-retired'), counted('native-suspended'), { ...counted('native-unbuilt'), run: undefined }, counted('native-slow', () => new Promise((r) => setTimeout(() => r('slow'), 30)))]);
  // Before every block time: the window runs from when the watcher saw the block.
  const clock = o.reuse?.clock ?? { t: params.genesis.time * 1000 };
  const ledger = await openLedger(join(d, 'ledger'));
  // As the node does: the ledger is compared with its witness before anything reads it.
  if (ledger instanceof LevelLedger) (await recordLedgerRestore(ledger, [join(d, WITNESS_FILE)])).witness.tip = () => chain.tip.height;
  let watcherRef: UnhonoredPayments | undefined;
  const refunds = new RefundManager(chain, pool, ledger, payee, params, { retryMs: 60_000, holdsClaim: (id) => watcherRef?.holdsClaim(id) ?? false });
  const watcher = createUnhonoredPayments({ chain, ledger, catalog, payees: [{ address: payee.address, refunds }], params, mempool: pool, legacyLedger: o.legacy }, { windowMs: WINDOW_MS, checkMs: 60_000, now: () => clock.t, logger: silentLogger });
  watcherRef = watcher;
  await watcher.load();
  const context: Omit<ServiceContext, 'signal'> = { chain, mempool: pool, params, now: Date.now, log: silentLogger, registry: { list: () => [...catalog.byId.values()], get: catalog.get }, nativeUsd: createReferencePriceSource(params), usage: ledger };
  const settlement = new NativeSettlement(chain, pool, ledger, refunds, payee, params, context, { unhonored: watcher, now: () => clock.t });
  await refunds.start();
  if (o.start !== false) await watcher.start();
  return { dir: d, chain, pool, ledger, refunds, watcher, settlement, nonces: o.reuse?.nonces ?? new Map(), runs, catalog, clock };
}

async function teardown(e: Env, closeChain = true): Promise<void> {
  e.watcher.stop();
  await e.watcher.idle();
  e.refunds.stop();
  await e.refunds.idle();
  await e.ledger.close();
  if (!closeChain) return;
  e.pool.stop();
  await e.chain.close();
}

/** The payer's secret of the tests' payments. */
const SALT = '5a'.repeat(32);

/**
 * Pays `serviceId` committing to `request` (none = the empty string) with SALT at `e`'s seller
 * (`seller` replaces it: another node's ledger); `requestHash: null` pays without a commitment.
 */
async function invoke(e: Env, o: { serviceId: string; amount?: bigint; request?: string; from?: HybridKeyPair; seller?: string; requestHash?: null }): Promise<{ tx: Tx; id: string }> {
  const from = o.from ?? agent;
  const nonce = e.nonces.get(from) ?? 0n;
  e.nonces.set(from, nonce + 1n);
  const requestHash = o.requestHash === null ? undefined : fromHex(requestCommitment({ sellerId: o.seller ?? e.ledger.sellerId, serviceId: o.serviceId, request: o.request, salt: SALT }));
  const payload = agentInvoke.encodePayload({ serviceId: o.serviceId, payTo: payee.address, amount: o.amount ?? PRICE, requestHash });
  const tx = signTx({ version: TX_VERSION, chainId: params.chainId, type: TxType.agent_invoke, nonce, fee: 30_000n, payload, publicKey: nonce === 0n ? from.publicKey : undefined }, from);
  await e.pool.add(encodeTx(tx));
  return { tx, id: toHex(txId(tx)) };
}

/** Mines the pool and lets the watcher and the refund manager handle the block. */
async function mine(e: Env): Promise<Block> {
  const b = await mineFromPool(e.chain, e.pool, miner.address);
  await e.watcher.idle();
  await e.refunds.idle();
  await e.pool.idle();
  return b;
}

/** Refund transactions naming `invokeId` in the whole best chain. */
async function refundsOnChain(chain: Chain, invokeId: string): Promise<number> {
  let n = 0;
  for (let h = 1; h <= chain.tip.height; h++) {
    const b = (await chain.getBlock(chain.getEntryByHeight(h)!.hashHex))!;
    for (const tx of b.txs) if (tx.type === TxType.refund && toHex(refundType.decodePayload(tx.payload).invokeId) === invokeId) n++;
  }
  return n;
}

async function isRefundedInState(chain: Chain, id: string): Promise<boolean> {
  const key = invokeKey(Buffer.from(id, 'hex'));
  const raw = (await chain.getStateView([key])).get(key);
  return raw !== undefined && decodeInvokeRecord(raw).refunded;
}

/** The refusal of a settle (its code, and the error's other fields as `payload`). */
async function errorOf(p: Promise<SettleOutcome | RefusedOutcome | undefined>): Promise<{ code: string; payload: Record<string, unknown> }> {
  const out = await p;
  if (out?.kind !== 'refused') throw new Error(`expected a refusal, got ${out?.kind}`);
  const { code, message: _message, ...payload } = out.error;
  return { code, payload };
}

/** A settle at the service the invoke names, or (unknown/unavailable services) the routes' check. */
function settleAt(e: Env, serviceId: string, id: string, request?: string): Promise<SettleOutcome | RefusedOutcome | undefined> {
  const def = e.catalog.get(serviceId);
  if (!def || !e.catalog.isAvailable(def)) return e.settlement.settleRefused(id, 0);
  return e.settlement.settle(def, request, request, { txId: id, salt: SALT }, 0);
}

describe('payments the node will not honour', () => {
  const cases: { name: string; serviceId: string; amount?: bigint; prepare?: (e: Env) => void; reason: string }[] = [
    { name: 'one base unit below the price', serviceId: 'native-echo', amount: PRICE - 1n, reason: 'amount_mismatch' },
    { name: 'above the price', serviceId: 'native-echo', amount: PRICE * 3n, reason: 'amount_mismatch' },
    { name: 'an unknown service', serviceId: 'native-no-such-service', reason: 'unknown_service' },
    { name: 'a service retired before the block', serviceId: 'native-retired', prepare: (e) => e.catalog.byId.delete('native-retired'), reason: 'unknown_service' },
    { name: 'a suspended service', serviceId: 'native-suspended', prepare: (e) => e.catalog.suspended.add('native-suspended'), reason: 'service_unavailable' },
    { name: 'a service that cannot run here (down)', serviceId: 'native-unbuilt', reason: 'service_unavailable' },
  ];

  test.each(cases)('$name: refunded on-chain exactly once, never run; every settle names the refund', async (c) => {
    const e = await setup();
    const before = (await e.chain.getAccount(agent.address)).balance;
    const { tx, id } = await invoke(e, { serviceId: c.serviceId, amount: c.amount, request: 'hi' });
    c.prepare?.(e);
    await mine(e);
    // The watcher refused it as soon as the block connected.
    const rec = await e.ledger.get(id);
    expect(rec).toMatchObject({ status: 'refund_pending', refused: true, error: { code: c.reason }, amount: (c.amount ?? PRICE).toString(), caller: encodeAddress(agent.address, 'tnative') });
    expect(e.pool.has(rec!.refundTxId!)).toBe(true);
    const first = await errorOf(settleAt(e, c.serviceId, id, 'hi'));
    expect(first.code).toBe('payment_refunded');
    expect(first.payload).toEqual({ txId: id, refundTxId: rec!.refundTxId, reason: c.reason });
    await mine(e);
    expect((await e.ledger.get(id))?.status).toBe('refunded');
    expect(await isRefundedInState(e.chain, id)).toBe(true);
    // The payer has everything back but the invoke's fee; the refund fee was the payee's.
    expect((await e.chain.getAccount(agent.address)).balance).toBe(before - tx.fee);
    const second = await errorOf(settleAt(e, c.serviceId, id, 'hi'));
    expect(second.code).toBe('payment_refunded');
    expect(second.payload).toEqual(first.payload);
    // A settle at another service, or with another request, gets the same answer.
    expect((await errorOf(e.settlement.settle(e.catalog.get('native-echo')!, 'other', 'other', { txId: id, salt: SALT }, 0))).payload).toEqual(first.payload);
    await mine(e);
    expect(await refundsOnChain(e.chain, id)).toBe(1);
    expect([...e.runs.values()].reduce((a, b) => a + b, 0)).toBe(0);
    expect(e.ledger.counts()).toMatchObject({ refunded: 1, refused: 1, settled: 0 });
    await teardown(e);
  });

  test('a settle that comes before the watcher refuses the payment itself; the watcher then sends nothing more', async () => {
    const e = await setup({ start: false });
    const { id } = await invoke(e, { serviceId: 'native-echo', amount: PRICE - 1n });
    await mineFromPool(e.chain, e.pool, miner.address);
    const err = await errorOf(e.settlement.settle(e.catalog.get('native-echo')!, undefined, undefined, { txId: id, salt: SALT }, 0));
    expect(err.code).toBe('payment_refunded');
    const refundTxId = (err.payload as { refundTxId: string }).refundTxId;
    expect(e.pool.has(refundTxId)).toBe(true);
    await e.watcher.start(); // scans the block the settle already handled
    await e.watcher.idle();
    expect(e.pool.count).toBe(1);
    await mine(e);
    expect(await refundsOnChain(e.chain, id)).toBe(1);
    expect(e.runs.get('native-echo') ?? 0).toBe(0);
    await teardown(e);
  });

  test('payments to another payee and plain transfers are not the watcher’s business', async () => {
    const e = await setup();
    const other = testKey('other-provider');
    const payload = agentInvoke.encodePayload({ serviceId: 'native-no-such-service', payTo: other.address, amount: 5n });
    const tx = signTx({ version: TX_VERSION, chainId: params.chainId, type: TxType.agent_invoke, nonce: 0n, fee: 30_000n, payload, publicKey: agent.publicKey }, agent);
    e.nonces.set(agent, 1n);
    await e.pool.add(encodeTx(tx));
    await mine(e);
    expect(await e.ledger.get(toHex(txId(tx)))).toBeUndefined();
    expect(e.pool.count).toBe(0);
    await teardown(e);
  });
});

describe('the refund window', () => {
  test('a valid payment never settled is refunded after the window; a settle then answers payment_refunded; one settled in time is never refunded', async () => {
    const e = await setup();
    const late = await invoke(e, { serviceId: 'native-echo', request: 'a' });
    const prompt = await invoke(e, { serviceId: 'native-echo', request: 'b' });
    await mine(e);
    expect(e.watcher.awaitingCount).toBe(2);
    expect((await e.settlement.settle(e.catalog.get('native-echo')!, 'b', 'b', { txId: prompt.id, salt: SALT }, 0)).status).toBe(200);
    e.clock.t += WINDOW_MS - 1;
    await (e.watcher as unknown as { expire(): Promise<void> }).expire();
    expect(await e.ledger.get(late.id)).toBeUndefined();
    e.clock.t += 1;
    await (e.watcher as unknown as { expire(): Promise<void> }).expire();
    await e.refunds.idle();
    const rec = await e.ledger.get(late.id);
    expect(rec).toMatchObject({ status: 'refund_pending', refused: true, error: { code: 'settle_window_expired' } });
    expect(e.watcher.awaitingCount).toBe(0);
    const err = await errorOf(e.settlement.settle(e.catalog.get('native-echo')!, 'a', 'a', { txId: late.id, salt: SALT }, 0));
    expect(err.code).toBe('payment_refunded');
    expect(err.payload).toMatchObject({ refundTxId: rec!.refundTxId, reason: 'settle_window_expired' });
    await mine(e);
    expect(await refundsOnChain(e.chain, late.id)).toBe(1);
    expect(await refundsOnChain(e.chain, prompt.id)).toBe(0);
    expect(e.runs.get('native-echo')).toBe(1);
    // The settled one still answers its stored result.
    expect((await e.settlement.settle(e.catalog.get('native-echo')!, 'b', 'b', { txId: prompt.id, salt: SALT }, 0)).status).toBe(200);
    await teardown(e);
  });

  test('a settle after the window, before the watcher noticed, refunds instead of running', async () => {
    const e = await setup();
    const { id } = await invoke(e, { serviceId: 'native-echo', request: 'a' });
    await mine(e);
    e.clock.t += WINDOW_MS + 1;
    const err = await errorOf(e.settlement.settle(e.catalog.get('native-echo')!, 'a', 'a', { txId: id, salt: SALT }, 0));
    expect(err.payload).toMatchObject({ reason: 'settle_window_expired' });
    expect(e.runs.get('native-echo') ?? 0).toBe(0);
    await teardown(e);
  });

  test('a request hash matching no request the caller sends: request_mismatch within the window, refunded after it', async () => {
    const e = await setup();
    const { id } = await invoke(e, { serviceId: 'native-echo', request: 'the request never sent' });
    await mine(e);
    expect((await errorOf(e.settlement.settle(e.catalog.get('native-echo')!, 'what is sent', 'what is sent', { txId: id, salt: SALT }, 0))).code).toBe('request_mismatch');
    e.clock.t += WINDOW_MS;
    await (e.watcher as unknown as { expire(): Promise<void> }).expire();
    await e.refunds.idle();
    const err = await errorOf(e.settlement.settle(e.catalog.get('native-echo')!, 'what is sent', 'what is sent', { txId: id, salt: SALT }, 0));
    expect(err.code).toBe('payment_refunded');
    await mine(e);
    expect(await refundsOnChain(e.chain, id)).toBe(1);
    expect(e.runs.get('native-echo') ?? 0).toBe(0);
    await teardown(e);
  });

  test('settles racing the end of the window: each payment executes XOR is refunded', async () => {
    const e = await setup();
    const slow = e.catalog.get('native-slow')!;
    const paid = [];
    for (let i = 0; i < 12; i++) paid.push(await invoke(e, { serviceId: slow.id }));
    await mine(e);
    e.clock.t += WINDOW_MS - 1;
    // Half the settles start just before the deadline, the clock passes it while they run, the watcher expires what it can.
    const settles = paid.map((p, i) =>
      (async () => {
        await new Promise((r) => setTimeout(r, i % 4));
        return e.settlement.settle(slow, undefined, undefined, { txId: p.id, salt: SALT }, 0).then((out) => (out.kind === 'paid' ? { ok: true } : { ok: false, code: out.kind === 'refused' ? out.error.code : out.kind }));
      })(),
    );
    await new Promise((r) => setTimeout(r, 2));
    e.clock.t += 1;
    await (e.watcher as unknown as { expire(): Promise<void> }).expire();
    const answers = await Promise.all(settles);
    await e.refunds.idle();
    await mine(e);
    for (const [i, p] of paid.entries()) {
      const rec = (await e.ledger.get(p.id))!;
      const refunds = await refundsOnChain(e.chain, p.id);
      if (rec.status === 'settled') {
        expect(refunds).toBe(0);
        expect(answers[i].ok).toBe(true);
      } else {
        expect(rec).toMatchObject({ status: 'refunded', refused: true });
        expect(refunds).toBe(1);
        expect(answers[i]).toMatchObject({ ok: false });
        expect(['payment_refunded', 'settlement_in_progress']).toContain((answers[i] as { code: string }).code);
      }
    }
    const settled = (await Promise.all(paid.map((p) => e.ledger.get(p.id)))).filter((r) => r!.status === 'settled').length;
    expect(e.runs.get('native-slow') ?? 0).toBe(settled);
    await teardown(e);
  });
});

describe('restarts and reorganizations', () => {
  test('awaited payments survive a restart (the mark) and are refunded once; a refusal is not sent again', async () => {
    const e = await setup();
    const awaited = await invoke(e, { serviceId: 'native-echo' });
    const under = await invoke(e, { serviceId: 'native-echo', amount: 1n });
    await mine(e);
    for (let i = 0; i < 10; i++) await mine(e); // the mark stays at the awaited payment's block
    await teardown(e, false);

    const r = await setup({ reuse: e });
    expect(r.watcher.awaitingCount).toBe(1);
    r.clock.t += WINDOW_MS;
    await (r.watcher as unknown as { expire(): Promise<void> }).expire();
    await r.refunds.idle();
    expect(await r.ledger.get(awaited.id)).toMatchObject({ refused: true, error: { code: 'settle_window_expired' } });
    await mine(r);
    await teardown(r, false);

    const again = await setup({ reuse: e });
    expect(again.watcher.awaitingCount).toBe(0);
    expect(again.refunds.pendingIds()).toEqual([]);
    expect(again.pool.count).toBe(0);
    expect(await refundsOnChain(again.chain, awaited.id)).toBe(1);
    expect(await refundsOnChain(again.chain, under.id)).toBe(1);
    await teardown(again);
  });

  test('start-up grace: a payment for a service not available but honoured is awaited, not refunded, and served when settled; once the grace ends without the agent the next check refunds the other one, once', async () => {
    const e = await setup();
    e.catalog.suspended.add('native-echo');
    e.catalog.graced.add('native-echo');
    const served = await invoke(e, { serviceId: 'native-echo', request: 'a' });
    const abandoned = await invoke(e, { serviceId: 'native-echo', request: 'b' });
    await mine(e);
    expect([await e.ledger.get(served.id), await e.ledger.get(abandoned.id), e.watcher.awaitingCount]).toEqual([undefined, undefined, 2]);
    const out = await e.settlement.settle(e.catalog.get('native-echo')!, 'a', 'a', { txId: served.id, salt: SALT }, 0);
    expect(out).toMatchObject({ kind: 'paid', body: { result: { ok: 'a' } } });
    // The grace ends without the agent polling: refunded at the next check, not after the window.
    e.catalog.graced.delete('native-echo');
    await (e.watcher as unknown as { expire(): Promise<void> }).expire();
    await e.refunds.idle();
    expect(await e.ledger.get(abandoned.id)).toMatchObject({ refused: true, error: { code: 'service_unavailable' } });
    expect(e.watcher.awaitingCount).toBe(0);
    await mine(e);
    expect(await refundsOnChain(e.chain, abandoned.id)).toBe(1);
    expect(await refundsOnChain(e.chain, served.id)).toBe(0);
    expect(e.runs.get('native-echo')).toBe(1);
    expect((await errorOf(settleAt(e, 'native-echo', abandoned.id, 'b'))).code).toBe('payment_refunded');
    await teardown(e);
  });

  test('a refusal whose invoke and refund are reorganized away is refunded again on the new branch, once', async () => {
    const e = await setup();
    const { id } = await invoke(e, { serviceId: 'native-echo', amount: PRICE + 1n });
    const forkParent = e.chain.tip;
    await mine(e); // invoke; refund to the mempool
    await mine(e); // refund mined
    expect(await refundsOnChain(e.chain, id)).toBe(1);
    // A heavier branch from before the invoke, with no transactions: both blocks leave the best chain.
    let parent = { hash: forkParent.hash, height: forkParent.height, time: forkParent.header.time };
    const rival = testKey('rival').address;
    for (let i = 0; i < 3; i++) {
      const state = await e.chain.getStateView(blockTouchedKeys({ coinbase: { miner: rival }, txs: [] } as unknown as Block));
      const draft = assembleBlock({ parent, medianTimePast: parent.time, now: parent.time + 1, txs: [], miner: rival, state }, params);
      const block = { ...draft, header: grindHeader(draft.header, params.powLimit)! };
      await e.chain.addBlock(block);
      parent = { hash: blockHash(block.header), height: parent.height + 1, time: block.header.time };
    }
    await e.pool.idle();
    await e.watcher.idle();
    expect(e.chain.tip.height).toBe(forkParent.height + 3);
    expect(await e.chain.getTx(id)).toBeUndefined();
    // The invoke is back in the mempool; mined again, the refund manager sends the refund again.
    expect(e.pool.has(id)).toBe(true);
    await mine(e); // the invoke again; the refund manager sends its refund again
    await mine(e);
    expect(await refundsOnChain(e.chain, id)).toBe(1);
    expect((await e.ledger.get(id))?.status).toBe('refunded');
    expect(await isRefundedInState(e.chain, id)).toBe(true);
    expect(e.runs.get('native-echo') ?? 0).toBe(0);
    await teardown(e);
  });
});

describe('served, then lost to a deep reorganization', () => {
  /** A heavier branch from `from` holding `txs` in its first block, `blocks` long. */
  async function rivalBranch(e: Env, from: { hash: Uint8Array; height: number; header: { time: number } }, txs: Tx[], blocks: number): Promise<void> {
    let parent = { hash: from.hash, height: from.height, time: from.header.time };
    const rival = testKey('rival').address;
    for (let i = 0; i < blocks; i++) {
      const body = i === 0 ? txs : [];
      const state = await e.chain.getStateView(blockTouchedKeys({ coinbase: { miner: rival }, txs: body } as unknown as Block));
      const draft = assembleBlock({ parent, medianTimePast: parent.time, now: parent.time + 1, txs: body, miner: rival, state }, params);
      const block = { ...draft, header: grindHeader(draft.header, params.powLimit)! };
      await e.chain.addBlock(block);
      parent = { hash: blockHash(block.header), height: parent.height + 1, time: block.header.time };
    }
    await e.pool.idle();
    await e.watcher.idle();
  }

  test('a served payment replaced by a conflicting transaction is logged, counted and listed once; one mined again is not', async () => {
    const e = await setup();
    const forkParent = e.chain.tip;
    // Two payments served at the same height: one will come back in the new branch, one is double-spent away.
    const kept = await invoke(e, { serviceId: 'native-echo', request: 'a' });
    const other = testKey('payer-two');
    const fund = createTransferTx({ chainId: params.chainId, nonce: e.nonces.get(agent)!, fee: 30_000n, to: other.address, amount: COIN, key: agent, includeKey: false });
    e.nonces.set(agent, e.nonces.get(agent)! + 1n);
    await e.pool.add(encodeTx(fund.tx));
    await mine(e);
    const lost = await invoke(e, { serviceId: 'native-echo', request: 'b', from: other });
    const servedAt = e.chain.tip;
    await mine(e);
    for (const [p, request] of [[kept, 'a'], [lost, 'b']] as const) expect((await settleAt(e, 'native-echo', p.id, request))?.kind).toBe('paid');
    expect(e.watcher.servedLostList().total).toBe(0);

    // The rival branch forks after the funding block and spends payer-two's nonce 0 on a transfer: the invoke can never be mined again.
    const conflict = createTransferTx({ chainId: params.chainId, nonce: 0n, fee: 30_000n, to: miner.address, amount: 1000n, key: other, includeKey: true });
    await rivalBranch(e, servedAt, [conflict.tx], 3);
    expect(e.chain.tip.height).toBe(servedAt.height + 3);
    expect(await e.chain.getTx(lost.id)).toBeUndefined();
    expect(e.pool.has(lost.id)).toBe(false);
    const list = e.watcher.servedLostList();
    expect(list.total).toBe(1);
    expect(list.recent).toEqual([expect.objectContaining({ id: lost.id, serviceId: 'native-echo', amount: PRICE.toString(), height: servedAt.height + 1 })]);
    // Kept in the ledger across a restart; no refund of either, and the stored result still answers its payer.
    await teardown(e, false);
    const again = await setup({ reuse: e });
    expect(again.watcher.servedLostList().total).toBe(1);
    expect((await settleAt(again, 'native-echo', lost.id, 'b'))?.kind).toBe('paid');
    expect(e.runs.get('native-echo')).toBe(2);
    await teardown(again);
    void forkParent;
  });

  test('a restart between the reorganization and the verdict still gives it (the payments watched are kept in the ledger)', async () => {
    const e = await setup();
    const payer = testKey('payer-restart');
    const fund = createTransferTx({ chainId: params.chainId, nonce: e.nonces.get(agent) ?? 0n, fee: 30_000n, to: payer.address, amount: COIN, key: agent, includeKey: (e.nonces.get(agent) ?? 0n) === 0n });
    e.nonces.set(agent, (e.nonces.get(agent) ?? 0n) + 1n);
    await e.pool.add(encodeTx(fund.tx));
    await mine(e);
    const forkParent = e.chain.tip;
    const p = await invoke(e, { serviceId: 'native-echo', request: 'd', from: payer });
    await mine(e);
    expect((await settleAt(e, 'native-echo', p.id, 'd'))?.kind).toBe('paid');
    // A longer branch without it: the payment goes back to the mempool, no verdict yet.
    await rivalBranch(e, forkParent, [], 3);
    expect(e.pool.has(p.id)).toBe(true);
    expect(e.watcher.servedLostList().total).toBe(0);
    await teardown(e, false);
    // The node restarts; a block taking the payer's nonce with a transfer then replaces the payment.
    const again = await setup({ reuse: e });
    const conflict = createTransferTx({ chainId: params.chainId, nonce: 0n, fee: 30_000n, to: miner.address, amount: 1000n, key: payer, includeKey: true });
    await rivalBranch(again, again.chain.tip, [conflict.tx], 1);
    expect(again.pool.has(p.id)).toBe(false);
    expect(again.watcher.servedLostList()).toMatchObject({ total: 1, recent: [expect.objectContaining({ id: p.id, height: forkParent.height + 1 })] });
    await teardown(again);
  });

  test('a reorganization that mines the served payment again counts nothing', async () => {
    const e = await setup();
    const forkParent = e.chain.tip;
    const p = await invoke(e, { serviceId: 'native-echo', request: 'c' });
    await mine(e);
    expect((await settleAt(e, 'native-echo', p.id, 'c'))?.kind).toBe('paid');
    const stored = (await e.chain.getTx(p.id))!;
    await rivalBranch(e, forkParent, [stored.tx], 3);
    expect(await e.chain.getTx(p.id)).toBeDefined();
    expect(e.watcher.servedLostList().total).toBe(0);
    await teardown(e);
  });
});

describe('commitments and sellers', () => {
  const expire = (e: Env) => (e.watcher as unknown as { expire(): Promise<void> }).expire();

  test('an invoke without a commitment is refunded as soon as its block connects (nobody can prove to be its payer)', async () => {
    const e = await setup();
    const { id } = await invoke(e, { serviceId: 'native-echo', requestHash: null });
    await mine(e);
    expect(await e.ledger.get(id)).toMatchObject({ status: 'refund_pending', refused: true, error: { code: 'missing_commitment' } });
    expect((await errorOf(settleAt(e, 'native-echo', id))).code).toBe('payment_refunded');
    await mine(e);
    expect(await refundsOnChain(e.chain, id)).toBe(1);
    expect(e.runs.get('native-echo') ?? 0).toBe(0);
    await teardown(e);
  });

  test('an invoke committed to another seller sharing the payee is left to it: never refunded here, even after the window', async () => {
    const e = await setup();
    const { id } = await invoke(e, { serviceId: 'native-echo', request: 'a', seller: 'feedfacecafebeef' });
    await mine(e);
    expect(e.watcher.awaitingCount).toBe(0);
    e.clock.t += WINDOW_MS + 1;
    await expire(e);
    await mine(e);
    expect(await e.ledger.get(id)).toBeUndefined();
    expect(await refundsOnChain(e.chain, id)).toBe(0);
    expect((await errorOf(settleAt(e, 'native-echo', id, 'a'))).code).toBe('wrong_seller');
    await teardown(e);
  });
});

describe('the ledger never judges what it has not seen', () => {
  const expire = (e: Env) => (e.watcher as unknown as { expire(): Promise<void> }).expire();
  const mineEmpty = async (e: Env, n: number) => {
    for (let i = 0; i < n; i++) await mine(e);
  };

  test('a ledger restored from a backup: served payments are neither served again nor refunded; the gap is reported until the operator chooses --refund', async () => {
    const { cp, rm } = await import('node:fs/promises');
    const { ledgerGap } = await import('../../cli/ledgerGapCommand.js');
    const e = await setup();
    const p1 = await invoke(e, { serviceId: 'native-echo', request: 'a' });
    const p2 = await invoke(e, { serviceId: 'native-echo', request: 'b' });
    await mine(e);
    // The operator's backup, taken while both payments await their settle.
    await teardown(e, false);
    const backup = join(e.dir, 'ledger-backup');
    await cp(join(e.dir, 'ledger'), backup, { recursive: true });
    const live = await setup({ reuse: e });
    for (const [p, request] of [[p1, 'a'], [p2, 'b']] as const) expect((await settleAt(live, 'native-echo', p.id, request))?.kind).toBe('paid');
    // No tolerance: one block on, the restored ledger is found behind its witness.
    await mineEmpty(live, 1);
    await teardown(live, false);
    // Restored: the ledger knows neither call.
    await rm(join(e.dir, 'ledger'), { recursive: true });
    await cp(backup, join(e.dir, 'ledger'), { recursive: true });
    const restored = await setup({ reuse: e });
    expect(restored.watcher.gapList()).toEqual([expect.objectContaining({ from: 1, to: restored.chain.tip.height, invokes: 2, amountBase: (2n * PRICE).toString(), cause: 'ledger_restored' })]);
    expect((await errorOf(settleAt(restored, 'native-echo', p1.id, 'a'))).code).toBe('payment_in_ledger_gap');
    restored.clock.t += WINDOW_MS + 1;
    await expire(restored);
    await mine(restored);
    expect(await restored.ledger.get(p1.id)).toBeUndefined();
    expect(await refundsOnChain(restored.chain, p1.id)).toBe(0);
    expect(restored.runs.get('native-echo')).toBe(2); // once each, by the live ledger
    // A payment after the gap is judged as usual.
    const p3 = await invoke(restored, { serviceId: 'native-echo', request: 'c' });
    await mine(restored);
    expect((await settleAt(restored, 'native-echo', p3.id, 'c'))?.kind).toBe('paid');
    await teardown(restored, false);
    // The operator chooses to refund the gap's payments: done at the next start, once each.
    const decided = await ledgerGap(e.dir, 'refund');
    expect(decided).toEqual([expect.objectContaining({ resolution: 'refund', invokes: 2 })]);
    const after = await setup({ reuse: e });
    expect(after.watcher.gapList()).toEqual([]);
    expect(await after.ledger.get(p1.id)).toMatchObject({ refused: true, error: { code: 'ledger_gap_refund' } });
    await mine(after);
    expect(await refundsOnChain(after.chain, p1.id)).toBe(1);
    expect(await refundsOnChain(after.chain, p2.id)).toBe(1);
    expect(await refundsOnChain(after.chain, p3.id)).toBe(0);
    expect((await errorOf(settleAt(after, 'native-echo', p1.id, 'a'))).code).toBe('payment_refunded');
    await teardown(after);
  });

  test('a ledger without a write count (as PostgreSQL) found behind the chain gets its gap, even while an older restore\'s gap is open', async () => {
    const e = await setup();
    await mine(e);
    await teardown(e, false); // the watcher's mark: the tip now
    // Blocks the ledger never judged: a payment, then more than the tolerance.
    const bare = await setup({ reuse: e, start: false });
    const p = await invoke(bare, { serviceId: 'native-echo', request: 'x' });
    await mineEmpty(bare, LEGACY_GAP_TOLERANCE_BLOCKS + 2);
    // An older restore's gap, not decided yet, ending long before the tip: it covers none of them.
    const older: LedgerGap = { from: 1, to: 1, foundAt: 0, cause: 'ledger_restored', countedTo: 1, invokes: 0, amountBase: '0' };
    await bare.ledger.putMark(GAPS_MARK, [older]);
    await teardown(bare, false);
    const legacy = await setup({ reuse: e, legacy: true });
    expect(legacy.watcher.gapList().map((g) => g.cause)).toEqual(['ledger_restored', 'ledger_behind_chain']);
    expect(legacy.watcher.gapList()[1]).toMatchObject({ to: legacy.chain.tip.height, invokes: 1 });
    expect((await errorOf(settleAt(legacy, 'native-echo', p.id, 'x'))).code).toBe('payment_in_ledger_gap');
    await teardown(legacy);
  });

  test('a claim the restored ledger holds (the lost one settled it) is neither refunded at start nor served; --refund refunds it once', async () => {
    const { cp, rm } = await import('node:fs/promises');
    const { ledgerGap } = await import('../../cli/ledgerGapCommand.js');
    const e = await setup();
    const p = await invoke(e, { serviceId: 'native-echo', request: 'd' });
    await mine(e);
    await teardown(e, false);
    // The lost ledger's life, written as the node writes it: the claim, a backup, then the result.
    const open = async () => {
      const l = (await openLedger(join(e.dir, 'ledger'))) as LevelLedger;
      (await recordLedgerRestore(l, [join(e.dir, WITNESS_FILE)])).witness.tip = () => e.chain.tip.height;
      return l;
    };
    const stored = (await e.chain.getTx(p.id))!;
    let l = await open();
    await l.claim({ id: p.id, rail: 'native', serviceId: 'native-echo', requestHash: toHex(agentInvoke.decodePayload(stored.tx.payload).requestHash!), caller: encodeAddress(agent.address, params.hrp), amount: PRICE.toString() });
    await l.close();
    const backup = join(e.dir, 'ledger-claimed');
    await cp(join(e.dir, 'ledger'), backup, { recursive: true });
    l = await open();
    await l.settle(p.id, { ok: 'd' }, { serviceId: 'native-echo' });
    await l.close();
    await rm(join(e.dir, 'ledger'), { recursive: true });
    await cp(backup, join(e.dir, 'ledger'), { recursive: true });

    const restored = await setup({ reuse: e });
    expect(restored.watcher.gapList()).toEqual([expect.objectContaining({ cause: 'ledger_restored', claimed: [p.id] })]);
    expect((await restored.ledger.get(p.id))?.status).toBe('claimed'); // not refunded as "interrupted"
    expect((await errorOf(settleAt(restored, 'native-echo', p.id, 'd'))).code).toBe('payment_in_ledger_gap');
    restored.clock.t += WINDOW_MS + 1;
    await expire(restored);
    await mine(restored);
    expect(await refundsOnChain(restored.chain, p.id)).toBe(0);
    await teardown(restored, false);
    await ledgerGap(e.dir, 'refund');
    const after = await setup({ reuse: e });
    await mine(after);
    await mine(after);
    expect(await refundsOnChain(after.chain, p.id)).toBe(1);
    expect((await after.ledger.get(p.id))?.error?.code).toBe('ledger_gap_refund');
    await teardown(after);
  });

  test('a new ledger on a chain holding payments to the payee: reported, never refunded by itself; --forget keeps them unserved and unrefunded', async () => {
    const { rm } = await import('node:fs/promises');
    const { ledgerGap } = await import('../../cli/ledgerGapCommand.js');
    const e = await setup();
    const p1 = await invoke(e, { serviceId: 'native-echo', request: 'a' });
    await mine(e);
    await teardown(e, false);
    await rm(join(e.dir, 'ledger'), { recursive: true });
    const fresh = await setup({ reuse: e });
    expect(fresh.watcher.gapList()).toEqual([expect.objectContaining({ from: 1, to: 1, invokes: 1, cause: 'new_ledger_on_old_chain' })]);
    fresh.clock.t += WINDOW_MS + 1;
    await expire(fresh);
    await mine(fresh);
    expect(await refundsOnChain(fresh.chain, p1.id)).toBe(0);
    await teardown(fresh, false);
    expect(await ledgerGap(e.dir, 'forget')).toEqual([expect.objectContaining({ resolution: 'forget' })]);
    const after = await setup({ reuse: e });
    expect(after.watcher.gapList()).toEqual([expect.objectContaining({ resolution: 'forget' })]);
    await mine(after);
    expect(await refundsOnChain(after.chain, p1.id)).toBe(0);
    expect(after.runs.get('native-echo') ?? 0).toBe(0);
    await teardown(after);
  });
});
