/**
 * Provider payouts of a fleet, two signers on one real PostgreSQL store and one chain:
 * found by test/integration/fleetRandom.test.ts, where each node kept its own payout records —
 * a USDC call's payout was paid again by each new holder of the signer lease, and a call a node
 * without the lease served was owed by nobody until the lease moved. Now the node that served a
 * call records what it owes in the ledger's database (`oweLater`), the holder sends it
 * (`adoptOwed`), and a holder that takes over neither forgets a payout nor signs one twice: what
 * its predecessor got mined is marked paid, what it signed and lost goes again as the same bytes.
 * A signer that reloads its open payouts while a settle is owing one (a lease taken over during
 * traffic) keeps one record of it and signs one transaction. The database restored from a backup
 * taken while a USDC call's payout was owed, after its transfer was mined: the holder finds the
 * transfer on the chain and marks the payout paid instead of signing another. A node without the
 * lease that stopped between a settlement and its payout record records it at its restart.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import { Level } from 'level';
import { openChain } from '../../chain/chain.js';
import { createMempool } from '../../chain/mempool.js';
import { encodeAddress } from '../../consensus/address.js';
import { createDevnetChainParams, getDevKeyPair } from '../../consensus/devnet.js';
import { bytesEqual, fromHex, toHex } from '../../consensus/hash.js';
import { COIN } from '../../consensus/params.js';
import { encodeTx, txId, TxType } from '../../consensus/tx.js';
import { createAgentInvokeTx } from '../../consensus/txBuilder.js';
import { PgLedger } from '../../x402/ledger/pgLedger.js';
import { GAPS_MARK, type LedgerGap } from '../../x402/ledger/restore.js';
import { PayoutManager } from '../../x402/providers/payouts.js';
import { pgPayoutStore, type PayoutQuery } from '../../x402/providers/pgPayoutStore.js';
import type { PayoutStore } from '../../x402/providers/payoutStore.js';
import { requestCommitment } from '../../x402/core/wire.js';
import { testKey } from '../helpers/keys.js';
import { mineFromPool } from '../helpers/mine.js';
import { usePostgres } from '../helpers/usePostgres.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';
import { CountingVerifier } from '../helpers/verifier.js';

const caller = getDevKeyPair();
const payee = testKey('fleet-payout-payee');
const provider = testKey('fleet-payout-provider');
const miner = testKey('fleet-payout-miner');
const params = createDevnetChainParams({ genesisBits: 0x207fffff, allocations: [{ address: encodeAddress(payee.address, 'tnative'), amount: 1n * COIN }] });
const SERVICE = 'echo-bot-upper';
const SHARE = 950_000n; // 0.01 NATIVE minus the devnet's 5 % node fee
const directory = { payoutAddressOf: (id: string) => (id === SERVICE ? encodeAddress(provider.address, 'tnative') : undefined), priceBaseOf: () => 1_000_000n };

const postgres = usePostgres();
afterAll(async () => {
  await cleanupTmp();
});

/**
 * Fleet nodes on one new PostgreSQL ledger and one chain (`ids`): each its own ledger connection,
 * mempool and providers database, and a payout manager over the shared store (`store` for another).
 * `close` stops the managers and closes everything.
 */
async function fleetOf(database: string, ids: readonly string[], store?: (q: PayoutQuery) => PayoutStore) {
  const url = await postgres.server.createDatabase(database);
  const dir = await tmpDir();
  const verifier = new CountingVerifier();
  const chain = await openChain({ dataDir: join(dir, 'chain'), params, verifier, now: () => params.genesis.time + 1_000_000 });
  const nodes: { ledger: PgLedger; pool: ReturnType<typeof createMempool>; db: Level<string, string>; payouts: PayoutManager; store: PayoutStore }[] = [];
  for (const id of ids) {
    const ledger = await PgLedger.open(url, { nodeId: `n-${id}` });
    const pool = createMempool(chain, verifier, params);
    pool.start();
    const db = new Level<string, string>(join(dir, `providers-${id}`), { keyEncoding: 'utf8', valueEncoding: 'utf8' });
    const q: PayoutQuery = (t, v) => ledger.query(t, v);
    const payouts = new PayoutManager(db, chain, pool, ledger, payee, params, directory, { retryMs: 60_000, store: (store ?? pgPayoutStore)(q) });
    nodes.push({ ledger, pool, db, payouts, store: pgPayoutStore(q) });
  }
  return {
    chain,
    nodes,
    async close() {
      for (const n of nodes) n.payouts.stop();
      for (const n of nodes) await n.payouts.idle();
      for (const n of nodes) {
        n.pool.stop();
        await n.db.close();
        await n.ledger.close();
      }
      await chain.close();
    },
  };
}

