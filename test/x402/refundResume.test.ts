/**
 * A refund is signed once: the signer writes the signed refund's id AND bytes to the
 * ledger before it submits it, so a signer that dies right after the signature — before the
 * refund reached any mempool — leaves it to the next one (a restarted node, or a fleet's next
 * holder of the signer lease) to send that very transaction, not a second one. Only when the
 * stored refund can never be mined (its nonce was used by another transaction of the payee) is a
 * new one signed, once. Run against both ledgers: LevelDB (a restart) and PostgreSQL (another node).
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import { openChain, type Chain } from '../../chain/chain.js';
import { createMempool, type Mempool } from '../../chain/mempool.js';
import { encodeAddress } from '../../consensus/address.js';
import { createDevnetChainParams, getDevKeyPair } from '../../consensus/devnet.js';
import { bytesEqual, fromHex, toHex } from '../../consensus/hash.js';
import { COIN } from '../../consensus/params.js';
import { encodeTx, txId, TxType } from '../../consensus/tx.js';
import { createAgentInvokeTx } from '../../consensus/txBuilder.js';
import { transfer } from '../../consensus/txTypes/transfer.js';
import { openLedger, type RefundTxWrite, type SettlementLedger } from '../../x402/ledger/open.js';
import { submitPayeeTx } from '../../x402/native/payeeTx.js';
import { memoryPayeeTxLog, PayeeNonces } from '../../x402/native/payeeNonces.js';
import type { PaymentMempool } from '../../x402/core/ports.js';
import { RefundManager } from '../../x402/native/refunds.js';
import { requestCommitment } from '../../x402/core/wire.js';
import { testKey } from '../helpers/keys.js';
import { mineFromPool } from '../helpers/mine.js';
import { usePostgres } from '../helpers/usePostgres.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';
import { CountingVerifier } from '../helpers/verifier.js';

const caller = getDevKeyPair();
const payee = testKey('refund-resume-payee');
const miner = testKey('refund-resume-miner');
const params = createDevnetChainParams({ genesisBits: 0x207fffff, allocations: [{ address: encodeAddress(payee.address, 'tnative'), amount: 1n * COIN }] });
const SERVICE = 'native-echo';
const PRICE = 1_000_000n;
const failure = { code: 'service_failed', message: 'the service failed' };

const postgres = usePostgres();
afterAll(cleanupTmp);

let dbs = 0;
/** Where one test's ledger lives: a directory (reopened by the "restarted" node) or a database (opened by the other node). */
const backends: readonly [string, () => Promise<string>][] = [
  ['leveldb', async () => join(await tmpDir(), 'ledger')],
  ['postgres', async () => postgres.server.createDatabase(`refund_resume${++dbs}`)],
];

/**
 * The ledger as a signer sees it, noting the id of every refund written ahead (every refund it
 * signed: the write precedes the submission). `dieAfterWriteAhead`: the process dies right after
 * the first such write — every later write fails, as nothing a dead process does reaches the ledger.
 */
function signerLedger(ledger: SettlementLedger, signed: string[], dieAfterWriteAhead = false): SettlementLedger {
  let dead = false;
  return new Proxy(ledger, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (key !== 'refundPending' && key !== 'refunded') return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      return async (...args: unknown[]) => {
        if (dead) throw new Error('the signer died');
        const out = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        const refund = args[2] as RefundTxWrite | undefined;
        if (key === 'refundPending' && refund && 'txId' in refund) {
          signed.push(refund.txId);
          dead = dieAfterWriteAhead;
        }
        return out;
      };
    },
  });
}

