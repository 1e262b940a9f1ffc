/**
 * x402/native/refunds.ts under congestion: a refund pushed out of a full mempool by transfers at 3× the
 * minimum fee rate is bumped — a replacement with the same nonce and a higher fee rate, written
 * ahead in the ledger — and is never counted as stuck (`payee_underfunded` is for a payee that
 * cannot pay); when the replaced transaction is the one mined, the record names it. Under sustained
 * congestion (floors rising past the cap block after block) bumps stop at the payee's fee cap: the
 * refund waits, never stuck, and goes once the pool has room.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import { openChain, type Chain } from '../../chain/chain.js';
import { createMempool, type Mempool } from '../../chain/mempool.js';
import { silentLogger } from '../../chain/types.js';
import { assembleBlock, grindHeader } from '../../consensus/assemble.js';
import { blockTouchedKeys } from '../../consensus/apply.js';
import type { Block } from '../../consensus/block.js';
import { encodeAddress } from '../../consensus/address.js';
import { createDevnetChainParams, getDevKeyPair } from '../../consensus/devnet.js';
import { fromHex, toHex } from '../../consensus/hash.js';
import { COIN } from '../../consensus/params.js';
import { decodeTx, encodeTx, signTx, txId, TxType, TX_VERSION, type Tx } from '../../consensus/tx.js';
import { agentInvoke } from '../../consensus/txTypes/agentInvoke.js';
import { transfer } from '../../consensus/txTypes/transfer.js';
import { ServiceError, type ServiceContext } from '../../services/types.js';
import { openLedger, type SettlementLedger } from '../../x402/ledger/open.js';
import { createReferencePriceSource } from '../../x402/core/pricing.js';
import { RefundManager } from '../../x402/native/refunds.js';
import { NativeSettlement } from '../../x402/native/settle.js';
import { requestCommitment } from '../../x402/core/wire.js';
import { testKey } from '../helpers/keys.js';
import { stubService } from '../helpers/stubService.js';
import { closeRefundsWorld } from '../helpers/chainRig.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';
import { CountingVerifier } from '../helpers/verifier.js';
import type { HybridKeyPair } from '../../consensus/keys.js';
import { MAX_FEE_RATE_MULTIPLE, payeeFeeCap } from '../../x402/native/payeeTx.js';

const agent = getDevKeyPair();
const payee = testKey('bump-payee');
const miner = testKey('bump-miner');
/** A payee holding 100,000 base units beside what it is paid: a refund at the cap fits, escalating bumps would not. */
const smallPayee = testKey('bump-small-payee');
/** A payee holding 20,000 beside what it is paid: a refund at the minimum rate (about 7,400) fits, one bid above an 8× floor does not. */
const tinyPayee = testKey('bump-tiny-payee');
/** Senders of the congestion rounds, one per round (a sender's later transactions would only replace its own). */
const flooders = [3n, 8n, 20n, 50n].map((rate, i) => ({ rate, key: testKey(`bump-flood-${i}`) }));
const params = createDevnetChainParams({
  genesisBits: 0x207fffff,
  allocations: [
    { address: encodeAddress(payee.address, 'tnative'), amount: 10n * COIN },
    { address: encodeAddress(smallPayee.address, 'tnative'), amount: 100_000n },
    { address: encodeAddress(tinyPayee.address, 'tnative'), amount: 20_000n },
    ...flooders.map((f) => ({ address: encodeAddress(f.key.address, 'tnative'), amount: 10n * COIN })),
  ],
});
const now = () => params.genesis.time + 1_000_000;
const SALT = '5a'.repeat(32);
/** A pool of about six 4.8 kB transactions. */
const POOL_BYTES = 30_000;

afterAll(cleanupTmp);

interface Env {
  payee: HybridKeyPair;
  chain: Chain;
  pool: Mempool;
  ledger: SettlementLedger;
  refunds: RefundManager;
  settlement: NativeSettlement;
}

async function setup(payeeKey: HybridKeyPair = payee): Promise<Env> {
  const d = await tmpDir();
  const verifier = new CountingVerifier();
  const chain = await openChain({ dataDir: join(d, 'chain'), params, verifier, now });
  const pool = createMempool(chain, verifier, params, { maxBytes: POOL_BYTES });
  pool.start();
  const ledger = await openLedger(join(d, 'ledger'));
  const refunds = new RefundManager(chain, pool, ledger, payeeKey, params, { retryMs: 60_000 });
  const context: Omit<ServiceContext, 'signal'> = { chain, mempool: pool, params, now: Date.now, log: silentLogger, registry: { list: () => [], get: () => undefined }, nativeUsd: createReferencePriceSource(params), usage: ledger };
  const settlement = new NativeSettlement(chain, pool, ledger, refunds, payeeKey, params, context);
  await refunds.start();
  return { payee: payeeKey, chain, pool, ledger, refunds, settlement };
}

