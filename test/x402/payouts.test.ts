/**
 * Provider payouts over a real chain, mempool, ledger and LevelDB: a settled provider payment left
 * without a payout record (a crash between settlement and `owe`) is owed at start and paid once,
 * price minus the node fee; owing again or restarting pays nothing more; a refunded invoke's
 * payout is refused by consensus and cancelled. A USDC call's payout is a plain transfer of the
 * NATIVE share, written ahead: lost from the mempool it is sent again as the same bytes; its
 * nonce taken by another payee tx, a new one is signed; paid once across restarts either way.
 * Restored from a snapshot taken while it was owed (the ledger's gap mark says so), a USDC payout
 * whose transfer was mined since is found on the chain and marked paid; one still in the mempool
 * holds it until mined: one transfer either way.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import { Level } from 'level';
import { openChain } from '../../chain/chain.js';
import { createMempool } from '../../chain/mempool.js';
import { createDevnetChainParams, getDevKeyPair } from '../../consensus/devnet.js';
import { encodeAddress } from '../../consensus/address.js';
import { COIN } from '../../consensus/params.js';
import { fromHex } from '../../consensus/hash.js';
import { createAgentInvokeTx } from '../../consensus/txBuilder.js';
import { TxType } from '../../consensus/tx.js';
import { transfer } from '../../consensus/txTypes/transfer.js';
import { submitPayeeTx } from '../../x402/native/payeeTx.js';
import { openLedger } from '../../x402/ledger/open.js';
import { GAPS_MARK, type LedgerGap } from '../../x402/ledger/restore.js';
import { PayoutManager, splitPayout } from '../../x402/providers/payouts.js';
import { RefundManager } from '../../x402/native/refunds.js';
import { requestCommitment } from '../../x402/core/wire.js';
import { testKey } from '../helpers/keys.js';
import { CountingVerifier } from '../helpers/verifier.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';
import { mineFromPool } from '../helpers/mine.js';

const caller = getDevKeyPair();
const payee = testKey('payout-payee');
const provider = testKey('payout-provider');
const miner = testKey('payout-miner');
const params = createDevnetChainParams({ genesisBits: 0x207fffff, allocations: [{ address: encodeAddress(payee.address, 'tnative'), amount: 1n * COIN }] });
const now = () => params.genesis.time + 1_000_000;
const providerAddress = encodeAddress(provider.address, 'tnative');
const directory = { payoutAddressOf: (id: string) => (id === 'echo-bot-upper' ? providerAddress : undefined), priceBaseOf: () => 1_000_000n };

/** A chain, mempool, ledger and providers database in a fresh directory. */
async function openEnv() {
  const dir = await tmpDir();
  const verifier = new CountingVerifier();
  const chain = await openChain({ dataDir: join(dir, 'chain'), params, verifier, now });
  const pool = createMempool(chain, verifier, params);
  pool.start();
  const ledger = await openLedger(join(dir, 'ledger'));
  const db = new Level<string, string>(join(dir, 'providers'), { keyEncoding: 'utf8', valueEncoding: 'utf8' });
  await db.open();
  return { chain, pool, verifier, ledger, db };
}

/** Closes what `openEnv` opened (`pool`: the mempool in use now). */
async function closeEnv(e: Awaited<ReturnType<typeof openEnv>>, pool = e.pool): Promise<void> {
  await e.db.close();
  await e.ledger.close();
  pool.stop();
  await e.chain.close();
}

afterAll(cleanupTmp);

test('splitPayout keeps floor(price × bps / 10,000) for the node', () => {
  expect(splitPayout(1_000_000n, 500)).toEqual({ provider: 950_000n, fee: 50_000n });
  expect(splitPayout(19n, 500)).toEqual({ provider: 19n, fee: 0n });
  expect(splitPayout(100n, 10_000)).toEqual({ provider: 0n, fee: 100n });
});