describe('payouts shared by a fleet', () => {
  test('owed by the node that served the call, sent by the holder; a new holder marks paid what was mined and re-sends the same bytes of what was lost', async () => {
    // Each node its own mempool and providers database; the payout records are shared.
    const fleet = await fleetOf('fleet_payouts', ['a', 'b']);
    const { chain } = fleet;
    const [{ ledger: ledgerA, pool: poolA, payouts: a }, { ledger: ledgerB, pool: poolB, payouts: b }] = fleet.nodes;
    try {
      // Two native calls and two USDC calls of the provider's service, settled by node B.
      let nonce = 0n;
      const commitment = requestCommitment({ sellerId: ledgerA.sellerId, serviceId: SERVICE, request: 'hi', salt: '22'.repeat(32) });
      const invokes = [0, 1].map(() => createAgentInvokeTx({ key: caller, chainId: params.chainId, serviceId: SERVICE, payTo: payee.address, amount: 1_000_000n, requestHash: fromHex(commitment), nonce: nonce++, includeKey: nonce === 1n }));
      for (const i of invokes) await poolB.add(i.bytes);
      await mineFromPool(chain, poolB, miner.address);
      const usdc = [1, 2].map((n) => `usdc:8453:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913:0x19e7e376e7c213b7e7e7e46cc70a5dd086daff2a:0x${n.toString(16).padStart(64, '0')}`);
      const settle = async (id: string, rail: 'native' | 'usdc') => {
        await ledgerB.claim({ id, rail, serviceId: SERVICE, requestHash: commitment, caller: 'payer', amount: rail === 'native' ? '1000000' : '5000' });
        await ledgerB.settle(id, 'HI', { txId: id });
        await b.oweLater(id, SERVICE, 1_000_000n, rail);
      };

      // Node A holds the lease; node B served the first native and USDC calls: A sends them, and they are mined.
      await a.start();
      await settle(invokes[0]!.id, 'native');
      await settle(usdc[0]!, 'usdc');
      expect(poolA.count).toBe(0);
      await a.adoptOwed();
      expect(poolA.count).toBe(2);
      const signedByA = new Set(poolA.list(10).map((e) => e.id));
      await mineFromPool(chain, poolA, miner.address);
      // A dies before it marks them paid. The next two calls: A signs their payouts, which die with it (never relayed).
      await settle(invokes[1]!.id, 'native');
      await settle(usdc[1]!, 'usdc');
      await a.adoptOwed();
      expect(poolA.count).toBe(2);
      const lost = poolA.list(10).map((e) => e.id);
      for (const id of lost) signedByA.add(id);
      a.stop();
      await a.idle();
      poolA.stop();

      // B takes the lease: nothing is signed again; the lost payouts go out as A's very bytes.
      await b.start();
      await b.idle();
      expect(poolB.list(10).map((e) => e.id).sort()).toEqual([...lost].sort());
      await mineFromPool(chain, poolB, miner.address);
      await b.idle();
      // Another tip, a restart of B: still nothing more.
      await b.owe(usdc[0]!, SERVICE, 1_000_000n, 'usdc');
      b.stop();
      await b.start();
      await mineFromPool(chain, poolB, miner.address);
      await b.idle();
      expect(b.pendingIds()).toEqual([]);
      expect(b.paidOut(SERVICE)).toBe(4n * SHARE);

      // On chain: each call paid its provider once, by the transactions A signed.
      expect((await chain.getAccount(provider.address)).balance).toBe(4n * SHARE);
      const payeeTxs: { id: string; type: number }[] = [];
      for (let h = 1; h <= chain.tip.height; h++) {
        const block = (await chain.getBlock(chain.getEntryByHeight(h)!.hashHex))!;
        for (const tx of block.txs) if (bytesEqual(tx.from, payee.address)) payeeTxs.push({ id: toHex(txId(encodeTx(tx))), type: tx.type });
      }
      expect(payeeTxs.map((t) => t.id).sort()).toEqual([...signedByA].sort());
      expect(payeeTxs.filter((t) => t.type === TxType.provider_payout)).toHaveLength(2);
      expect(payeeTxs.filter((t) => t.type === TxType.transfer)).toHaveLength(2);
      const rows = await ledgerA.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM provider_payouts GROUP BY status`);
      expect(rows.rows).toEqual([{ status: 'paid', n: 4 }]);
    } finally {
      await fleet.close();
    }
  }, 60_000);

  test('a node without the lease stopped between a settlement and its payout record: at its restart it records the payout, the holder sends it once', async () => {
    const fleet = await fleetOf('fleet_payouts_left_out', ['a', 'b']);
    const { chain } = fleet;
    const [{ ledger: ledgerA, pool: poolA, payouts: a }, { ledger: ledgerB, payouts: b }] = fleet.nodes;
    try {
      // A holds the lease and has started; then B serves a native and a USDC call and stops before owing their payouts.
      await a.start();
      const commitment = requestCommitment({ sellerId: ledgerA.sellerId, serviceId: SERVICE, request: 'hi', salt: '33'.repeat(32) });
      const invoke = createAgentInvokeTx({ key: caller, chainId: params.chainId, serviceId: SERVICE, payTo: payee.address, amount: 1_000_000n, requestHash: fromHex(commitment), nonce: 0n, includeKey: true });
      await poolA.add(invoke.bytes);
      await mineFromPool(chain, poolA, miner.address);
      const usdcId = `usdc:8453:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913:0x19e7e376e7c213b7e7e7e46cc70a5dd086daff2a:0x${'9'.repeat(64)}`;
      for (const [id, rail] of [[invoke.id, 'native'], [usdcId, 'usdc']] as const) {
        await ledgerB.claim({ id, rail, serviceId: SERVICE, requestHash: commitment, caller: 'payer', amount: rail === 'native' ? '1000000' : '5000' });
        await ledgerB.settle(id, 'HI', { txId: id });
      }
      // A settled call of a service without a provider owes nothing.
      await ledgerB.claim({ id: 'f'.repeat(64), rail: 'native', serviceId: 'native-world-clock', requestHash: commitment, caller: 'payer', amount: '1000000' });
      await ledgerB.settle('f'.repeat(64), 'HI', { txId: 'f'.repeat(64) });
      // The holder's sweep finds nothing owed: the calls are left out.
      await a.adoptOwed();
      expect(poolA.count).toBe(0);

      // B starts again: it records what it left out (settled before its start), once however often it looks.
      expect(await b.recordLeftOut(Date.now() + 1)).toBe(2);
      expect(await b.recordLeftOut(Date.now() + 1)).toBe(0);
      await a.adoptOwed();
      await a.idle();
      expect(poolA.count).toBe(2);
      await mineFromPool(chain, poolA, miner.address);
      await a.idle();
      await a.adoptOwed();
      await mineFromPool(chain, poolA, miner.address);
      await a.idle();
      expect((await chain.getAccount(provider.address)).balance).toBe(2n * SHARE);
      expect((await chain.getAccount(payee.address)).nonce).toBe(2n);
      const rows = await ledgerA.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM provider_payouts GROUP BY status`);
      expect(rows.rows).toEqual([{ status: 'paid', n: 2 }]);
    } finally {
      await fleet.close();
    }
  }, 60_000);

  test('the signer reloads its open payouts while a settle is owing one: the provider is paid once, by one transaction', async () => {
    // The settle's record is written, then its owe pauses (as a slow write does) while the signer reloads.
    let written!: () => void;
    const wasWritten = new Promise<void>((r) => (written = r));
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const slowStore = (q: PayoutQuery): PayoutStore => {
      const store = pgPayoutStore(q);
      return {
        ...store,
        async create(e) {
          const ok = await store.create(e);
          written();
          await released;
          return ok;
        },
      };
    };
    const fleet = await fleetOf('fleet_payouts_reload', ['a'], slowStore);
    const { chain } = fleet;
    const [{ ledger, pool, payouts: manager, store }] = fleet.nodes;
    try {
      const id = `usdc:8453:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913:0x19e7e376e7c213b7e7e7e46cc70a5dd086daff2a:0x${'7'.repeat(64)}`;
      const commitment = requestCommitment({ sellerId: ledger.sellerId, serviceId: SERVICE, request: 'hi', salt: '22'.repeat(32) });
      await ledger.claim({ id, rail: 'usdc', serviceId: SERVICE, requestHash: commitment, caller: 'payer', amount: '5000' });
      await ledger.settle(id, 'HI', { txId: id });
      const owing = manager.owe(id, SERVICE, 1_000_000n, 'usdc');
      await wasWritten;
      await manager.start();
      release();
      await owing;
      await manager.idle();
      expect(pool.count).toBe(1);
      await mineFromPool(chain, pool, miner.address);
      await manager.idle();
      await mineFromPool(chain, pool, miner.address);
      await manager.idle();
      expect((await chain.getAccount(provider.address)).balance).toBe(SHARE);
      expect((await chain.getAccount(payee.address)).nonce).toBe(1n);
      expect(await store.get(id)).toMatchObject({ status: 'paid' });
    } finally {
      await fleet.close();
    }
  }, 60_000);

  test('the database restored from a backup taken while a USDC payout was owed, mined since: marked paid from the chain, one transfer', async () => {
    const fleet = await fleetOf('fleet_payouts_restore', ['a']);
    const { chain } = fleet;
    const [{ ledger, pool, db, store }] = fleet.nodes;
    const manager = () => new PayoutManager(db, chain, pool, ledger, payee, params, directory, { retryMs: 60_000, store });
    let m = manager();
    try {
      const id = `usdc:8453:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913:0x19e7e376e7c213b7e7e7e46cc70a5dd086daff2a:0x${'5'.repeat(64)}`;
      const commitment = requestCommitment({ sellerId: ledger.sellerId, serviceId: SERVICE, request: 'hi', salt: '22'.repeat(32) });
      await ledger.claim({ id, rail: 'usdc', serviceId: SERVICE, requestHash: commitment, caller: 'payer', amount: '5000' });
      await ledger.settle(id, 'HI', { txId: id });
      // Owed by a node without the lease; the backup holds this row.
      await m.oweLater(id, SERVICE, 1_000_000n, 'usdc');
      const backup = (await ledger.query<{ entry: string }>(`SELECT entry::text AS entry FROM provider_payouts WHERE payment_id = $1`, [id])).rows[0]!.entry;
      expect(JSON.parse(backup)).toMatchObject({ status: 'owed' });
      await m.start();
      await m.idle();
      await mineFromPool(chain, pool, miner.address);
      await m.idle();
      const paid = await store.get(id);
      expect(paid).toMatchObject({ status: 'paid' });
      m.stop();
      await m.idle();
      // The restore: the row as backed up, and the gap the first node to start records (x402/ledger/restore.ts).
      await ledger.query(`UPDATE provider_payouts SET status = 'owed', entry = $2::jsonb WHERE payment_id = $1`, [id, backup]);
      const gap: LedgerGap = { from: 1, to: chain.tip.height, foundAt: Date.now(), cause: 'ledger_restored', countedTo: 0 };
      await ledger.putMark(GAPS_MARK, [gap]);
      m = manager();
      await m.start();
      await m.idle();
      expect(pool.count).toBe(0);
      expect(await store.get(id)).toMatchObject({ status: 'paid', txId: paid!.txId });
      await mineFromPool(chain, pool, miner.address);
      expect((await chain.getAccount(provider.address)).balance).toBe(SHARE);
      expect((await chain.getAccount(payee.address)).nonce).toBe(1n);
    } finally {
      m.stop();
      await m.idle();
      await fleet.close();
    }
  }, 60_000);
});