/** Five transfers of flooder `f` at its rate (× the minimum fee rate): they fill the 30 kB pool (a sixth of the same sender would have to evict its own). */
async function floodFrom(e: Env, f: (typeof flooders)[number]): Promise<void> {
  for (let nonce = 0n; nonce < 5n; nonce++) {
    const base = { version: TX_VERSION, chainId: params.chainId, type: TxType.transfer, from: f.key.address, nonce, fee: 0n, payload: transfer.encodePayload({ to: testKey('bump-sink').address, amount: 1n }), publicKey: nonce === 0n ? f.key.publicKey : undefined };
    const size = encodeTx(signTx(base, f.key)).length + 9;
    await e.pool.add(encodeTx(signTx({ ...base, fee: BigInt(size) * f.rate * params.minFeeRate }, f.key)));
  }
}


/** Mines exactly `txs` (none: an empty block) on the tip. */
async function mine(e: Env, txs: Tx[]): Promise<void> {
  const tip = e.chain.tip;
  const keys = blockTouchedKeys({ coinbase: { miner: miner.address }, txs } as unknown as Block);
  const draft = assembleBlock({ parent: { hash: tip.hash, height: tip.height, time: tip.header.time }, medianTimePast: e.chain.medianTimePast(tip), now: tip.header.time + 3, txs, miner: miner.address, state: await e.chain.getStateView(keys) }, params);
  await e.chain.addBlock({ ...draft, header: grindHeader(draft.header, params.powLimit)! });
  await e.pool.idle();
  await e.refunds.idle();
}

let agentNonce = 0n;
const signed = (type: number, payload: Uint8Array, feeRate: bigint): Tx => {
  const nonce = agentNonce++;
  const base = { version: TX_VERSION, chainId: params.chainId, type, nonce, fee: 0n, payload, publicKey: nonce === 0n ? agent.publicKey : undefined };
  const size = encodeTx(signTx(base, agent)).length + 9;
  return signTx({ ...base, fee: BigInt(size) * feeRate }, agent);
};

/** A paid call of a failing service, settled: its refund is owed (`beforeSettle` runs once the payment is mined). Returns the invoke id. */
async function failedCall(e: Env, beforeSettle?: () => Promise<void>): Promise<string> {
  const broken = stubService('native-broken', async () => {
    throw new ServiceError('upstream_down', 'the provider is down');
  });
  const requestHash = fromHex(requestCommitment({ sellerId: e.ledger.sellerId, serviceId: broken.id, request: undefined, salt: SALT }));
  const inv = signed(TxType.agent_invoke, agentInvoke.encodePayload({ serviceId: broken.id, payTo: e.payee.address, amount: 200_000n, requestHash }), 10n * params.minFeeRate);
  await e.pool.add(encodeTx(inv));
  await mine(e, [inv]);
  await beforeSettle?.();
  const id = toHex(txId(inv));
  const out = await e.settlement.settle(broken, undefined, undefined, { txId: id, salt: SALT }, 0);
  expect(out.status).toBe(502);
  return id;
}

/** Transfers of the agent at 3× the minimum fee rate until the pool refuses one. */
async function flood(e: Env): Promise<void> {
  for (;;) {
    const t = signed(TxType.transfer, transfer.encodePayload({ to: testKey('bump-sink').address, amount: 1n }), 3n * params.minFeeRate);
    try {
      await e.pool.add(encodeTx(t));
    } catch (err) {
      expect(err).toMatchObject({ code: 'mempool_full' });
      agentNonce--;
      return;
    }
  }
}

