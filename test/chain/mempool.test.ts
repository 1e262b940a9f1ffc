import { afterAll, describe, expect, test } from '@jest/globals';
import { openChain, type Chain } from '../../chain/chain.js';
import { createMempool, MempoolErrorCode, type Mempool, type MempoolOptions } from '../../chain/mempool.js';
import { createDevnetChainParams, getDevKeyPair } from '../../consensus/devnet.js';
import { encodeTx, signTx, txId, TxType, TX_VERSION, type Tx } from '../../consensus/tx.js';
import { transfer } from '../../consensus/txTypes/transfer.js';
import { toHex } from '../../consensus/hash.js';
import { encodeAddress } from '../../consensus/address.js';
import { COIN } from '../../consensus/params.js';
import { isNodeError } from '../../consensus/errors.js';
import type { Block } from '../../consensus/block.js';
import type { HybridKeyPair } from '../../consensus/keys.js';
import { assembleBlock, grindHeader } from '../../consensus/assemble.js';
import { blockTouchedKeys } from '../../consensus/apply.js';
import { accountKey } from '../../consensus/state.js';
import { MemChain } from '../helpers/memChain.js';
import { mineFromPool as mineBlock } from '../helpers/mine.js';
import { testKey } from '../helpers/keys.js';
import { CountingVerifier } from '../helpers/verifier.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';

const alice = testKey('alice');
const bob = testKey('bob');
const carol = testKey('carol');
const miner = testKey('miner');
const dev = getDevKeyPair();
const params = createDevnetChainParams({
  genesisBits: 0x207fffff,
  allocations: [alice, bob].map((k) => ({ address: encodeAddress(k.address, 'tnative'), amount: 10n * COIN })),
});
const now = () => params.genesis.time + 1_000_000;

afterAll(cleanupTmp);

function pay(from: HybridKeyPair, nonce: bigint, amount = 1000n, fee = 20_000n, to = carol.address, withKey = nonce === 0n): Tx {
  return signTx({ version: TX_VERSION, chainId: params.chainId, type: TxType.transfer, nonce, fee, payload: transfer.encodePayload({ to, amount }), publicKey: withKey ? from.publicKey : undefined }, from);
}

/** Alice's transfers of nonces 0 … count − 1, each admitted and mined in a block of its own. */
async function payAndMine(chain: Chain, pool: Mempool, count: number): Promise<Tx[]> {
  const sent: Tx[] = [];
  for (let n = 0n; n < BigInt(count); n++) {
    const tx = pay(alice, n);
    sent.push(tx);
    await pool.add(encodeTx(tx));
    await mineFromPool(chain, pool);
  }
  return sent;
}

/** Builds an empty block on `other`'s tip (one second later, paying bob) and hands it to `chain`. */
async function extendBranch(other: MemChain, chain: Chain): Promise<void> {
  const b = other.build([], bob.address, other.tip.block.header.time + 1);
  other.connect(b);
  await chain.addBlock(b);
}

async function setup(opts: MempoolOptions = {}): Promise<{ chain: Chain; pool: Mempool; verifier: CountingVerifier }> {
  const verifier = new CountingVerifier();
  const chain = await openChain({ dataDir: await tmpDir(), params, verifier, now });
  const pool = createMempool(chain, verifier, params, opts);
  pool.start();
  return { chain, pool, verifier };
}

async function teardown(chain: Chain, pool: Mempool): Promise<void> {
  pool.stop();
  await chain.close();
}

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
  } catch (e) {
    if (isNodeError(e)) return e.code;
    throw e;
  }
  return undefined;
}

function mineFromPool(chain: Chain, pool: Mempool): Promise<Block> {
  return mineBlock(chain, pool, miner.address);
}