/** A mempool the dying signer submits to: its submission never gets anywhere (the process is gone). */
function unreachable(pool: Mempool): PaymentMempool {
  return new Proxy(pool, {
    get(target, key) {
      if (key === 'add') return async () => Promise.reject(new Error('killed before the submission'));
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** Ids of the payee's transactions on the best chain. */
async function payeeTxsOnChain(chain: Chain): Promise<string[]> {
  const ids: string[] = [];
  for (let h = 1; h <= chain.tip.height; h++) {
    const block = (await chain.getBlock(chain.getEntryByHeight(h)!.hashHex))!;
    for (const tx of block.txs) if (bytesEqual(tx.from, payee.address)) ids.push(toHex(txId(encodeTx(tx))));
  }
  return ids;
}

describe.each(backends)('a refund whose signer died after signing it (%s ledger)', (_name, location) => {
  /**
   * A chain with one mined payment to the payee, claimed in a fresh ledger; signer A refunds it
   * and dies between the write-ahead and the submission. Returns what the second signer needs.
   */
  async function afterDeath() {
    const dir = await tmpDir();
    const verifier = new CountingVerifier();
    const chain = await openChain({ dataDir: join(dir, 'chain'), params, verifier, now: () => params.genesis.time + 1_000_000 });
    const pool = createMempool(chain, verifier, params);
    pool.start();
    const where = await location();
    const ledgerA = await openLedger(where, { nodeId: 'node-a' });
    const commitment = requestCommitment({ sellerId: ledgerA.sellerId, serviceId: SERVICE, request: 'hi', salt: '33'.repeat(32) });
    const invoke = createAgentInvokeTx({ key: caller, chainId: params.chainId, serviceId: SERVICE, payTo: payee.address, amount: PRICE, requestHash: fromHex(commitment), nonce: 0n, includeKey: true });
    await pool.add(invoke.bytes);
    await mineFromPool(chain, pool, miner.address);
    const signedByA: string[] = [];
    const a = new RefundManager(chain, unreachable(pool), signerLedger(ledgerA, signedByA, true), payee, params, { retryMs: 60_000 });
    await a.start();
    // The call is claimed, its service fails, A refunds it.
    await ledgerA.claim({ id: invoke.id, rail: 'native', serviceId: SERVICE, requestHash: commitment, caller: encodeAddress(caller.address, 'tnative'), amount: PRICE.toString() });
    await expect(a.refund(invoke.id, failure)).rejects.toThrow('the signer died');
    a.stop();
    await a.idle();
    await ledgerA.close();
    expect(signedByA).toHaveLength(1);
    expect(pool.count).toBe(0);
    return {
      chain,
      pool,
      invokeId: invoke.id,
      storedId: signedByA[0]!,
      /** The second signer over the same ledger (a restarted node, or another node of the fleet). */
      async second() {
        const ledger = await openLedger(where, { nodeId: 'node-b' });
        const signed: string[] = [];
        const open = (): RefundManager => new RefundManager(chain, pool, signerLedger(ledger, signed), payee, params, { retryMs: 60_000 });
        return { ledger, signed, open };
      },
      async close() {
        pool.stop();
        await chain.close();
      },
    };
  }

  test('the next signer submits the stored transaction (same id, same bytes), signs none, and the refund ends refunded once mined', async () => {
    const rig = await afterDeath();
    const b = await rig.second();
    let manager = b.open();
    try {
      const stored = await b.ledger.get(rig.invokeId);
      expect(stored).toMatchObject({ status: 'refund_pending', refundTxId: rig.storedId, refundTx: expect.stringMatching(/^[0-9a-f]+$/) });
      expect(toHex(txId(fromHex(stored!.refundTx!)))).toBe(rig.storedId);

      await manager.start();
      await manager.idle();
      expect(rig.pool.list(10).map((e) => e.id)).toEqual([rig.storedId]);
      expect(toHex(encodeTx(rig.pool.get(rig.storedId)!.tx))).toBe(stored!.refundTx);
      expect(manager.pendingIds()).toEqual([rig.invokeId]);

      await mineFromPool(rig.chain, rig.pool, miner.address);
      await manager.idle();
      const done = await b.ledger.get(rig.invokeId);
      expect(done).toMatchObject({ status: 'refunded', refundTxId: rig.storedId });
      expect(done?.refundTx).toBeUndefined();
      expect(manager.pendingIds()).toEqual([]);

      // A restart and another block: still nothing signed.
      manager.stop();
      await manager.idle();
      manager = b.open();
      await manager.start();
      await mineFromPool(rig.chain, rig.pool, miner.address);
      await manager.idle();
      expect(b.signed).toEqual([]);
      expect(await payeeTxsOnChain(rig.chain)).toEqual([rig.storedId]);
    } finally {
      manager.stop();
      await manager.idle();
      await b.ledger.close();
      await rig.close();
    }
  }, 60_000);

  test('the stored transaction can never be mined (another payee tx took its nonce): one new refund is signed, written ahead, and mined', async () => {
    const rig = await afterDeath();
    // Another transaction of the payee, signed outside the node's nonce allocator (another program holding the key), takes nonce 0, the stored refund's, and is mined.
    const other = await submitPayeeTx(rig.chain, rig.pool, payee, params, TxType.transfer, transfer.encodePayload({ to: miner.address, amount: 1n }), undefined, { nonces: new PayeeNonces(memoryPayeeTxLog()) });
    await mineFromPool(rig.chain, rig.pool, miner.address);
    expect((await rig.chain.getAccount(payee.address)).nonce).toBe(1n);

    const b = await rig.second();
    let manager = b.open();
    try {
      await manager.start();
      await manager.idle();
      expect(b.signed).toHaveLength(1);
      const fresh = b.signed[0]!;
      expect(fresh).not.toBe(rig.storedId);
      expect(await b.ledger.get(rig.invokeId)).toMatchObject({ status: 'refund_pending', refundTxId: fresh });
      expect(rig.pool.list(10).map((e) => e.id)).toEqual([fresh]);

      // Mined; a restart and another block sign nothing more.
      await mineFromPool(rig.chain, rig.pool, miner.address);
      await manager.idle();
      expect(await b.ledger.get(rig.invokeId)).toMatchObject({ status: 'refunded', refundTxId: fresh });
      manager.stop();
      await manager.idle();
      manager = b.open();
      await manager.start();
      await mineFromPool(rig.chain, rig.pool, miner.address);
      await manager.idle();
      expect(b.signed).toEqual([fresh]);
      expect(await payeeTxsOnChain(rig.chain)).toEqual([other, fresh]);
    } finally {
      manager.stop();
      await manager.idle();
      await b.ledger.close();
      await rig.close();
    }
  }, 60_000);
});
