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
    // Each add reads the sender's confirmed account (LevelDB, off the event loop) before its check
    // starts: wait for the second start by time, not by a count of event-loop turns (a loaded
    // machine took more than 50). Held checks never finish, so a pool checking one at a time stays at 1.
    for (const deadline = Date.now() + 10_000; started < 2 && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 5));
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

  test('transactions arriving together are admitted on one state read, each with the answer it gets alone', async () => {
    const forged = { ...pay(bob, 1n), signature: pay(alice, 9n).signature };
    const txs = [pay(alice, 0n), pay(alice, 1n), pay(bob, 0n), pay(alice, 1n), pay(bob, 2n), forged, pay(alice, 2n), pay(carol, 0n), pay(alice, 3n, 1000n, 1n)];
    const outcome = (p: Promise<{ status: string; queued?: boolean }>) => p.then((r) => (r.queued ? 'queued' : r.status), (e: unknown) => (isNodeError(e) ? e.code : String(e)));
    /** Runs the transactions one by one (each waits for the previous answer) or all in one turn. */
    async function run(together: boolean): Promise<{ answers: string[]; reads: number; pending: string[] }> {
      const { chain, pool } = await setup();
      let reads = 0;
      const read = chain.getStateView.bind(chain);
      chain.getStateView = (keys) => ((reads += 1), read(keys));
      const answers: string[] = [];
      if (together) answers.push(...(await Promise.all(txs.map((tx) => outcome(pool.add(encodeTx(tx)))))));
      else for (const tx of txs) answers.push(await outcome(pool.add(encodeTx(tx))));
      const pending = pool.blockCandidates(1e9, 100).map((e) => `${e.tx.nonce}:${toHex(txId(encodeTx(e.tx)))}`);
      await teardown(chain, pool);
      return { answers, reads, pending };
    }
    const alone = await run(false);
    const together = await run(true);
    expect(alone.answers).toEqual(['accepted', 'accepted', 'accepted', MempoolErrorCode.DUPLICATE, 'queued', 'tx_bad_signature', 'accepted', 'tx_insufficient_funds', 'tx_fee_too_low']);
    expect(together.answers).toEqual(alone.answers);
    expect(together.pending).toEqual(alone.pending);
    // Alone, one read per admission that gets that far (the duplicate and the low fee are refused
    // before it); together, one for the whole batch.
    expect(alone.reads).toBe(7);
    expect(together.reads).toBe(1);
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

  test("a sender's next payment is judged on its run as it is now: after a replacement in the run, after a block", async () => {
    const { chain, pool } = await setup();
    // alice holds 10 COIN: three payments of 1, then nonce 1 replaced by one of 7 (a higher fee).
    for (const n of [0n, 1n, 2n]) await pool.add(encodeTx(pay(alice, n, COIN)));
    await pool.add(encodeTx(pay(alice, 1n, 7n * COIN, 40_000n)));
    // What is left (10 − 1 − 7 − 1 − fees, under 1 COIN) cannot pay 2: judged on the run with the
    // replacement, not on the run the previous admissions saw (which left 7 COIN).
    expect(await codeOf(pool.add(encodeTx(pay(alice, 3n, 2n * COIN))))).toBe('tx_insufficient_funds');
    // A block that mines none of alice's run but pays her 5 COIN: her next payment is judged on
    // the new tip's state (the run as before, the balance higher).
    const gift = pay(bob, 0n, 5n * COIN, 20_000n, alice.address);
    const tip = chain.tip;
    const draft = assembleBlock(
      { parent: { hash: tip.hash, height: tip.height, time: tip.header.time }, medianTimePast: chain.medianTimePast(tip), now: tip.header.time + 3, txs: [gift], miner: miner.address, state: await chain.getStateView(blockTouchedKeys({ coinbase: { miner: miner.address }, txs: [gift] } as unknown as Block)) },
      params,
    );
    await chain.addBlock({ ...draft, header: grindHeader(draft.header, params.powLimit)! });
    await pool.idle();
    expect(pool.count).toBe(3);
    expect((await pool.add(encodeTx(pay(alice, 3n, 2n * COIN)))).status).toBe('accepted');
    expect(await codeOf(pool.add(encodeTx(pay(alice, 4n, 4n * COIN))))).toBe('tx_insufficient_funds');
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

  test("a sender's new transaction that cannot enter without evicting its own earlier ones is refused, and those stay", async () => {
    const six = [0n, 1n, 2n, 3n, 4n].map((n) => pay(alice, n, 1000n, 20_000n)).concat(pay(bob, 0n, 1000n, 40_000n));
    const { chain, pool } = await setup({ maxBytes: six.reduce((n, tx) => n + encodeTx(tx).length, 0) + 100 });
    for (const tx of six) await pool.add(encodeTx(tx));
    expect(pool.count).toBe(6);
    // alice's nonce 5 pays more than her package (the lowest) but not enough to lift it above bob's:
    // room for it could only come from her own nonces 0-4, which it needs. Refused; nothing lost.
    expect(await codeOf(pool.add(encodeTx(pay(alice, 5n, 1000n, 30_000n))))).toBe(MempoolErrorCode.FULL);
    expect(pool.count).toBe(6);
    expect(pool.pendingNonce(alice.address, 0n)).toBe(5n);
    expect(pool.pendingNonce(bob.address, 0n)).toBe(1n);
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

  test('zero-balance keys × future nonces: every one refused mempool_unpayable (nonce 0 tx_insufficient_funds), nothing queued, relayed or verified', async () => {
    const { chain, pool, verifier } = await setup();
    const added: string[] = [];
    pool.on('added', (e: { id: string }) => added.push(e.id));
    verifier.calls = 0;
    for (let k = 0; k < 4; k++) {
      const key = testKey(`zero-${k}`);
      expect(await codeOf(pool.add(encodeTx(pay(key, 0n, 1n, 20_000n))))).toBe('tx_insufficient_funds');
      for (let n = 1n; n <= 16n; n++) {
        // A claimed fee of 10,000 NATIVE each: a balance of 0 pays none of it.
        expect(await codeOf(pool.add(encodeTx(pay(key, n, 1n, 10_000n * COIN, carol.address, n === 1n))))).toBe(MempoolErrorCode.UNPAYABLE);
      }
    }
    expect(pool.count).toBe(0);
    expect(pool.stats().queued.count).toBe(0);
    expect(added).toEqual([]);
    // No signature was checked at all: funds come first, on the early path and on the admission's,
    // ready (nonce 0, carrying its keys) or not.
    expect(verifier.calls).toBe(0);
    await teardown(chain, pool);
  });

  test('a queued transaction must be affordable after the pending ones; it is promoted when the gap fills, checked for funds again then', async () => {
    const { chain, pool } = await setup();
    // alice has 10 NATIVE: 4 ready, then 7 beyond a gap is more than she has left.
    await pool.add(encodeTx(pay(alice, 0n, 4n * COIN)));
    expect(await codeOf(pool.add(encodeTx(pay(alice, 2n, 7n * COIN))))).toBe(MempoolErrorCode.UNPAYABLE);
    const q2 = pay(alice, 2n, 3n * COIN);
    expect(await pool.add(encodeTx(q2))).toEqual({ id: toHex(txId(q2)), status: 'accepted', queued: true });
    // Later queued nonces count the earlier queued ones: 4 + 3 + 3 + fees is over 10.
    expect(await codeOf(pool.add(encodeTx(pay(alice, 3n, 3n * COIN))))).toBe(MempoolErrorCode.UNPAYABLE);
    expect(pool.has(toHex(txId(q2)))).toBe(true);
    expect(pool.isQueued(toHex(txId(q2)))).toBe(true);
    expect(pool.count).toBe(1);
    expect(pool.pendingNonce(alice.address, 0n)).toBe(1n);
    // The gap fills: nonce 2 moves to the ready pool (4 + 1 + 3 is affordable) and is relayed ('added').
    const added: string[] = [];
    pool.on('added', (e: { id: string }) => added.push(e.id));
    await pool.add(encodeTx(pay(alice, 1n, 1n * COIN)));
    expect(added).toEqual([toHex(txId(pay(alice, 1n, 1n * COIN))), toHex(txId(q2))]);
    expect(pool.isQueued(toHex(txId(q2)))).toBe(false);
    expect(pool.count).toBe(3);
    expect(pool.stats().queued).toMatchObject({ count: 0, bytes: 0 });
    const block = await mineFromPool(chain, pool);
    expect(block.txs.length).toBe(3);

    // bob: 4 ready, 5 queued (affordable while the gap spends nothing), then a gap filler of 2:
    // 4 + 2 + 5 is over 10, so the queued one is dropped when it would move, the filler stays.
    await pool.add(encodeTx(pay(bob, 0n, 4n * COIN)));
    const b2 = pay(bob, 2n, 5n * COIN);
    await pool.add(encodeTx(b2));
    await pool.add(encodeTx(pay(bob, 1n, 2n * COIN)));
    expect(pool.has(toHex(txId(b2)))).toBe(false);
    expect(pool.count).toBe(2);
    await teardown(chain, pool);
  });

  test('a queued transaction never evicts a ready one; the queue has its own caps and displaces only lower fee rates of its own', async () => {
    const size = encodeTx(pay(alice, 0n)).length;
    const { chain, pool } = await setup({ maxBytes: size * 2 + 100, maxQueued: 2 });
    await pool.add(encodeTx(pay(alice, 0n, 1000n, 20_000n)));
    await pool.add(encodeTx(pay(bob, 0n, 1000n, 20_000n)));
    const ready = pool.list().map((e) => e.id);
    // Far higher fee rates, but beyond a gap: queued, the ready pool untouched.
    const q = [pay(dev, 5n, 1000n, 900_000n, carol.address, true), pay(dev, 6n, 1000n, 800_000n)];
    for (const tx of q) expect((await pool.add(encodeTx(tx))).queued).toBe(true);
    expect(pool.list().map((e) => e.id).sort()).toEqual(ready.sort());
    expect(pool.stats().queued.count).toBe(2);
    // Queue full: a lower rate is refused with the rate to beat, a higher one displaces the lowest.
    const low = await pool.add(encodeTx(pay(alice, 3n, 1000n, 100_000n))).catch((e: unknown) => e);
    expect(isNodeError(low, MempoolErrorCode.QUEUE_FULL)).toBe(true);
    expect((low as { payload: { minFeeRate: number } }).payload.minFeeRate).toBeCloseTo(900_000 / encodeTx(q[0]).length, 6);
    await pool.add(encodeTx(pay(alice, 3n, 1000n, 2_000_000n)));
    expect(pool.has(toHex(txId(q[0])))).toBe(false);
    expect(pool.has(toHex(txId(q[1])))).toBe(true);
    expect(pool.list().map((e) => e.id).sort()).toEqual(ready.sort());
    await teardown(chain, pool);
  });

  test('queued transactions expire after queueExpirySeconds, ready ones after expirySeconds', async () => {
    let t = 1_000_000;
    const { chain, pool } = await setup({ queueExpirySeconds: 60, expirySeconds: 600, now: () => t });
    await pool.add(encodeTx(pay(alice, 0n)));
    await pool.add(encodeTx(pay(alice, 2n)));
    t += 61_000;
    (pool as unknown as { expire(): void }).expire();
    expect(pool.count).toBe(1);
    expect(pool.stats().queued.count).toBe(0);
    await teardown(chain, pool);
  });

  test('mempool_full names the fee rate (and fee) that would enter; eviction ranks packages (a low-fee nonce carried by a high-fee child)', async () => {
    const size = encodeTx(pay(alice, 1n)).length;
    const keyed = encodeTx(pay(alice, 0n)).length;
    const { chain, pool } = await setup({ maxBytes: keyed * 2 + size + 100 });
    // alice: 20k then 90k (package 55k per tx) — bob: 40k alone. bob's package is the lowest.
    await pool.add(encodeTx(pay(alice, 0n, 1000n, 20_000n)));
    await pool.add(encodeTx(pay(alice, 1n, 1000n, 90_000n)));
    await pool.add(encodeTx(pay(bob, 0n, 1000n, 40_000n)));
    expect(pool.stats().evictionFeeRate).toBeCloseTo(40_000 / keyed, 6);
    const refused = await pool.add(encodeTx(pay(dev, 0n, 1000n, 30_000n))).catch((e: unknown) => e);
    expect(isNodeError(refused, MempoolErrorCode.FULL)).toBe(true);
    const payload = (refused as { payload: { minFeeRate: number; minFee: string } }).payload;
    expect(payload.minFeeRate).toBeCloseTo(40_000 / keyed, 6);
    // The fee it names enters, and evicts bob (not alice's 20k nonce, which her child pays for).
    const entering = pay(dev, 0n, 1000n, BigInt(payload.minFee));
    await pool.add(encodeTx(entering));
    expect(pool.has(toHex(txId(entering)))).toBe(true);
    expect(pool.pendingNonce(bob.address, 0n)).toBe(0n);
    expect(pool.pendingNonce(alice.address, 0n)).toBe(2n);
    expect(pool.bytes).toBeLessThanOrEqual(keyed * 2 + size + 100);
    await teardown(chain, pool);
  });

  test('under a flood of unpayable future nonces with a small cap, an honest payment at the minimum fee is admitted and mined', async () => {
    const size = encodeTx(pay(alice, 0n)).length;
    const { chain, pool } = await setup({ maxBytes: size * 3 });
    for (let k = 0; k < 3; k++) {
      const key = testKey(`flood-${k}`);
      for (let n = 1n; n <= 16n; n++) expect(await codeOf(pool.add(encodeTx(pay(key, n, 1n, 1_000n * COIN, carol.address, true))))).toBe(MempoolErrorCode.UNPAYABLE);
    }
    const honest = pay(alice, 0n, 1000n, BigInt(size) * params.minFeeRate);
    await pool.add(encodeTx(honest));
    const block = await mineFromPool(chain, pool);
    expect(block.txs.map((t) => toHex(txId(t)))).toEqual([toHex(txId(honest))]);
    await teardown(chain, pool);
  });
});
