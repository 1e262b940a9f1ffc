/**
 * The operator's decision on a fleet's ledger gap, over one real PostgreSQL ledger.
 *
 * Taken while the nodes run: `native-node ledger gap --refund --ledger postgres://…` beside a
 * running lease holder and a running node without the lease. The holder's own copy of the gaps,
 * written back by a count after the decision (a block of the gap arriving), must not undo it: the
 * node without the lease lists the gap decided, and the holder takes the decision in and refunds
 * the gap's payment, once.
 *
 * Carried out against what the chain says (x402/native/gapRefunds.ts): of a gap's payments the
 * lost ledger had refunded one and paid another out to its provider. The first is recorded as
 * refunded by that refund, the second stays in the gap, forgotten; only the third is refunded,
 * and no refund the chain refuses is signed (it held a payee nonce for good, and every later
 * refund and payout waited behind it: found by the randomized fleet test's restore).
 *
 * Found at start on a fleet's ledger (no write count): the gap holds every block timed before the
 * start that found it, not only up to the finding node's own last height: another node may have
 * judged later blocks with the lost ledger (the fleet test's restore: a node one block behind found
 * a gap from 30 to 29, and the payments the others had served were refunded by the window). And
 * it is found by a node that wrote no payment since the backup: its witness keeps its last
 * heartbeat as the database stamped it, and the restored database's row is older (before, such a
 * node, started first, judged the stretch alone and refunded by the window payments the others had
 * served).
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
import { txId, TxType } from '../../consensus/tx.js';
import { providerPayout } from '../../consensus/txTypes/providerPayout.js';
import { createAgentInvokeTx } from '../../consensus/txBuilder.js';
import { refund as refundType } from '../../consensus/txTypes/refund.js';
import { PgLedger } from '../../x402/ledger/pgLedger.js';
import { requestCommitment } from '../../x402/core/wire.js';
import { RefundManager } from '../../x402/native/refunds.js';
import { createUnhonoredPayments, GAPS_MARK, recordLedgerRestore, WATCHER_MARK, type LedgerGap } from '../../x402/native/unhonored.js';
import { writeFile } from 'node:fs/promises';
import { writeHeartbeat } from '../../x402/fleet/fleet.js';
import { ledgerGap } from '../../cli/ledgerGapCommand.js';
import { testKey } from '../helpers/keys.js';
import { mineFromPool } from '../helpers/mine.js';
import { stubService } from '../helpers/stubService.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';
import { usePostgres } from '../helpers/usePostgres.js';
import { CountingVerifier } from '../helpers/verifier.js';
import { payeeTxBytes } from '../helpers/chainRig.js';

const agent = getDevKeyPair();
const payee = testKey('gap-decisions-payee');
const miner = testKey('gap-decisions-miner');
const params = createDevnetChainParams({ genesisBits: 0x207fffff, allocations: [{ address: encodeAddress(payee.address, 'tnative'), amount: COIN }] });
const SERVICE = 'native-echo';
const PRICE = 200_000n;
const def = stubService(SERVICE, async () => 'ok', PRICE);
const catalog = { get: (id: string) => (id === SERVICE ? def : undefined), isAvailable: () => true, isHonorable: () => true };

const postgres = usePostgres(120_000);

/** Refund transactions naming `invokeId` in the best chain. */
async function refundsOnChain(chain: Awaited<ReturnType<typeof openChain>>, invokeId: string): Promise<string[]> {
  const ids: string[] = [];
  for (let h = 1; h <= chain.tip.height; h++) {
    for (const tx of (await chain.getBlock(chain.getEntryByHeight(h)!.hashHex))!.txs) if (tx.type === TxType.refund && toHex(refundType.decodePayload(tx.payload).invokeId) === invokeId) ids.push(toHex(txId(tx)));
  }
  return ids;
}
afterAll(cleanupTmp);