describe('mempool', () => {
  test('accepts a valid transfer, refuses duplicates (without checking their signature again), bad signatures and used nonces', async () => {
    const { chain, pool, verifier } = await setup();
    const tx = pay(alice, 0n);
    const res = await pool.add(encodeTx(tx));
    expect(res).toEqual({ id: toHex(txId(tx)), status: 'accepted' });
    expect(pool.count).toBe(1);
    verifier.calls = 0;
    expect(await codeOf(pool.add(encodeTx(tx)))).toBe(MempoolErrorCode.DUPLICATE);
    expect(verifier.calls).toBe(0);
    const forged = { ...pay(bob, 0n), signature: pay(alice, 1n).signature };
    expect(await codeOf(pool.add(encodeTx(forged)))).toBe('tx_bad_signature');
    expect(await codeOf(pool.add(encodeTx(pay(bob, 0n, 11n * COIN))))).toBe('tx_insufficient_funds');
    expect(await codeOf(pool.add(Uint8Array.of(1, 2, 3)))).toBe('codec_truncated');
    await mineFromPool(chain, pool);
    expect(pool.count).toBe(0);
    expect(await codeOf(pool.add(encodeTx(pay(alice, 0n, 5n))))).toBe('tx_bad_nonce');
    await teardown(chain, pool);
  });

  test('checks signatures while transactions queue (several at once on the verifier), admits in arrival order, checks a bad signature once', async () => {
    const { chain, pool, verifier } = await setup();
    // Holds every check until released, to see how many are under way at once.
    const held: (() => void)[] = [];
    let started = 0;
    const check = verifier.verifyBatch.bind(verifier);
    verifier.verifyBatch = (jobs) => ((started += jobs.length), new Promise<void>((r) => held.push(r)).then(() => check(jobs)));
    const adds = [pool.add(encodeTx(pay(alice, 0n))), pool.add(encodeTx(pay(alice, 1n))), pool.add(encodeTx(pay(bob, 0n)))];
    for (let i = 0; i < 50 && started < 2; i++) await new Promise((r) => setImmediate(r));
    // alice 0 and bob 0 carry their keys: both checks are under way (one batch) before either is admitted.
    expect(started).toBe(2);
    // alice 1 has no key of its own yet: it is checked at its turn, after alice 0 (arrival order), and accepted.
    verifier.verifyBatch = check;
    for (const release of held.splice(0)) release();
    expect((await Promise.all(adds)).map((r) => r.status)).toEqual(['accepted', 'accepted', 'accepted']);
    verifier.calls = 0;
    const forged = { ...pay(bob, 1n), signature: pay(alice, 2n).signature };
    expect(await codeOf(pool.add(encodeTx(forged)))).toBe('tx_bad_signature');
    expect(verifier.calls).toBe(1);
    await teardown(chain, pool);
  });

  test('a block connecting while a transaction is checked: the admission starts again on the new tip (no false nonce gap)', async () => {
    const { chain, pool } = await setup({ maxFuturePerSender: 1 });
    for (const n of [0n, 1n, 2n]) await pool.add(encodeTx(pay(alice, n)));
    // The block mining alice 0–2, connected in the middle of the next admission's state read.
    const txs = pool.blockCandidates(params.limits.maxBlockBytes - 1000, params.limits.maxBlockTxs).map((e) => e.tx);
    const tip = chain.tip;
    const keys = blockTouchedKeys({ coinbase: { miner: miner.address }, txs } as unknown as Block);
    const draft = assembleBlock({ parent: { hash: tip.hash, height: tip.height, time: tip.header.time }, medianTimePast: chain.medianTimePast(tip), now: tip.header.time + 3, txs, miner: miner.address, state: await chain.getStateView(keys) }, params);
    const block = { ...draft, header: grindHeader(draft.header, params.powLimit)! };
    const read = chain.getStateView.bind(chain);
    let connectDuringRead = true;
    chain.getStateView = async (k) => {
      const view = await read(k); // the old tip's state…
      if (connectDuringRead) {
        connectDuringRead = false;
        await chain.addBlock(block); // …while the block mining alice 0–2 connects
      }
      return view;
    };
    // Checked against the old state with 0–2 already gone, nonce 3 looked 3 ahead of nonce 0.
    expect((await pool.add(encodeTx(pay(alice, 3n)))).status).toBe('accepted');
    await pool.idle();
    expect(pool.pendingNonce(alice.address, 3n)).toBe(4n);
    expect(pool.blockCandidates(params.limits.maxBlockBytes, 10).map((e) => e.tx.nonce)).toEqual([3n]);
    await teardown(chain, pool);
  });

  test('sequences nonces per sender: future nonces wait, a gap blocks later ones, pendingNonce counts them', async () => {
    const { chain, pool } = await setup({ maxFuturePerSender: 2 });
    await pool.add(encodeTx(pay(alice, 0n)));
    await pool.add(encodeTx(pay(alice, 2n)));
    expect(pool.pendingNonce(alice.address, 0n)).toBe(1n);
    expect(pool.blockCandidates(1e9, 100).map((e) => e.tx.nonce)).toEqual([0n]);
    expect(await codeOf(pool.add(encodeTx(pay(alice, 4n))))).toBe(MempoolErrorCode.NONCE_TOO_FAR);
    await pool.add(encodeTx(pay(alice, 1n)));
    expect(pool.pendingNonce(alice.address, 0n)).toBe(3n);
    expect(pool.blockCandidates(1e9, 100).map((e) => e.tx.nonce)).toEqual([0n, 1n, 2n]);
    const block = await mineFromPool(chain, pool);
    expect(block.txs.length).toBe(3);
    expect(pool.count).toBe(0);
    expect((await chain.getAccount(alice.address)).nonce).toBe(3n);
    await teardown(chain, pool);
  });

  test('orders by fee rate across senders, nonce order within a sender', async () => {
    const { chain, pool } = await setup();
    await pool.add(encodeTx(pay(alice, 0n, 1000n, 20_000n)));
    await pool.add(encodeTx(pay(alice, 1n, 1000n, 90_000n)));
    await pool.add(encodeTx(pay(bob, 0n, 1000n, 40_000n)));
    const order = pool.blockCandidates(1e9, 100).map((e) => `${toHex(e.tx.from) === toHex(alice.address) ? 'a' : 'b'}${e.tx.nonce}`);
    expect(order).toEqual(['b0', 'a0', 'a1']);
    expect(pool.blockCandidates(1e9, 2).length).toBe(2);
    await teardown(chain, pool);
  });

  test('replaces a pending nonce only with a higher fee rate', async () => {
    const { chain, pool } = await setup();
    const first = pay(alice, 0n, 1000n, 20_000n);
    await pool.add(encodeTx(first));
    expect(await codeOf(pool.add(encodeTx(pay(alice, 0n, 999n, 20_500n))))).toBe(MempoolErrorCode.REPLACEMENT_UNDERPRICED);
    const better = pay(alice, 0n, 999n, 30_000n);
    await pool.add(encodeTx(better));
    expect(pool.has(toHex(txId(first)))).toBe(false);
    expect(pool.has(toHex(txId(better)))).toBe(true);
    expect(pool.count).toBe(1);
    await teardown(chain, pool);
  });

  test('evicts the lowest fee rate when over the byte cap', async () => {
    const size = encodeTx(pay(alice, 0n)).length;
    const { chain, pool } = await setup({ maxBytes: size * 2 + 100 });
    await pool.add(encodeTx(pay(alice, 0n, 1000n, 30_000n)));
    await pool.add(encodeTx(pay(bob, 0n, 1000n, 20_000n)));
    const rich = pay(dev, 0n, 1000n, 50_000n);
    await pool.add(encodeTx(rich));
    expect(pool.count).toBe(2);
    expect(pool.pendingNonce(bob.address, 0n)).toBe(0n);
    expect(await codeOf(pool.add(encodeTx(pay(bob, 0n, 1000n, 21_000n))))).toBe(MempoolErrorCode.FULL);
    expect(pool.bytes).toBeLessThanOrEqual(size * 2 + 100);
    await teardown(chain, pool);
  });

  test('expires old entries', async () => {
    let t = 1_000_000;
    const { chain, pool } = await setup({ expirySeconds: 60, now: () => t });
    await pool.add(encodeTx(pay(alice, 0n)));
    t += 61_000;
    (pool as unknown as { expire(): void }).expire();
    expect(pool.count).toBe(0);
    await teardown(chain, pool);
  });

  test('a 5-block reorganisation: the heavier branch wins, the mempool takes back every disconnected transfer, the state equals a replay', async () => {
    const { chain, pool } = await setup();
    const sent = await payAndMine(chain, pool, 5);
    expect(chain.tip.height).toBe(5);
    expect(pool.count).toBe(0);
    // A heavier branch of 6 blocks without those transfers.
    const other = new MemChain(params);
    for (let i = 0; i < 6; i++) await extendBranch(other, chain);
    await pool.idle();
    expect(chain.tip.hashHex).toBe(toHex(other.tip.hash));
    expect(await chain.exportState()).toEqual(other.state);
    for (const tx of sent) expect(pool.has(toHex(txId(tx)))).toBe(true);
    expect(pool.blockCandidates(1e9, 100).map((e) => e.tx.nonce)).toEqual([0n, 1n, 2n, 3n, 4n]);
    await teardown(chain, pool);
  });

  test('a reorganisation while the tip keeps moving: what the re-admission could not place is re-admitted at the next tip change, nothing lost', async () => {
    const { chain, pool } = await setup();
    const sent = await payAndMine(chain, pool, 3);
    const other = new MemChain(params);
    const extend = () => extendBranch(other, chain);
    // Every state read of alice's account (the re-admission of her transfers) sees a new block
    // connect: the first transfer's admission gives up with mempool_tip_moving after its retries.
    const read = chain.getStateView.bind(chain);
    let moves = 0;
    chain.getStateView = async (keys) => {
      const view = await read(keys);
      if (moves < 6 && keys.includes(accountKey(alice.address))) {
        moves++;
        await extend();
      }
      return view;
    };
    for (let i = 0; i < 4; i++) await extend(); // heavier than the 3 blocks mining alice's transfers
    for (let i = 0; i < 100 && moves < 6; i++) await new Promise((r) => setTimeout(r, 10));
    await pool.idle();
    await pool.idle();
    expect(moves).toBe(6);
    expect(chain.tip.hashHex).toBe(toHex(other.tip.hash));
    for (const tx of sent) expect(pool.has(toHex(txId(tx)))).toBe(true);
    expect(pool.blockCandidates(1e9, 100).map((e) => e.tx.nonce)).toEqual([0n, 1n, 2n]);
    await teardown(chain, pool);
  });
});
