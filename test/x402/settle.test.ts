/**
 * Native settlement against a real LevelDB chain, mempool and ledger: the paid flow, every
 * payment error code, 50 racing settles, a failing service refunded on-chain exactly once, and a
 * crash between the claim and the refund finished after a restart.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import { openChain, type Chain } from '../../chain/chain.js';
import { silentLogger } from '../../chain/types.js';
import { createMempool, type Mempool } from '../../chain/mempool.js';
import { createDevnetChainParams, getDevKeyPair } from '../../consensus/devnet.js';
import { encodeAddress } from '../../consensus/address.js';
import { COIN } from '../../consensus/params.js';
import { fromHex, sha256, toHex } from '../../consensus/hash.js';
import { encodeTx, signTx, txId, TxType, TX_VERSION, type Tx } from '../../consensus/tx.js';
import { agentInvoke, decodeInvokeRecord, invokeKey } from '../../consensus/txTypes/agentInvoke.js';
import { transfer } from '../../consensus/txTypes/transfer.js';
import type { HybridKeyPair } from '../../consensus/keys.js';
import { ServiceError, type ServiceContext } from '../../services/types.js';
import { openLedger, type SettlementLedger } from '../../x402/ledger/open.js';
import { RefundManager } from '../../x402/native/refunds.js';
import type { SettleOutcome } from '../../x402/core/outcome.js';
import { NativeSettlement, wakeInChunks } from '../../x402/native/settle.js';
import { requestCommitment, requestHashOf } from '../../x402/core/wire.js';
import { createReferencePriceSource } from '../../x402/core/pricing.js';
import { testKey } from '../helpers/keys.js';
import { CountingVerifier } from '../helpers/verifier.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';
import { mineFromPool } from '../helpers/mine.js';
import { stubService } from '../helpers/stubService.js';
import { closeRefundsWorld } from '../helpers/chainRig.js';

const agent = getDevKeyPair();
const payee = testKey('payee');
const stranger = testKey('stranger');
const miner = testKey('miner');
const params = createDevnetChainParams({ genesisBits: 0x207fffff, allocations: [{ address: encodeAddress(payee.address, 'tnative'), amount: 1n * COIN }] });
const now = () => params.genesis.time + 1_000_000;

afterAll(cleanupTmp);


interface Env {
  dir: string;
  chain: Chain;
  pool: Mempool;
  ledger: SettlementLedger;
  refunds: RefundManager;
  settlement: NativeSettlement;
  nonces: Map<HybridKeyPair, bigint>;
}

/** The payer's secret of the tests' payments. */
const SALT = '5a'.repeat(32);
/** A settle's proof of payment: the invoke's id and the salt its requestHash commits to. */
const pay = (txId: string, salt = SALT) => ({ txId, salt });

async function setup(dir?: string, env?: Partial<Env>, payeeKey: HybridKeyPair = payee): Promise<Env> {
  const d = dir ?? (await tmpDir());
  const verifier = new CountingVerifier();
  const chain = env?.chain ?? (await openChain({ dataDir: join(d, 'chain'), params, verifier, now }));
  const pool = env?.pool ?? createMempool(chain, verifier, params);
  if (!env?.pool) pool.start();
  const ledger = await openLedger(join(d, 'ledger'));
  const refunds = new RefundManager(chain, pool, ledger, payeeKey, params, { retryMs: 60_000 });
  const nativeUsd = createReferencePriceSource(params);
  const context: Omit<ServiceContext, 'signal'> = { chain, mempool: pool, params, now: Date.now, log: silentLogger, registry: { list: () => [], get: () => undefined }, nativeUsd, usage: ledger };
  const settlement = new NativeSettlement(chain, pool, ledger, refunds, payeeKey, params, context);
  await refunds.start();
  return { dir: d, chain, pool, ledger, refunds, settlement, nonces: env?.nonces ?? new Map() };
}


function nextNonce(e: Env, k: HybridKeyPair): bigint {
  const n = e.nonces.get(k) ?? 0n;
  e.nonces.set(k, n + 1n);
  return n;
}

