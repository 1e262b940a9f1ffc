/**
 * `npm run bench -- import [--blocks N] [--txs-per-block N] [--threads N] [--economy]`
 *
 * Block import throughput: builds a devnet chain of blocks full of signed transfers (each
 * sender publishes its key in its first transfer; bench/transferChain.ts), then imports the raw
 * blocks into a fresh LevelDB-backed chain whose signature checks run on the worker pool with
 * a cold cache, as after a download from a peer. Prints transactions and blocks per second.
 * `--economy` builds a mixed-economy chain instead (bench/economyChain.ts: swaps, token
 * transfers, liquidity, stakes beside transfers).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openChain } from '../chain/chain.js';
import { buildTransferChain } from './transferChain.js';
import { buildEconomyChain } from './economyChain.js';
import { createVerifyPool } from '../chain/verifyPool.js';

/** Runs the import benchmark. */
export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { blocks: { type: 'string', default: '20' }, 'txs-per-block': { type: 'string', default: '1000' }, threads: { type: 'string' }, economy: { type: 'boolean' } } });
  const nBlocks = Number(values.blocks);
  const perBlock = Number(values['txs-per-block']);
  const kind = values.economy ? 'mixed-economy transactions' : 'transfers';
  console.log(`preparing ${nBlocks} blocks × ${perBlock} ${kind} from ${perBlock} senders…`);
  const tPrep = performance.now();
  const build = values.economy ? buildEconomyChain : buildTransferChain;
  const built = await build({ blocks: nBlocks, perBlock, seedPrefix: 'bench-sender-', limits: { maxBlockBytes: 16_000_000, maxBlockTxs: 10_000 } });
  const { params, blocks, txs: totalTxs, bytes, tipTime } = built;
  if ('mix' in built) console.log(`mix: ${JSON.stringify(built.mix)}`);
  console.log(`prepared in ${((performance.now() - tPrep) / 1000).toFixed(1)} s; ${(bytes / 1e6).toFixed(1)} MB of blocks`);

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
  const chain = await openChain({ dataDir: dir, params, verifier: timedVerifier, now: () => tipTime + 10 });
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
    console.log(`| ${kind} imported | ${totalTxs} |`);
    console.log(`| seconds | ${secs.toFixed(2)} |`);
    console.log(`| blocks per second | ${(nBlocks / secs).toFixed(2)} |`);
    console.log(`| ${kind} per second | ${Math.round(totalTxs / secs)} |`);
    console.log(`| verify threads | ${stats.threads} |`);
    console.log(`| time waiting for signature checks | ${(verifyMs / 1000).toFixed(2)} s (${Math.round((verifyMs / 10 / secs))}%) |`);
  } finally {
    await chain.close();
    await pool.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
