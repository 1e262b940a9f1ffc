/**
 * The mempool file against a real LevelDB chain and mempool: saved transactions are admitted
 * again after a restart with their age; mined, expired and no-longer-valid ones are dropped; the
 * periodic save writes only a changed mempool; a torn temp file never replaces the last good
 * file; a corrupt or foreign file is set aside, not trusted.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { existsSync } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openChain, type Chain } from '../../chain/chain.js';
import { createMempool, type Mempool } from '../../chain/mempool.js';
import { createMempoolStore, decodeMempoolFile, encodeMempoolFile, MEMPOOL_FILE } from '../../chain/mempoolStore.js';
import { createDevnetChainParams } from '../../consensus/devnet.js';
import { encodeTx, signTx, txId, TxType, TX_VERSION, type Tx } from '../../consensus/tx.js';
import { transfer } from '../../consensus/txTypes/transfer.js';
import { toHex } from '../../consensus/hash.js';
import { encodeAddress } from '../../consensus/address.js';
import { COIN } from '../../consensus/params.js';
import type { HybridKeyPair } from '../../consensus/keys.js';
import { mineFromPool } from '../helpers/mine.js';
import { testKey } from '../helpers/keys.js';
import { CountingVerifier } from '../helpers/verifier.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';

const alice = testKey('alice');
const bob = testKey('bob');
const carol = testKey('carol');
const miner = testKey('miner');
const params = createDevnetChainParams({ genesisBits: 0x207fffff, allocations: [alice, bob].map((k) => ({ address: encodeAddress(k.address, 'tnative'), amount: 10n * COIN })) });
const chainNow = () => params.genesis.time + 1_000_000;

afterAll(cleanupTmp);

function pay(from: HybridKeyPair, nonce: bigint, amount = 1000n): Tx {
  return signTx({ version: TX_VERSION, chainId: params.chainId, type: TxType.transfer, nonce, fee: 20_000n, payload: transfer.encodePayload({ to: carol.address, amount }), publicKey: nonce === 0n ? from.publicKey : undefined }, from);
}

async function fresh(dir: string, chain?: Chain): Promise<{ chain: Chain; pool: Mempool }> {
  const verifier = new CountingVerifier();
  const c = chain ?? (await openChain({ dataDir: join(dir, 'chain'), params, verifier, now: chainNow }));
  const pool = createMempool(c, verifier, params);
  pool.start();
  return { chain: c, pool };
}

const ids = (pool: Mempool) => pool.list().map((e) => e.id).sort();

describe('mempool file', () => {
  test('a restart admits the saved transactions again, in nonce order, keeping their age; mined ones are dropped', async () => {
    const dir = await tmpDir();
    const path = join(dir, MEMPOOL_FILE);
    const a = await fresh(dir);
    const txs = [pay(alice, 0n), pay(alice, 1n), pay(alice, 2n), pay(bob, 0n), pay(bob, 1n)];
    // Bob's go in first and Alice's out of order: the file must still restore every chain of nonces.
    for (const tx of [txs[3], txs[4], txs[0], txs[2], txs[1]]) await a.pool.add(encodeTx(tx), { addedAt: 1_000 });
    const store = createMempoolStore(a.pool, params, { path, intervalMs: 0 });
    await store.load();
    store.start();
    await store.stop();
    const saved = ids(a.pool);
    a.pool.stop();

    const b = await fresh(dir, a.chain);
    const restored = createMempoolStore(b.pool, params, { path, intervalMs: 0, now: () => 2_000 });
    expect(await restored.load()).toEqual({ loaded: 5, dropped: 0, expired: 0 });
    expect(ids(b.pool)).toEqual(saved);
    expect(b.pool.list().every((e) => e.addedAt === 1_000)).toBe(true);

    // Alice's first two get mined while the pool was "down": reloading the same file drops exactly those.
    const only = createMempool(a.chain, new CountingVerifier(), params);
    only.start();
    await only.add(encodeTx(txs[0]));
    await only.add(encodeTx(txs[1]));
    b.pool.stop();
    await mineFromPool(a.chain, only, miner.address);
    only.stop();
    const c = await fresh(dir, a.chain);
    expect(await createMempoolStore(c.pool, params, { path, intervalMs: 0, now: () => 2_000 }).load()).toEqual({ loaded: 3, dropped: 2, expired: 0 });
    expect(ids(c.pool)).toEqual([txs[2], txs[3], txs[4]].map((t) => toHex(txId(t))).sort());
    c.pool.stop();

    // Past the mempool's expiry they are not admitted at all.
    const d = await fresh(dir, a.chain);
    expect(await createMempoolStore(d.pool, params, { path, intervalMs: 0, now: () => 1_000 + d.pool.expirySeconds * 1000 + 1 }).load()).toEqual({ loaded: 0, dropped: 0, expired: 5 });
    d.pool.stop();
    await a.chain.close();
  });

  test('the periodic save writes a changed mempool only, and stop() saves the last state', async () => {
    const dir = await tmpDir();
    const path = join(dir, MEMPOOL_FILE);
    const a = await fresh(dir);
    const store = createMempoolStore(a.pool, params, { path, intervalMs: 50 });
    await store.load();
    store.start();
    await new Promise((r) => setTimeout(r, 150));
    expect(existsSync(path)).toBe(false); // nothing changed, nothing written
    await a.pool.add(encodeTx(pay(alice, 0n)));
    for (let i = 0; i < 100 && !existsSync(path); i++) await new Promise((r) => setTimeout(r, 20));
    expect(decodeMempoolFile(await readFile(path), params.chainId)).toHaveLength(1);
    const written = (await stat(path)).mtimeMs;
    await new Promise((r) => setTimeout(r, 150));
    expect((await stat(path)).mtimeMs).toBe(written);
    await a.pool.add(encodeTx(pay(alice, 1n)));
    await store.stop();
    expect(decodeMempoolFile(await readFile(path), params.chainId)).toHaveLength(2);
    a.pool.stop();
    await a.chain.close();
  });

  test('a torn temp file from a crash mid-save is ignored; a corrupt or foreign file is set aside', async () => {
    const dir = await tmpDir();
    const path = join(dir, MEMPOOL_FILE);
    const a = await fresh(dir);
    await a.pool.add(encodeTx(pay(alice, 0n)));
    const good = encodeMempoolFile(a.pool.list(), params.chainId);
    a.pool.stop();
    await writeFile(path, good);
    await writeFile(`${path}.tmp`, good.subarray(0, 40)); // the crash happened before the rename
    const b = await fresh(dir, a.chain);
    expect((await createMempoolStore(b.pool, params, { path, intervalMs: 0 }).load()).loaded).toBe(1);
    b.pool.stop();

    const flipped = Uint8Array.from(good);
    flipped[20] ^= 1;
    await writeFile(path, flipped);
    const c = await fresh(dir, a.chain);
    expect(await createMempoolStore(c.pool, params, { path, intervalMs: 0 }).load()).toEqual({ loaded: 0, dropped: 0, expired: 0 });
    expect(existsSync(`${path}.bad`)).toBe(true);
    expect(existsSync(path)).toBe(false);
    c.pool.stop();

    await writeFile(path, encodeMempoolFile([], params.chainId + 1));
    expect(() => decodeMempoolFile(encodeMempoolFile([], 7), 8)).toThrow(/for chain 7/);
    const d = await fresh(dir, a.chain);
    expect((await createMempoolStore(d.pool, params, { path, intervalMs: 0 }).load()).loaded).toBe(0);
    d.pool.stop();
    await a.chain.close();
  });
});