describe('payout manager', () => {
  test('owed from the ledger at start, paid once, never again after owe or restart; a refunded invoke is cancelled', async () => {
    const env = await openEnv();
    const { chain, pool, ledger, db } = env;
    let nonce = 0n;
    // The payments commit to this ledger's seller id, the request 'hi' and a salt, as a quote's payment does.
    const commitment = requestCommitment({ sellerId: ledger.sellerId, serviceId: 'echo-bot-upper', request: 'hi', salt: '22'.repeat(32) });
    const invoke = () =>
      createAgentInvokeTx({ key: caller, chainId: params.chainId, serviceId: 'echo-bot-upper', payTo: payee.address, amount: 1_000_000n, requestHash: fromHex(commitment), nonce: nonce++, includeKey: nonce === 1n });
    const a = invoke();
    const b = invoke();
    await pool.add(a.bytes);
    await pool.add(b.bytes);
    await mineFromPool(chain, pool, miner.address);
    // Call a settled (its owe was lost in a crash); call b failed and is being refunded.
    const rec = { rail: 'native' as const, serviceId: 'echo-bot-upper', requestHash: commitment, caller: encodeAddress(caller.address, 'tnative'), amount: '1000000' };
    await ledger.claim({ ...rec, id: a.id });
    await ledger.settle(a.id, 'HI', { txId: a.id });
    await ledger.claim({ ...rec, id: b.id });
    const refunds = new RefundManager(chain, pool, ledger, payee, params, { retryMs: 60_000 });
    await refunds.start();
    await refunds.refund(b.id, { code: 'provider_timeout', message: 'no answer' });
    await mineFromPool(chain, pool, miner.address);

    const start = async () => {
      const m = new PayoutManager(db, chain, pool, ledger, payee, params, directory, { retryMs: 60_000 });
      await m.start();
      return m;
    };
    let payouts = await start();
    expect(pool.count).toBe(1);
    await mineFromPool(chain, pool, miner.address);
    await payouts.idle();
    expect((await chain.getAccount(provider.address)).balance).toBe(950_000n);
    expect(payouts.pendingIds()).toEqual([]);
    expect(payouts.paidOut('echo-bot-upper')).toBe(950_000n);
    // Owing the same call again sends nothing.
    await payouts.owe(a.id, 'echo-bot-upper', 1_000_000n);
    expect(pool.count).toBe(0);
    // The refunded call: consensus refuses its payout; the next tip cancels it.
    await payouts.owe(b.id, 'echo-bot-upper', 1_000_000n);
    expect(pool.count).toBe(0);
    await mineFromPool(chain, pool, miner.address);
    await payouts.idle();
    expect(payouts.pendingIds()).toEqual([]);
    payouts.stop();
    // A restart finds nothing to pay.
    payouts = await start();
    expect(pool.count).toBe(0);
    expect(payouts.pendingIds()).toEqual([]);
    await mineFromPool(chain, pool, miner.address);
    expect((await chain.getAccount(provider.address)).balance).toBe(950_000n);
    payouts.stop();
    refunds.stop();
    await refunds.idle();
    await closeEnv(env);
  }, 60_000);

  test('a USDC call: a transfer of the NATIVE share written ahead; re-sent as the same bytes when lost, re-signed only once its nonce was taken; paid once across restarts', async () => {
    const env = await openEnv();
    const { chain, ledger, db, verifier } = env;
    let pool = env.pool;
    const usdc = (n: number) => `usdc:8453:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913:0x19e7e376e7c213b7e7e7e46cc70a5dd086daff2a:0x${n.toString(16).padStart(64, '0')}`;
    for (const id of [usdc(1), usdc(2)]) {
      await ledger.claim({ id, rail: 'usdc', serviceId: 'echo-bot-upper', requestHash: 'x', caller: '0x19E7E376E7C213B7E7e7e46cc70A5dD086DAff2A', amount: '5000' });
      await ledger.settle(id, 'HI', { txId: `0x${'ab'.repeat(32)}` });
    }
    const start = async () => {
      const m = new PayoutManager(db, chain, pool, ledger, payee, params, directory, { retryMs: 60_000 });
      await m.start();
      return m;
    };
    // Both settled USDC calls are owed at start (no payout record yet): two transfers, stored before they left.
    let payouts = await start();
    const entry = async (id: string) => JSON.parse((await db.get(`o:${id}`))!) as { status: string; txId: string; raw: string; rail: string; amount: string };
    const first = await entry(usdc(1));
    const second = await entry(usdc(2));
    expect(first).toMatchObject({ rail: 'usdc', status: 'submitted', amount: '950000' });
    expect([pool.has(first.txId), pool.has(second.txId)]).toEqual([true, true]);
    payouts.stop();
    // A restart that lost the mempool; meanwhile the payee's next nonce went to another transaction, mined.
    pool.stop();
    pool = createMempool(chain, verifier, params);
    pool.start();
    const other = transfer.encodePayload({ to: miner.address, amount: 1n });
    const otherId = await submitPayeeTx(chain, pool, payee, params, TxType.transfer, other);
    await mineFromPool(chain, pool, miner.address);
    expect(await chain.getTx(otherId)).toBeDefined();
    // The first transfer's nonce is taken (it can never be mined): a new one. The second's is free: the same bytes again.
    payouts = await start();
    await payouts.idle();
    const firstAgain = await entry(usdc(1));
    const secondAgain = await entry(usdc(2));
    expect(firstAgain.txId).not.toBe(first.txId);
    expect(secondAgain.txId).toBe(second.txId);
    await mineFromPool(chain, pool, miner.address);
    await mineFromPool(chain, pool, miner.address);
    await payouts.idle();
    expect(payouts.pendingIds()).toEqual([]);
    expect((await chain.getAccount(provider.address)).balance).toBe(2n * 950_000n);
    // Owing again, or restarting, pays nothing more.
    await payouts.owe(usdc(1), 'echo-bot-upper', 1_000_000n, 'usdc');
    payouts.stop();
    payouts = await start();
    expect(pool.count).toBe(0);
    await mineFromPool(chain, pool, miner.address);
    expect((await chain.getAccount(provider.address)).balance).toBe(2n * 950_000n);
    expect(payouts.paidOut('echo-bot-upper')).toBe(2n * 950_000n);
    payouts.stop();
    await payouts.idle();
    await closeEnv(env, pool);
  }, 60_000);

  test('a block mining a USDC payout between the check\'s reads: not signed again, the provider is paid once', async () => {
    const env = await openEnv();
    const { chain, pool, ledger, db } = env;
    const id = `usdc:8453:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913:0x19e7e376e7c213b7e7e7e46cc70a5dd086daff2a:0x${'7'.repeat(64)}`;
    await ledger.claim({ id, rail: 'usdc', serviceId: 'echo-bot-upper', requestHash: 'x', caller: '0x19E7E376E7C213B7E7e7e46cc70A5dD086DAff2A', amount: '5000' });
    await ledger.settle(id, 'HI', { txId: `0x${'cd'.repeat(32)}` });
    const payouts = new PayoutManager(db, chain, pool, ledger, payee, params, directory, { retryMs: 100 });
    await payouts.start();
    const { txId } = JSON.parse((await db.get(`o:${id}`))!) as { txId: string };
    expect(pool.has(txId)).toBe(true);
    // The next check looks the transfer up, finds nothing, and the block mining it connects right
    // after that read (and empties the mempool of it) before the check reads anything else.
    const getTx = chain.getTx.bind(chain);
    let raced = false;
    chain.getTx = async (tx) => {
      const found = await getTx(tx);
      if (!raced && tx === txId) {
        raced = true;
        await mineFromPool(chain, pool, miner.address);
      }
      return found;
    };
    // The follower's retry timer runs the check (every 100 ms).
    for (let i = 0; i < 100 && !raced; i++) await new Promise((r) => setTimeout(r, 20));
    expect(raced).toBe(true);
    await payouts.idle();
    chain.getTx = getTx;
    for (let i = 0; i < 2; i++) await mineFromPool(chain, pool, miner.address);
    await payouts.idle();
    expect(JSON.parse((await db.get(`o:${id}`))!)).toMatchObject({ txId, status: 'paid' });
    expect((await chain.getAccount(provider.address)).balance).toBe(950_000n);
    payouts.stop();
    await payouts.idle();
    await closeEnv(env);
  }, 60_000);

  test('a USDC payout owed in a restored snapshot and paid since: found on the chain (or held while its transfer waits in the mempool), never signed again', async () => {
    const env = await openEnv();
    const { chain, pool, ledger, db } = env;
    const usdc = (n: number) => `usdc:8453:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913:0x19e7e376e7c213b7e7e7e46cc70a5dd086daff2a:0x${n.toString(16).padStart(64, 'e')}`;
    const [a, b] = [usdc(1), usdc(2)];
    const manager = () => new PayoutManager(db, chain, pool, ledger, payee, params, directory, { retryMs: 60_000 });
    const entry = async (id: string) => JSON.parse((await db.get(`o:${id}`))!) as { status: string; txId?: string; raw?: string };
    const settle = async (id: string) => {
      await ledger.claim({ id, rail: 'usdc', serviceId: 'echo-bot-upper', requestHash: 'x', caller: '0x19E7E376E7C213B7E7e7e46cc70A5dD086DAff2A', amount: '5000' });
      await ledger.settle(id, 'HI', { txId: `0x${'ef'.repeat(32)}` });
      // Owed and not sent yet (a fleet node without the lease): the snapshot is taken now.
      await manager().oweLater(id, 'echo-bot-upper', 1_000_000n, 'usdc');
      const snapshot = (await db.get(`o:${id}`))!;
      expect(JSON.parse(snapshot)).toMatchObject({ status: 'owed' });
      return snapshot;
    };
    const restore = async (id: string, snapshot: string) => {
      await db.put(`o:${id}`, snapshot);
      const gaps = (await ledger.getMark<LedgerGap[]>(GAPS_MARK)) ?? [];
      if (gaps.length === 0) await ledger.putMark(GAPS_MARK, [{ from: 1, to: chain.tip.height, foundAt: Date.now(), cause: 'ledger_restored', countedTo: 0 }]);
    };
    // A: owed at the snapshot, sent and mined after it.
    const snapA = await settle(a);
    let payouts = manager();
    await payouts.start();
    await payouts.idle();
    const sentA = (await entry(a)).txId!;
    expect(pool.has(sentA)).toBe(true);
    await mineFromPool(chain, pool, miner.address);
    await payouts.idle();
    expect(await entry(a)).toMatchObject({ status: 'paid', txId: sentA });
    payouts.stop();
    await payouts.idle();
    // The store (with the ledger) restored from the snapshot: A is owed again. The chain holds its transfer: paid, nothing signed.
    await restore(a, snapA);
    payouts = manager();
    await payouts.start();
    await payouts.idle();
    expect(pool.count).toBe(0);
    expect(await entry(a)).toMatchObject({ status: 'paid', txId: sentA });
    expect(payouts.pendingIds()).toEqual([]);
    payouts.stop();
    await payouts.idle();
    // B: owed at its snapshot, sent after it, still in the mempool when the snapshot comes back: held, not signed again.
    const snapB = await settle(b);
    payouts = manager();
    await payouts.start();
    await payouts.idle();
    const sentB = (await entry(b)).txId!;
    expect(pool.has(sentB)).toBe(true);
    payouts.stop();
    await payouts.idle();
    await restore(b, snapB);
    payouts = manager();
    await payouts.start();
    await payouts.idle();
    expect(pool.count).toBe(1);
    expect(await entry(b)).toMatchObject({ status: 'owed' });
    expect(payouts.pendingIds()).toEqual([b]);
    // Mined: the next check finds it on the chain (A's transfer, of the same amount, is named by A's record).
    await mineFromPool(chain, pool, miner.address);
    await payouts.idle();
    expect(await entry(b)).toMatchObject({ status: 'paid', txId: sentB });
    expect(payouts.pendingIds()).toEqual([]);
    await mineFromPool(chain, pool, miner.address);
    expect(pool.count).toBe(0);
    // One transfer per call.
    expect((await chain.getAccount(provider.address)).balance).toBe(2n * 950_000n);
    payouts.stop();
    await payouts.idle();
    await closeEnv(env);
  }, 60_000);
});