describe("a fleet's ledger gap decided while the nodes run", () => {
  test('the decision survives the holder writing its own copy of the gaps, reaches the node without the lease, and the holder refunds at once', async () => {
    const url = await postgres.server.createDatabase('gap_decisions');
    const dir = await tmpDir();
    const verifier = new CountingVerifier();
    const chain = await openChain({ dataDir: join(dir, 'chain'), params, verifier, now: () => params.genesis.time + 1_000_000 });
    const pool = createMempool(chain, verifier, params);
    pool.start();
    const holderLedger = await PgLedger.open(url, { nodeId: 'n-a' });
    const otherLedger = await PgLedger.open(url, { nodeId: 'n-b' });
    const refunds = new RefundManager(chain, pool, holderLedger, payee, params, { retryMs: 60_000, recoverClaims: false });
    const watcherOf = (ledger: PgLedger, r?: RefundManager) =>
      createUnhonoredPayments({ chain, ledger, catalog, payees: [{ address: payee.address, refunds: r ?? { refund: () => Promise.reject(new Error('this node does not sign')) } }], params, mempool: pool, legacyLedger: true }, { windowMs: 60_000, checkMs: 60_000, logger: silentLogger });
    const holder = watcherOf(holderLedger, refunds);
    const other = watcherOf(otherLedger);
    try {
      // A payment the restored ledger has no record of, at height 1.
      const commitment = requestCommitment({ sellerId: holderLedger.sellerId, serviceId: SERVICE, request: 'hi', salt: '44'.repeat(32) });
      const invoke = createAgentInvokeTx({ key: agent, chainId: params.chainId, serviceId: SERVICE, payTo: payee.address, amount: PRICE, requestHash: fromHex(commitment), nonce: 0n, includeKey: true });
      await pool.add(invoke.bytes);
      await mineFromPool(chain, pool, miner.address);
      // The restore a node found at its start: heights 1 to 3, of which only 1 is in this chain yet (the rest is counted as it arrives).
      const gap: LedgerGap = { from: 1, to: 3, foundAt: 1_000, cause: 'ledger_restored', claimed: [], countedTo: 0 };
      await holderLedger.putMark(WATCHER_MARK, { height: 1, scanned: 1 });
      await holderLedger.putMark(GAPS_MARK, [gap]);
      await refunds.start();
      await holder.start();
      await other.load();
      expect(holder.gapList()).toEqual([expect.objectContaining({ from: 1, to: 3, invokes: 1, countedTo: 1 })]);
      expect(holder.gapList()[0]!.resolution).toBeUndefined();

      // The operator decides while both run; then a block of the gap arrives and the holder writes its count back (its copy read before the decision).
      expect(await ledgerGap(dir, 'refund', url)).toEqual([expect.objectContaining({ resolution: 'refund' })]);
      await mineFromPool(chain, pool, miner.address);
      await holder.idle();
      const stored = (await holderLedger.getMark<LedgerGap[]>(GAPS_MARK))!;
      expect(stored).toEqual([expect.objectContaining({ countedTo: 2 })]);
      expect(stored[0]!.resolution).toBeUndefined(); // the stale copy: the decision lives in its own mark

      // The node without the lease reads the gaps as every 2 s: decided.
      await other.load();
      expect(other.gapList()).toEqual([expect.objectContaining({ from: 1, to: 3, resolution: 'refund' })]);
      // The holder takes the decision in and refunds now, once.
      expect(await holder.adoptGaps()).toBe(1);
      await refunds.idle();
      expect(holder.gapList()).toEqual([]);
      expect(await holderLedger.get(invoke.id)).toMatchObject({ refused: true, error: { code: 'ledger_gap_refund' } });
      expect(await holder.adoptGaps()).toBe(0);
      await mineFromPool(chain, pool, miner.address);
      await refunds.idle();
      expect(await refundsOnChain(chain, invoke.id)).toHaveLength(1);
      await other.load();
      expect(other.gapList()).toEqual([]);
    } finally {
      holder.stop();
      await holder.idle();
      refunds.stop();
      await refunds.idle();
      pool.stop();
      await holderLedger.close();
      await otherLedger.close();
      await chain.close();
    }
  }, 60_000);

  test('--refund refunds what the chain has not ended, records the refund the lost ledger made, keeps what it paid out in the gap, and holds no payee nonce for nothing', async () => {
    const url = await postgres.server.createDatabase('gap_chain_ends');
    const dir = await tmpDir();
    const verifier = new CountingVerifier();
    const chain = await openChain({ dataDir: join(dir, 'chain'), params, verifier, now: () => params.genesis.time + 1_000_000 });
    const pool = createMempool(chain, verifier, params);
    pool.start();
    const ledger = await PgLedger.open(url, { nodeId: 'n-a' });
    const refunds = new RefundManager(chain, pool, ledger, payee, params, { retryMs: 60_000, recoverClaims: false });
    const watcher = createUnhonoredPayments({ chain, ledger, catalog, payees: [{ address: payee.address, refunds }], params, mempool: pool, legacyLedger: true }, { windowMs: 60_000, checkMs: 60_000, logger: silentLogger });
    try {
      const commitment = fromHex(requestCommitment({ sellerId: ledger.sellerId, serviceId: SERVICE, request: 'hi', salt: '44'.repeat(32) }));
      const [open, refundedBefore, paidOutBefore] = [0n, 1n, 2n].map((nonce) => createAgentInvokeTx({ key: agent, chainId: params.chainId, serviceId: SERVICE, payTo: payee.address, amount: PRICE, requestHash: commitment, nonce, includeKey: nonce === 0n }));
      for (const i of [open!, refundedBefore!, paidOutBefore!]) await pool.add(i.bytes);
      await mineFromPool(chain, pool, miner.address);
      // The lost ledger's doing, on chain only: the refund of one payment, the provider payout of another.
      const payeeTx = (nonce: bigint, type: number, payload: Uint8Array) => payeeTxBytes(params, payee, nonce, type, payload);
      const lostRefund = payeeTx(0n, TxType.refund, refundType.encodePayload({ invokeId: fromHex(refundedBefore!.id), to: agent.address, amount: PRICE }));
      await pool.add(lostRefund);
      await pool.add(payeeTx(1n, TxType.provider_payout, providerPayout.encodePayload({ invokeId: fromHex(paidOutBefore!.id), to: miner.address, amount: PRICE / 2n })));
      await mineFromPool(chain, pool, miner.address);
      expect((await chain.getAccount(payee.address)).nonce).toBe(2n);
      // The restored ledger knows none of the three; the operator chose --refund.
      await ledger.putMark(WATCHER_MARK, { height: 1, scanned: 3 });
      await ledger.putMark(GAPS_MARK, [{ from: 1, to: 2, foundAt: 1_000, cause: 'ledger_restored', claimed: [], countedTo: 0 } satisfies LedgerGap]);
      await ledgerGap(dir, 'refund', url);
      await refunds.start();
      await watcher.start();
      await refunds.idle();

      expect(await ledger.get(open!.id)).toMatchObject({ status: 'refund_pending', error: { code: 'ledger_gap_refund' } });
      expect(await ledger.get(refundedBefore!.id)).toMatchObject({ status: 'refunded', refundTxId: toHex(txId(lostRefund)) });
      expect(await ledger.get(paidOutBefore!.id)).toBeUndefined();
      // What the lost ledger paid out stays in the gap, forgotten: never served, never refunded.
      expect(watcher.gapList()).toEqual([expect.objectContaining({ from: 1, to: 2, resolution: 'forget', invokes: 1, amountBase: PRICE.toString() })]);
      expect(watcher.inGap(1)).toBe(true);
      // The one refund signed takes the payee's next nonce, and is mined: nothing waits behind a refund the chain refuses.
      await mineFromPool(chain, pool, miner.address);
      await refunds.idle();
      await mineFromPool(chain, pool, miner.address);
      await refunds.idle();
      expect(await refundsOnChain(chain, open!.id)).toHaveLength(1);
      expect(await refundsOnChain(chain, refundedBefore!.id)).toEqual([toHex(txId(lostRefund))]);
      expect(await refundsOnChain(chain, paidOutBefore!.id)).toEqual([]);
      expect((await chain.getAccount(payee.address)).nonce).toBe(3n);
      expect(pool.list(100).filter((e) => toHex(e.tx.from) === toHex(payee.address))).toEqual([]);
      expect(refunds.pendingIds()).toEqual([]);
    } finally {
      watcher.stop();
      await watcher.idle();
      refunds.stop();
      await refunds.idle();
      pool.stop();
      await ledger.close();
      await chain.close();
    }
  }, 60_000);

  test('a restore found on a fleet\'s ledger holds every block timed before the start that found it; a second node finding it adds no gap', async () => {
    const url = await postgres.server.createDatabase('gap_fleet_before');
    const dir = await tmpDir();
    const ledger = await PgLedger.open(url, { nodeId: 'n-a' });
    try {
      await ledger.putMark(WATCHER_MARK, { height: 30, scanned: 31 });
      // Each node's witness names a record the restored ledger lacks; the first was one block behind the mark.
      const witness = async (name: string, tip: number) => {
        const path = join(dir, `${name}.json`);
        await writeFile(path, JSON.stringify({ sellerId: ledger.sellerId, seq: 7, tip, at: 1, last: { id: 'ab'.repeat(32), status: 'settled' } }));
        return path;
      };
      const first = await recordLedgerRestore(ledger, [await witness('a', 29)], 5_000, { tip: 33 });
      expect(first.gap).toMatchObject({ from: 30, to: 33, before: 5_000, cause: 'ledger_restored' });
      const second = await recordLedgerRestore(ledger, [await witness('b', 35)], 5_100, { tip: 36 });
      expect(second.gap).toBeUndefined();
      expect((await ledger.getMark<LedgerGap[]>(GAPS_MARK))!.map((g) => [g.from, g.to, g.before])).toEqual([[30, 33, 5_000]]);
    } finally {
      await ledger.close();
    }
  }, 60_000);

  test('a node that wrote no payment since the backup finds the restore by its last heartbeat, which the restored database lacks', async () => {
    const url = await postgres.server.createDatabase('gap_fleet_heartbeat');
    const dir = await tmpDir();
    const ledger = await PgLedger.open(url, { nodeId: 'n-quiet' });
    try {
      await ledger.putMark(WATCHER_MARK, { height: 10, scanned: 11 });
      const beat = () => writeHeartbeat((text, values) => ledger.query(text, values), 'n-quiet', { url: undefined, version: 'test', network: 'native-devnet', height: 12, tip: 'aa'.repeat(32), leaseHolder: false }, 1_000);
      const restoredRow = await beat();
      const witness = async (name: string, fleetSeenAt: number) => {
        const path = join(dir, `${name}.json`);
        await writeFile(path, JSON.stringify({ sellerId: ledger.sellerId, seq: 3, tip: 12, at: 1, fleetSeenAt }));
        return path;
      };
      // As the database holds it: not restored.
      expect((await recordLedgerRestore(ledger, [await witness('same', restoredRow)], 9_000, { tip: 14 })).gap).toBeUndefined();
      // The node beat again after the backup; the restored database has the older row.
      expect((await recordLedgerRestore(ledger, [await witness('later', restoredRow + 2_000)], 9_100, { tip: 14 })).gap).toMatchObject({ from: 10, to: 14, before: 9_100, cause: 'ledger_restored' });
    } finally {
      await ledger.close();
    }
  }, 60_000);
});