/**
 * Pays `serviceId` (its price by default) committing to `request` (none = the empty string) with
 * SALT at `e`'s seller; `requestHash` replaces the commitment (`null`: none at all).
 */
async function invoke(e: Env, o: { serviceId: string; amount?: bigint; payTo?: Uint8Array; request?: string; from?: HybridKeyPair; salt?: string; requestHash?: Uint8Array | null }): Promise<Tx> {
  const from = o.from ?? agent;
  const nonce = nextNonce(e, from);
  const commitment = fromHex(requestCommitment({ sellerId: e.ledger.sellerId, serviceId: o.serviceId, request: o.request, salt: o.salt ?? SALT }));
  const requestHash = o.requestHash === null ? undefined : (o.requestHash ?? commitment);
  const payload = agentInvoke.encodePayload({ serviceId: o.serviceId, payTo: o.payTo ?? payee.address, amount: o.amount ?? 200_000n, requestHash });
  const tx = signTx({ version: TX_VERSION, chainId: params.chainId, type: TxType.agent_invoke, nonce, fee: 30_000n, payload, publicKey: nonce === 0n ? from.publicKey : undefined }, from);
  await e.pool.add(encodeTx(tx));
  return tx;
}

/** The code of a refused settlement (refusals are outcomes, not throws); undefined otherwise. */
async function codeOf(p: Promise<SettleOutcome>): Promise<string | undefined> {
  const out = await p;
  return out.kind === 'refused' ? out.error.code : undefined;
}

/** The body of a settlement that has one (paid, pending, failed). */
function bodyOf(out: SettleOutcome): unknown {
  if (out.kind === 'refused') throw new Error(`refused: ${out.error.code}`);
  return out.body;
}

