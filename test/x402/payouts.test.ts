/**
 * Provider payouts over a real chain, mempool, ledger and LevelDB: a settled provider payment left
 * without a payout record (a crash between settlement and `owe`) is owed at start and paid once,
 * price minus the node fee; owing again or restarting pays nothing more; a refunded invoke's
 * payout is refused by consensus and cancelled.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import { Level } from 'level';
import { openChain } from '../../chain/chain.js';
import { createMempool } from '../../chain/mempool.js';
import { createDevnetChainParams, getDevKeyPair } from '../../consensus/devnet.js';
import { encodeAddress } from '../../consensus/address.js';
import { COIN } from '../../consensus/params.js';
import { sha256 } from '../../consensus/hash.js';
import { createAgentInvokeTx } from '../../consensus/txBuilder.js';
import { openLedger } from '../../x402/ledger.js';
import { PayoutManager, splitPayout } from '../../x402/payouts.js';
import { RefundManager } from '../../x402/refunds.js';
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
const directory = { payoutAddressOf: (id: string) => (id === 'echo-bot-upper' ? providerAddress : undefined) };

afterAll(cleanupTmp);

test('splitPayout keeps floor(price × bps / 10,000) for the node', () => {
  expect(splitPayout(1_000_000n, 500)).toEqual({ provider: 950_000n, fee: 50_000n });
  expect(splitPayout(19n, 500)).toEqual({ provider: 19n, fee: 0n });
  expect(splitPayout(100n, 10_000)).toEqual({ provider: 0n, fee: 100n });
});

describe('payout manager', () => {
  test('owed from the ledger at start, paid once, never again after owe or restart; a refunded invoke is cancelled', async () => {
    const dir = await tmpDir();
    const verifier = new CountingVerifier();
    const chain = await openChain({ dataDir: join(dir, 'chain'), params, verifier, now });
    const pool = createMempool(chain, verifier, params);
    pool.start();
    const ledger = await openLedger(join(dir, 'ledger'));
    const db = new Level<string, string>(join(dir, 'providers'), { keyEncoding: 'utf8', valueEncoding: 'utf8' });
    await db.open();
    let nonce = 0n;
    const invoke = () =>
      createAgentInvokeTx({ key: caller, chainId: params.chainId, serviceId: 'echo-bot-upper', payTo: payee.address, amount: 1_000_000n, requestHash: sha256(new TextEncoder().encode('hi')), nonce: nonce++, includeKey: nonce === 1n });
    const a = invoke();
    const b = invoke();
    await pool.add(a.bytes);
    await pool.add(b.bytes);
    await mineFromPool(chain, pool, miner.address);
    // Call a settled (its owe was lost in a crash); call b failed and is being refunded.
    const rec = { rail: 'native' as const, serviceId: 'echo-bot-upper', requestHash: 'x', caller: encodeAddress(caller.address, 'tnative'), amount: '1000000' };
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
    await db.close();
    await ledger.close();
    pool.stop();
    await chain.close();
  }, 60_000);
});
