/**
 * Blocks handed to the chain before the previous ones are connected: their signatures are
 * checked ahead on the pool (chain/blockQueue.ts), and the chain still checks every block in
 * full — a bad signature in a queued block is still refused at connect.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { createMLDSA87 } from '@oqs/liboqs-js/sig';
import { ed25519 } from '@noble/curves/ed25519.js';
import { openChain } from '../../chain/chain.js';
import { createVerifyPool } from '../../chain/verifyPool.js';
import { blockHash } from '../../consensus/block.js';
import { writeChanges } from '../../consensus/apply.js';
import { createGenesisBlock, createGenesisState } from '../../consensus/genesis.js';
import { TxErrorCode, ValidationError } from '../../consensus/errors.js';
import { COIN } from '../../consensus/params.js';
import { txSighash, TxType, TX_VERSION, type Tx, type UnsignedTx } from '../../consensus/tx.js';
import { transfer } from '../../consensus/txTypes/transfer.js';
import type { HybridKeyPair } from '../../consensus/keys.js';
import { createBenchSenders, sealBlock } from '../../bench/transferChain.js';
import { cleanupTmp, tmpDir } from '../helpers/tmp.js';

afterAll(cleanupTmp);

/** Three blocks of `perBlock` transfers; `forge` (block index, tx index) gets a signature over another message. */
async function chainOf(perBlock: number, forge?: [number, number]) {
  const { keys, params } = createBenchSenders({ blocks: 3, perBlock, seedPrefix: 'queue-test-' }, 1000n * COIN);
  const oqs = await createMLDSA87();
  const sign = (u: UnsignedTx, kp: HybridKeyPair, bad: boolean): Tx => {
    const msg = txSighash(bad ? { ...u, fee: u.fee + 1n } : u);
    return { ...u, signature: { mldsa: oqs.sign(msg, kp.mldsaSecret), ed25519: ed25519.sign(msg, kp.ed25519Secret) } };
  };
  const state = new Map<string, Uint8Array>();
  writeChanges(state, createGenesisState(params));
  const genesis = createGenesisBlock(params);
  let parent = { hash: blockHash(genesis.header), height: 0, time: genesis.header.time };
  const to = new Uint8Array(20).fill(7);
  const blocks: Uint8Array[] = [];
  for (let b = 0; b < 3; b++) {
    const txs = keys.map((kp, i) => {
      const nonce = BigInt(b);
      const u: UnsignedTx = { version: TX_VERSION, chainId: params.chainId, type: TxType.transfer, from: kp.address, nonce, fee: 20_000n, payload: transfer.encodePayload({ to, amount: 1000n }), publicKey: nonce === 0n ? kp.publicKey : undefined };
      return sign(u, kp, forge !== undefined && forge[0] === b && forge[1] === i);
    });
    const sealed = sealBlock(parent, txs, to, state, params);
    blocks.push(sealed.raw);
    parent = sealed.parent;
  }
  return { params, blocks, now: () => parent.time + 10 };
}

describe('blocks queued in the chain', () => {
  test('are checked ahead on the pool and all connect', async () => {
    const { params, blocks, now } = await chainOf(4);
    const pool = await createVerifyPool({ threads: 1 });
    const chain = await openChain({ dataDir: await tmpDir(), params, verifier: pool, now });
    try {
      const results = await Promise.all(blocks.map((b) => chain.addBlock(b)));
      expect(results.map((r) => r.status)).toEqual(['connected', 'connected', 'connected']);
      expect(chain.tip.height).toBe(3);
      // Blocks 2 and 3 were checked ahead while block 1 connected: no signature was checked twice,
      // and of each pair of requests for one (ahead, then the chain's own) the second hit the cache
      // or joined the first still in progress (which of the two depends on timing).
      const st = pool.stats();
      expect(st.verified).toBe(12);
      expect(st.cacheHits + st.joined).toBeGreaterThanOrEqual(4);
    } finally {
      await chain.close();
      await pool.stop();
    }
  }, 60_000);

  test('a bad signature in a queued block is refused at connect', async () => {
    const { params, blocks, now } = await chainOf(3, [2, 1]);
    const pool = await createVerifyPool({ threads: 1 });
    const chain = await openChain({ dataDir: await tmpDir(), params, verifier: pool, now });
    try {
      const settled = await Promise.allSettled(blocks.map((b) => chain.addBlock(b)));
      expect(settled.slice(0, 2).map((s) => s.status)).toEqual(['fulfilled', 'fulfilled']);
      const third = settled[2];
      expect(third.status).toBe('rejected');
      expect((third as PromiseRejectedResult).reason).toBeInstanceOf(ValidationError);
      expect(((third as PromiseRejectedResult).reason as ValidationError).code).toBe(TxErrorCode.BAD_SIGNATURE);
      expect(chain.tip.height).toBe(2);
    } finally {
      await chain.close();
      await pool.stop();
    }
  }, 60_000);
});
