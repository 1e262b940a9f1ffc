/**
 * `npm run bench -- import [--blocks N] [--txs-per-block N] [--threads N]`
 *
 * Block import throughput: builds a devnet chain of blocks full of signed transfers (half of
 * the senders publish their key in that transaction, half already did), then imports the raw
 * blocks into a fresh LevelDB-backed chain whose signature checks run on the worker pool with
 * a cold cache, as after a download from a peer. Prints transactions and blocks per second.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createMLDSA87 } from '@oqs/liboqs-js/sig';
import { ed25519 } from '@noble/curves/ed25519.js';
import { applyBlock, writeChanges } from '../consensus/apply.js';
import { assembleBlock, grindHeader } from '../consensus/assemble.js';
import { blockHash, encodeBlock } from '../consensus/block.js';
import { encodeAddress } from '../consensus/address.js';
import { createDevnetChainParams } from '../consensus/devnet.js';
import { createGenesisBlock, createGenesisState } from '../consensus/genesis.js';
import { createKeyPairFromSeed, type HybridKeyPair } from '../consensus/keys.js';
import { sha256 } from '../consensus/hash.js';
import { COIN } from '../consensus/params.js';
import { encodeTx, txSighash, TxType, TX_VERSION, type Tx, type UnsignedTx } from '../consensus/tx.js';
import { transfer } from '../consensus/txTypes/transfer.js';
import { openChain } from '../chain/chain.js';
import { createVerifyPool } from '../chain/verifyPool.js';

/** Runs the import benchmark. */
export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { blocks: { type: 'string', default: '20' }, 'txs-per-block': { type: 'string', default: '1000' }, threads: { type: 'string' } } });
  const nBlocks = Number(values.blocks);
  const perBlock = Number(values['txs-per-block']);
  const senders = perBlock;
  console.log(`preparing ${nBlocks} blocks × ${perBlock} transfers from ${senders} senders…`);
  const keys: HybridKeyPair[] = [];
  for (let i = 0; i < senders; i++) keys.push(createKeyPairFromSeed(sha256(new TextEncoder().encode(`bench-sender-${i}`))));
  const params = createDevnetChainParams({
    genesisBits: 0x207fffff,
    allocations: keys.map((k) => ({ address: encodeAddress(k.address, 'tnative'), amount: 1000n * COIN })),
    limits: { maxBlockBytes: 16_000_000, maxBlockTxs: 10_000 },
  });
  const oqs = await createMLDSA87();
  const sign = (u: UnsignedTx, kp: HybridKeyPair): Tx => {
    const msg = txSighash(u);
    return { ...u, signature: { mldsa: oqs.sign(msg, kp.mldsaSecret), ed25519: ed25519.sign(msg, kp.ed25519Secret) } };
  };

  const state = new Map<string, Uint8Array>();
  writeChanges(state, createGenesisState(params));
  const view = { get: (k: string) => state.get(k) };
  const genesis = createGenesisBlock(params);
  let parent = { hash: blockHash(genesis.header), height: 0, time: genesis.header.time };
  const blocks: Uint8Array[] = [];
  const recipient = createKeyPairFromSeed(new Uint8Array(32).fill(9)).address;
  let totalTxs = 0;
  const tPrep = performance.now();
  for (let b = 0; b < nBlocks; b++) {
    const txs: Tx[] = [];
    for (let i = 0; i < perBlock; i++) {
      const kp = keys[i % senders];
      const nonce = BigInt(b);
      txs.push(sign({ version: TX_VERSION, chainId: params.chainId, type: TxType.transfer, from: kp.address, nonce, fee: 20_000n, payload: transfer.encodePayload({ to: recipient, amount: 1000n }), publicKey: nonce === 0n ? kp.publicKey : undefined }, kp));
    }
    const draft = assembleBlock({ parent, medianTimePast: parent.time, now: parent.time + 3, txs, miner: recipient, state: view }, params);
    const block = { ...draft, header: grindHeader(draft.header, params.powLimit)! };
    writeChanges(state, applyBlock(view, block, params).changes);
    blocks.push(encodeBlock(block, txs.map(encodeTx)));
    parent = { hash: blockHash(block.header), height: parent.height + 1, time: block.header.time };
    totalTxs += txs.length;
  }
  console.log(`prepared in ${((performance.now() - tPrep) / 1000).toFixed(1)} s; ${(blocks.reduce((s, b) => s + b.length, 0) / 1e6).toFixed(1)} MB of blocks`);

  const dir = await mkdtemp(join(tmpdir(), 'native-bench-import-'));
  const pool = await createVerifyPool(values.threads ? { threads: Number(values.threads) } : {});
  let verifyMs = 0;
  const timedVerifier = {
    async verifyBatch(jobs: Parameters<typeof pool.verifyBatch>[0]) {
      const t = performance.now();
      const r = await pool.verifyBatch(jobs);
      verifyMs += performance.now() - t;
      return r;
    },
  };
  const chain = await openChain({ dataDir: dir, params, verifier: timedVerifier, now: () => parent.time + 10 });
  try {
    const t0 = performance.now();
    for (const raw of blocks) {
      const r = await chain.addBlock(raw);
      if (r.status !== 'connected') throw new Error(`block not connected: ${r.status}`);
    }
    const secs = (performance.now() - t0) / 1000;
    const stats = pool.stats();
    console.log('');
    console.log('| metric | value |');
    console.log('|---|---|');
    console.log(`| blocks imported | ${nBlocks} |`);
    console.log(`| transfers imported | ${totalTxs} |`);
    console.log(`| seconds | ${secs.toFixed(2)} |`);
    console.log(`| blocks per second | ${(nBlocks / secs).toFixed(2)} |`);
    console.log(`| transfers per second | ${Math.round(totalTxs / secs)} |`);
    console.log(`| verify threads | ${stats.threads} |`);
    console.log(`| time waiting for signature checks | ${(verifyMs / 1000).toFixed(2)} s (${Math.round((verifyMs / 10 / secs))}%) |`);
  } finally {
    await chain.close();
    await pool.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