describe('a refund in a congested mempool', () => {
  test('pushed out by 3× transfers, it is bumped with its nonce, written ahead, never counted stuck, and mined', async () => {
    const e = await setup();
    const id = await failedCall(e);
    const first = (await e.ledger.get(id))!;
    expect(e.pool.has(first.refundTxId!)).toBe(true);
    const firstTx = decodeTx(fromHex(first.refundTx!));

    // The flood evicts the refund (the lowest package) and fills the pool.
    await flood(e);
    expect(e.pool.has(first.refundTxId!)).toBe(false);
    expect(e.refunds.stuck()).toEqual({ count: 0, amountBase: 0n });

    // The next tip (an empty block): the stored refund is refused under the floor, and replaced.
    await mine(e, []);
    const bumped = (await e.ledger.get(id))!;
    expect(bumped.status).toBe('refund_pending');
    expect(bumped.refundTxId).not.toBe(first.refundTxId);
    const bumpedTx = decodeTx(fromHex(bumped.refundTx!));
    expect(bumpedTx.nonce).toBe(firstTx.nonce);
    expect(bumpedTx.payload).toEqual(firstTx.payload);
    expect(Number(bumpedTx.fee) / (bumped.refundTx!.length / 2)).toBeGreaterThan(3 * Number(params.minFeeRate));
    expect(e.pool.has(bumped.refundTxId!)).toBe(true);
    expect(e.refunds.stuck()).toEqual({ count: 0, amountBase: 0n });

    // The best fee rate of the pool: mined first.
    await mine(e, [bumpedTx]);
    expect(await e.ledger.get(id)).toMatchObject({ status: 'refunded', refundTxId: bumped.refundTxId });
    await closeRefundsWorld(e);
  }, 60_000);

  test('the replaced refund mined instead of its replacement: refunded, and the record names the one mined', async () => {
    agentNonce = 0n;
    const e = await setup();
    const id = await failedCall(e);
    const first = (await e.ledger.get(id))!;
    await flood(e);
    await mine(e, []);
    const bumped = (await e.ledger.get(id))!;
    expect(bumped.refundTxId).not.toBe(first.refundTxId);
    // A miner that still held the first one mines it.
    await mine(e, [decodeTx(fromHex(first.refundTx!))]);
    expect(await e.ledger.get(id)).toMatchObject({ status: 'refunded', refundTxId: first.refundTxId });
    expect(e.pool.has(bumped.refundTxId!)).toBe(false);
    await closeRefundsWorld(e);
  }, 60_000);

  test('sustained congestion: floors rise past the fee cap block after block; the refund bids at most the cap, waits (never stuck), and goes once there is room', async () => {
    agentNonce = 0n;
    const e = await setup(smallPayee);
    const id = await failedCall(e);
    const fees: bigint[] = [];
    const atMostCap = async () => {
      const rec = (await e.ledger.get(id))!;
      expect(rec.status).toBe('refund_pending');
      const tx = decodeTx(fromHex(rec.refundTx!));
      fees.push(tx.fee);
      // The cap: MAX_FEE_RATE_MULTIPLE times the minimum over the size bound the signer uses (its bytes plus the fee varint's slack).
      expect(tx.fee).toBeLessThanOrEqual(payeeFeeCap(rec.refundTx!.length / 2 + 9, params));
      expect(e.refunds.stuck()).toEqual({ count: 0, amountBase: 0n });
    };
    await atMostCap();
    // Four rounds, each a new sender filling the pool at a higher rate (3×, 8×, 20×, 50× the minimum), each held for 4 blocks (bumps come every 3).
    // Five transfers fill the 30 kB pool (a sixth of the same sender would have to evict its own).
    for (const f of flooders) {
      await floodFrom(e, f);
      expect(e.pool.stats!().evictionFeeRate).toBeGreaterThan(Number(f.rate) - 1);
      for (let b = 0; b < 4; b++) {
        await mine(e, []);
        await atMostCap();
      }
    }
    // Above the cap the refund is out of the pool and not bumped again: it waits at the cap.
    const waiting = (await e.ledger.get(id))!;
    expect(e.pool.has(waiting.refundTxId!)).toBe(false);
    expect(decodeTx(fromHex(waiting.refundTx!)).fee * 10n).toBeGreaterThanOrEqual(payeeFeeCap(waiting.refundTx!.length / 2 + 9, params) * 9n);
    expect(MAX_FEE_RATE_MULTIPLE).toBe(10);
    // The congestion ends (a block takes the pool): the stored refund goes at the next tip and is mined.
    await mine(e, e.pool.list().map((x) => x.tx).sort((a, b) => (a.nonce < b.nonce ? -1 : a.nonce > b.nonce ? 1 : 0)));
    const stored = (await e.ledger.get(id))!;
    expect(e.pool.has(stored.refundTxId!)).toBe(true);
    await mine(e, [decodeTx(fromHex(stored.refundTx!))]);
    expect(await e.ledger.get(id)).toMatchObject({ status: 'refunded', refundTxId: stored.refundTxId });
    expect(e.refunds.stuck()).toEqual({ count: 0, amountBase: 0n });
    await closeRefundsWorld(e);
  }, 120_000);

  test('a payee that can pay a refund at the minimum rate but not the bid a congested pool asks: the refund waits, never stuck, and goes when the pool empties', async () => {
    agentNonce = 0n;
    const e = await setup(tinyPayee);
    // The pool is full at 8× when the call fails: the refund's bid (above the floor) is more than the payee holds beside the amount.
    const f = flooders[1]!;
    const id = await failedCall(e, () => floodFrom(e, f));
    const owed = (await e.ledger.get(id))!;
    expect(owed.status).toBe('refund_pending');
    expect(e.pool.has(owed.refundTxId ?? '')).toBe(false);
    // Refused for its balance at the bid, but the payee can pay it at the minimum rate: congestion, not insolvency.
    expect(e.refunds.stuck()).toEqual({ count: 0, amountBase: 0n });
    expect(e.refunds.payeeFunds()).toMatchObject({ spendableBase: 220_000n });
    await mine(e, []);
    expect(e.refunds.stuck()).toEqual({ count: 0, amountBase: 0n });
    // The congestion ends: the refund goes at a fee the payee can pay, and is mined.
    await mine(e, e.pool.list().map((x) => x.tx).sort((a, b) => (a.nonce < b.nonce ? -1 : a.nonce > b.nonce ? 1 : 0)));
    const sent = (await e.ledger.get(id))!;
    expect(e.pool.has(sent.refundTxId!)).toBe(true);
    await mine(e, [decodeTx(fromHex(sent.refundTx!))]);
    expect(await e.ledger.get(id)).toMatchObject({ status: 'refunded' });
    await closeRefundsWorld(e);
  }, 60_000);
});