describe('native settlement', () => {
  test('pays, executes once, returns the stored result to a repeated settle, refuses another request', async () => {
    const e = await setup();
    let runs = 0;
    const echo = stubService('native-echo', async (_ctx, input) => {
      runs++;
      return { echo: input };
    });
    const tx = await invoke(e, { serviceId: echo.id, request: 'hello' });
    await mineFromPool(e.chain, e.pool, miner.address);
    const id = toHex(txId(tx));
    const out = await e.settlement.settle(echo, 'hello', 'hello', pay(id), 0);
    expect(out.status).toBe(200);
    expect(bodyOf(out)).toMatchObject({ paid: true, result: { echo: 'hello' }, receipt: { serviceId: echo.id, caller: encodeAddress(agent.address, 'tnative'), amount: 0.002, amountBase: '200000', txId: id, height: 1 } });
    const again = await e.settlement.settle(echo, 'hello', 'hello', pay(id.toUpperCase()), 0);
    expect(again).toEqual(out);
    expect(runs).toBe(1);
    expect(await codeOf(e.settlement.settle(echo, 'other', 'other', pay(id), 0))).toBe('request_mismatch');
    expect(e.ledger.volume(echo.id)).toMatchObject({ calls: 1, volumeBase: 200_000n });
    await closeRefundsWorld(e);
  });

  test('every payment check answers its own code', async () => {
    const e = await setup();
    const echo = stubService('native-echo', async () => 'ok');
    const other = stubService('native-other', async () => 'ok');
    const wrongService = await invoke(e, { serviceId: other.id });
    const wrongPayee = await invoke(e, { serviceId: echo.id, payTo: stranger.address });
    const wrongAmount = await invoke(e, { serviceId: echo.id, amount: 199_999n });
    const boundToOther = await invoke(e, { serviceId: echo.id, request: 'a' });
    const plain = signTx({ version: TX_VERSION, chainId: params.chainId, type: TxType.transfer, nonce: nextNonce(e, agent), fee: 30_000n, payload: transfer.encodePayload({ to: payee.address, amount: 200_000n }) }, agent);
    await e.pool.add(encodeTx(plain));
    await mineFromPool(e.chain, e.pool, miner.address);
    const s = (tx: Tx, def = echo, request = 'b') => e.settlement.settle(def, request, request, pay(toHex(txId(tx))), 0);
    expect(await codeOf(s(wrongService))).toBe('wrong_service');
    expect(await codeOf(s(wrongPayee))).toBe('wrong_payee');
    expect(await codeOf(s(wrongAmount))).toBe('amount_mismatch');
    expect(await codeOf(s(boundToOther))).toBe('request_mismatch');
    expect(await codeOf(s(plain))).toBe('payment_not_invoke');
    expect(await codeOf(e.settlement.settle(echo, 'b', 'b', pay('ab'.repeat(32)), 0))).toBe('payment_not_found');
    expect(await codeOf(e.settlement.settle(echo, 'b', 'b', pay('not-hex'), 0))).toBe('invalid_payment');
    // In the mempool but not mined: pending, then payable once mined.
    const pending = await invoke(e, { serviceId: echo.id, request: 'b' });
    const out = await s(pending);
    expect(out.status).toBe(202);
    expect(bodyOf(out)).toMatchObject({ paid: false, status: 'payment_pending' });
    await mineFromPool(e.chain, e.pool, miner.address);
    expect((await s(pending)).status).toBe(200);
    await closeRefundsWorld(e);
  });

  test('waits for the block when asked to', async () => {
    const e = await setup();
    const echo = stubService('native-echo', async () => 'ok');
    const tx = await invoke(e, { serviceId: echo.id });
    const settled = e.settlement.settle(echo, undefined, undefined, pay(toHex(txId(tx))), 5000);
    await new Promise((r) => setTimeout(r, 100));
    await mineFromPool(e.chain, e.pool, miner.address);
    expect((await settled).status).toBe(200);
    await closeRefundsWorld(e);
  });

  test('settles waiting for their block share one tip listener and read the chain only once the block is in', async () => {
    const e = await setup();
    const echo = stubService('native-echo', async () => 'ok');
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(toHex(txId(await invoke(e, { serviceId: echo.id }))));
    const listenersBefore = e.chain.listenerCount('tip');
    const getTx = e.chain.getTx.bind(e.chain);
    let reads = 0;
    e.chain.getTx = (id) => (reads++, getTx(id));
    const settled = ids.map((id) => e.settlement.settle(echo, undefined, undefined, pay(id), 10_000));
    // Longer than two of the old 250 ms polls: payments in the mempool are not looked for in the chain.
    await new Promise((r) => setTimeout(r, 700));
    expect(reads).toBe(0);
    expect(e.chain.listenerCount('tip')).toBe(listenersBefore + 1);
    await mineFromPool(e.chain, e.pool, miner.address);
    expect((await Promise.all(settled)).map((o) => o.status)).toEqual(ids.map(() => 200));
    expect(reads).toBe(20);
    expect(e.chain.listenerCount('tip')).toBe(listenersBefore);
    await closeRefundsWorld(e);
  });

  test('settles woken by a block go oldest first, a chunk per turn of the event loop', () => {
    const order: number[] = [];
    const deferred: (() => void)[] = [];
    wakeInChunks(Array.from({ length: 150 }, (_, i) => () => order.push(i)), 64, (next) => deferred.push(next));
    expect(order).toEqual(Array.from({ length: 64 }, (_, i) => i)); // the 64 that waited longest, now
    expect(deferred).toHaveLength(1);
    deferred.shift()!();
    expect(order).toHaveLength(128);
    deferred.shift()!();
    expect(order).toEqual(Array.from({ length: 150 }, (_, i) => i));
    expect(deferred).toHaveLength(0);
  });

  test('50 concurrent settles of one payment execute the service exactly once', async () => {
    const e = await setup();
    let runs = 0;
    const slow = stubService('native-slow', async () => {
      runs++;
      await new Promise((r) => setTimeout(r, 50));
      return runs;
    });
    const tx = await invoke(e, { serviceId: slow.id });
    await mineFromPool(e.chain, e.pool, miner.address);
    const id = toHex(txId(tx));
    const results = await Promise.all(Array.from({ length: 50 }, () => e.settlement.settle(slow, undefined, undefined, pay(id), 0)));
    expect(runs).toBe(1);
    const ok = results.filter((r) => r.status === 200);
    const busy = results.filter((r) => r.kind === 'refused' && r.status === 409 && r.error.code === 'settlement_in_progress');
    expect(ok.length + busy.length).toBe(50);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    // Once finished, every retry gets the stored result.
    expect(bodyOf(await e.settlement.settle(slow, undefined, undefined, pay(id), 0))).toMatchObject({ paid: true, result: 1 });
    await closeRefundsWorld(e);
  });

  test('a failing service is refunded on-chain exactly once; the payer gets the price back, less the invoke fee', async () => {
    const e = await setup();
    const broken = stubService('native-broken', async () => {
      throw new ServiceError('upstream_down', 'the provider is down');
    });
    const before = (await e.chain.getAccount(agent.address)).balance;
    const tx = await invoke(e, { serviceId: broken.id });
    await mineFromPool(e.chain, e.pool, miner.address);
    const id = toHex(txId(tx));
    const out = await e.settlement.settle(broken, undefined, undefined, pay(id), 0);
    expect(out.status).toBe(502);
    expect(bodyOf(out)).toMatchObject({ paid: true, refunded: true, error: { code: 'upstream_down' } });
    const refundTxId = (bodyOf(out) as { refundTxId: string }).refundTxId;
    expect(e.pool.has(refundTxId)).toBe(true);
    await mineFromPool(e.chain, e.pool, miner.address);
    await e.refunds.idle();
    expect((await e.ledger.get(id))?.status).toBe('refunded');
    expect((await e.chain.getAccount(agent.address)).balance).toBe(before - tx.fee);
    const view = await e.chain.getStateView([invokeKey(txId(tx))]);
    expect(decodeInvokeRecord(view.get(invokeKey(txId(tx)))!).refunded).toBe(true);
    // A repeated settle answers the stored refund; nothing new is sent.
    const again = await e.settlement.settle(broken, undefined, undefined, pay(id), 0);
    expect(again).toEqual(out);
    expect(e.pool.count).toBe(0);
    await closeRefundsWorld(e);
  });

  test('a crash between the claim and the refund: the refund completes after the restart, exactly once', async () => {
    const e = await setup();
    const hang = stubService('native-hang', () => new Promise<never>(() => undefined));
    const tx = await invoke(e, { serviceId: hang.id });
    await mineFromPool(e.chain, e.pool, miner.address);
    const id = toHex(txId(tx));
    // Left running by the "crash"; its 3 s timeout fires after the test's checks, on closed stores.
    const abandoned = e.settlement.settle({ ...hang, timeoutMs: 3000 }, undefined, undefined, pay(id), 0).catch(() => undefined);
    // Wait until the claim is on disk, then "crash": close the ledger without a result or refund.
    for (let i = 0; i < 100 && (await e.ledger.get(id))?.status !== 'claimed'; i++) await new Promise((r) => setTimeout(r, 10));
    expect((await e.ledger.get(id))?.status).toBe('claimed');
    e.refunds.stop();
    await e.ledger.close();

    // Restart: recovery refunds the claimed payment.
    const r = await setup(e.dir, { chain: e.chain, pool: e.pool, nonces: e.nonces });
    const rec = await r.ledger.get(id);
    expect(rec?.status).toBe('refund_pending');
    expect(rec?.error?.code).toBe('node_restarted');
    expect(r.pool.has(rec!.refundTxId!)).toBe(true);
    await mineFromPool(r.chain, r.pool, miner.address);
    await r.refunds.idle();
    expect((await r.ledger.get(id))?.status).toBe('refunded');
    // Another restart sends nothing more.
    r.refunds.stop();
    await r.ledger.close();
    const again = await setup(e.dir, { chain: e.chain, pool: e.pool, nonces: e.nonces });
    expect(again.refunds.pendingIds()).toEqual([]);
    expect(again.pool.count).toBe(0);
    await closeRefundsWorld(again);
    await abandoned; // no timer outlives the test
  });

  test('request hashes (USDC rail): a missing request hashes as the empty string', () => {
    expect(requestHashOf(undefined)).toBe(requestHashOf(''));
    expect(requestHashOf('Europe/Berlin')).toBe(toHex(sha256(new TextEncoder().encode('Europe/Berlin'))));
  });

  test('the commitment: the agents\' guide example, bytes in and hash out, recomputed here from its definition', () => {
    const input = { sellerId: '0123456789abcdef', serviceId: 'native-world-clock', request: 'Europe/Berlin', salt: '00'.repeat(31) + '01' };
    const enc = new TextEncoder();
    const msg = Buffer.concat([enc.encode('native-x402/request-commitment/v1'), Buffer.from(input.sellerId, 'hex'), Buffer.from([18]), enc.encode(input.serviceId), Buffer.from([0, 0, 0, 13]), enc.encode(input.request), Buffer.from(input.salt, 'hex')]);
    const expected = input.sellerId + toHex(sha256(msg)).slice(0, 48);
    expect(requestCommitment(input)).toBe(expected);
    expect(requestCommitment(input)).toMatch(/^0123456789abcdef[0-9a-f]{48}$/); // the seller in clear, then 24 bytes of hash
    // No request and the empty request are one commitment; another salt, request, service or seller is another.
    expect(requestCommitment({ ...input, request: undefined })).toBe(requestCommitment({ ...input, request: '' }));
    for (const other of [{ salt: '00'.repeat(31) + '02' }, { request: 'Europe/Paris' }, { serviceId: 'native-weather' }, { sellerId: '0123456789abcdee' }]) {
      expect(requestCommitment({ ...input, ...other })).not.toBe(expected);
    }
  });

  test('front-running: a watcher of the mempool can neither settle a request-less payment nor read its result, nor tell whether it was settled', async () => {
    const e = await setup();
    let runs = 0;
    const clock = stubService('native-clock', async (_ctx, input) => {
      runs++;
      return { zone: input ?? 'UTC' };
    });
    const tx = await invoke(e, { serviceId: clock.id }); // no request: commits to ''
    const id = toHex(txId(tx));
    // The watcher read the invoke from the mempool and settles first, with its own request, or the payer's (guessed), without the salt or with its own.
    expect(await e.settlement.settle(clock, 'Asia/Tokyo', 'Asia/Tokyo', { txId: id }, 0)).toMatchObject({ kind: 'pending', status: 202 });
    await mineFromPool(e.chain, e.pool, miner.address);
    // What a stranger with the txId is told, now (mined, not settled) and after the payer settled: the same.
    const echo = stubService('native-echo', async () => 'never');
    const stranger = async () => {
      const answers = [];
      for (const [def, request, proof] of [
        [clock, 'Asia/Tokyo', { txId: id }],
        [clock, 'Asia/Tokyo', pay(id, 'ee'.repeat(32))],
        [clock, undefined, { txId: id }],
        [clock, undefined, pay(id, 'ee'.repeat(32))],
        [echo, 'hello', pay(id, 'ee'.repeat(32))],
      ] as const) {
        const out = await e.settlement.settle(def, request, request, proof, 0);
        answers.push(out.kind === 'refused' ? [out.status, out.error.code] : [out.status, out.kind]);
      }
      return answers;
    };
    const unsettled = await stranger();
    expect(unsettled).toEqual([[400, 'invalid_payment'], [402, 'request_mismatch'], [400, 'invalid_payment'], [402, 'request_mismatch'], [402, 'wrong_service']]);
    expect(runs).toBe(0);
    expect(await e.ledger.get(id)).toBeUndefined();
    // The payer settles and gets its result.
    const out = await e.settlement.settle(clock, undefined, undefined, pay(id), 0);
    expect(bodyOf(out)).toMatchObject({ paid: true, result: { zone: 'UTC' } });
    // The stored result goes to the payer's proof only: the right request without the salt, or with another, gets nothing.
    const refused = await e.settlement.settle(clock, undefined, undefined, { txId: id }, 0);
    expect(refused).toMatchObject({ kind: 'refused', error: { code: 'invalid_payment' } });
    expect(JSON.stringify(refused)).not.toContain('UTC');
    const wrongSalt = await e.settlement.settle(clock, undefined, undefined, pay(id, 'ee'.repeat(32)), 0);
    expect(wrongSalt).toMatchObject({ kind: 'refused', error: { code: 'request_mismatch' } });
    expect(JSON.stringify(wrongSalt)).not.toContain('UTC');
    expect(await e.settlement.settle(clock, undefined, undefined, pay(id), 0)).toEqual(out);
    expect(await stranger()).toEqual(unsettled);
    expect(runs).toBe(1);
    await closeRefundsWorld(e);
  });

  test('two ledgers, one payee: a payment quoted by one is refused by the other (wrong_seller) and served once', async () => {
    const a = await setup();
    const b = await setup(undefined, { chain: a.chain, pool: a.pool, nonces: a.nonces });
    expect(a.ledger.sellerId).not.toBe(b.ledger.sellerId);
    let runs = 0;
    const echo = stubService('native-echo', async () => ++runs);
    const tx = await invoke(a, { serviceId: echo.id, request: 'x' });
    await mineFromPool(a.chain, a.pool, miner.address);
    const id = toHex(txId(tx));
    expect(await codeOf(b.settlement.settle(echo, 'x', 'x', pay(id), 0))).toBe('wrong_seller');
    expect((await a.settlement.settle(echo, 'x', 'x', pay(id), 0)).status).toBe(200);
    expect(await codeOf(b.settlement.settle(echo, 'x', 'x', pay(id), 0))).toBe('wrong_seller');
    expect(runs).toBe(1);
    b.refunds.stop();
    await b.ledger.close();
    await closeRefundsWorld(a);
  });

  test('a refund the payee cannot cover: an honest answer, counted as stuck, sent once the payee is funded', async () => {
    const poorPayee = testKey('poor-payee'); // holds nothing but the payment itself: the refund's fee is not covered
    const e = await setup(undefined, undefined, poorPayee);
    const broken = stubService('native-broken', async () => {
      throw new ServiceError('upstream_down', 'the provider is down');
    });
    const tx = await invoke(e, { serviceId: broken.id, payTo: poorPayee.address });
    await mineFromPool(e.chain, e.pool, miner.address);
    const id = toHex(txId(tx));
    const out = await e.settlement.settle(broken, undefined, undefined, pay(id), 0);
    expect(out.status).toBe(502);
    expect(bodyOf(out)).toMatchObject({ paid: true, refunded: false, refund: 'pending', refundTxId: null, error: { code: 'upstream_down' } });
    expect((bodyOf(out) as { reason: string }).reason).toMatch(/cannot cover/);
    expect(e.refunds.stuck()).toEqual({ count: 1, amountBase: 200_000n });
    // A repeated settle says the same; nothing was refunded.
    expect(bodyOf(await e.settlement.settle(broken, undefined, undefined, pay(id), 0))).toMatchObject({ refunded: false, refund: 'pending' });
    // Fund the payee: the next block's check sends the refund, once.
    const fund = signTx({ version: TX_VERSION, chainId: params.chainId, type: TxType.transfer, nonce: nextNonce(e, agent), fee: 30_000n, payload: transfer.encodePayload({ to: poorPayee.address, amount: 1_000_000n }) }, agent);
    await e.pool.add(encodeTx(fund));
    await mineFromPool(e.chain, e.pool, miner.address);
    await e.refunds.idle();
    expect(e.refunds.stuck()).toEqual({ count: 0, amountBase: 0n });
    const rec = await e.ledger.get(id);
    expect(rec?.status).toBe('refund_pending');
    expect(e.pool.has(rec!.refundTxId!)).toBe(true);
    await mineFromPool(e.chain, e.pool, miner.address);
    await e.refunds.idle();
    expect((await e.ledger.get(id))?.status).toBe('refunded');
    expect(bodyOf(await e.settlement.settle(broken, undefined, undefined, pay(id), 0))).toMatchObject({ refunded: true, refundTxId: rec!.refundTxId });
    await closeRefundsWorld(e);
  });
});
