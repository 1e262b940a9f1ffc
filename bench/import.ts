/**
 * `npm run bench -- import [--blocks N] [--txs-per-block N] [--threads N] [--ahead N] [--economy]`
 *
 * Block import throughput: builds a devnet chain of blocks full of signed transfers (each
 * sender publishes its key in its first transfer; bench/transferChain.ts), then imports the raw
 * blocks into a fresh LevelDB-backed chain whose signature checks run on the worker pool with
 * a cold cache, as after a download from a peer. The blocks are handed to the chain `--ahead`
 * at a time (default 4), as a node reading them from disk or a peer has them: the chain checks
 * the signatures of the waiting ones while it connects the first (chain/blockQueue.ts);
 * `--ahead 1` hands one over only when the previous one is connected. Prints transactions and
 * blocks per second, the CPU seconds of the process (all threads) and the load average.
 * `--economy` builds a mixed-economy chain instead (bench/economyChain.ts: swaps, token
 * transfers, liquidity, stakes beside transfers).
 */
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Level } from 'level';
import { openChain, type Chain } from '../chain/chain.js';
import { buildTransferChain } from './transferChain.js';
import { buildEconomyChain } from './economyChain.js';
import { createVerifyPool } from '../chain/verifyPool.js';
import { cpuDelta, splitCpu, threadCpu } from './threadCpu.js';

/**
 * Hands `blocks` to `chain` with up to `ahead` of them waiting behind the one connecting (as a
 * node reading them from disk or a peer has them), in order; throws if one does not connect.
 */
export async function importAhead(chain: Chain, blocks: readonly Uint8Array[], ahead: number): Promise<void> {
  const inflight: ReturnType<Chain['addBlock']>[] = [];
  const settle = async (p: ReturnType<Chain['addBlock']>) => {
    const r = await p;
    if (r.status !== 'connected') throw new Error(`block not connected: ${r.status}`);
  };
  for (const raw of blocks) {
    inflight.push(chain.addBlock(raw));
    if (inflight.length >= ahead) await settle(inflight.shift()!);
  }
  for (const p of inflight) await settle(p);
}

/** Runs the import benchmark. */
export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { blocks: { type: 'string', default: '20' }, 'txs-per-block': { type: 'string', default: '1000' }, threads: { type: 'string' }, ahead: { type: 'string', default: '4' }, economy: { type: 'boolean' } } });
  const ahead = Number(values.ahead);
  if (!Number.isInteger(ahead) || ahead < 1) throw new RangeError('--ahead must be an integer ≥ 1');
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
    async verifyBatch(jobs: Parameters<typeof pool.verifyBatch>[0], opts?: Parameters<typeof pool.verifyBatch>[1]) {
      // Checks ahead (background) wait for nobody: only the chain's own checks count as waiting.
      if (opts?.background) return pool.verifyBatch(jobs, opts);
      const t = performance.now();
      const r = await pool.verifyBatch(jobs, opts);
      verifyMs += performance.now() - t;
      return r;
    },
  };
  const chain = await openChain({ dataDir: dir, params, verifier: timedVerifier, now: () => tipTime + 10 });
  try {
    const load0 = loadavg();
    const cpu0 = process.cpuUsage();
    const threads0 = await threadCpu();
    const t0 = performance.now();
    await importAhead(chain, blocks, ahead);
    const secs = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const threads = cpuDelta(threads0, await threadCpu());
    const load1 = loadavg();
    const stats = pool.stats();
    console.log('');
    console.log('| metric | value |');
    console.log('|---|---|');
    console.log(`| blocks imported | ${nBlocks} |`);
    console.log(`| ${kind} imported | ${totalTxs} |`);
    console.log(`| seconds | ${secs.toFixed(2)} |`);
    console.log(`| blocks per second | ${(nBlocks / secs).toFixed(2)} |`);
    console.log(`| ${kind} per second | ${Math.round(totalTxs / secs)} |`);
    console.log(`| CPU seconds (all threads) | ${((cpu.user + cpu.system) / 1e6).toFixed(2)} |`);
    if (threads.size) {
      const t = splitCpu(threads, process.pid, stats.threads);
      console.log(`| … main thread / verify pool (the ${stats.threads} busiest others) / rest (LevelDB, libuv, V8 GC) | ${t.main.toFixed(2)} / ${t.busiest.toFixed(2)} / ${t.rest.toFixed(2)} |`);
    }
    console.log(`| ${kind} per CPU second | ${Math.round(totalTxs / ((cpu.user + cpu.system) / 1e6))} |`);
    console.log(`| blocks handed over ahead | ${ahead} |`);
    console.log(`| verify threads | ${stats.threads} |`);
    console.log(`| time waiting for signature checks | ${(verifyMs / 1000).toFixed(2)} s (${Math.round((verifyMs / 10 / secs))}%) |`);
    console.log(`| signatures checked by the pool / chain checks answered from its cache | ${stats.verified} / ${stats.cacheHits} |`);
    console.log('');
    console.log(`load average (1/5/15 min) before: ${load0.map((l) => l.toFixed(2)).join(' ')}, after: ${load1.map((l) => l.toFixed(2)).join(' ')}`);
    await chain.close();
    const disk = await dirBytes(dir);
    const per = (d: number) => `${(d / 1e6).toFixed(1)} MB (${Math.round(d / totalTxs)} bytes per ${kind.replace(/s$/, '')}; blocks ${(bytes / 1e6).toFixed(1)} MB)`;
    console.log(`data directory after the import: ${per(disk)}`);
    // What it settles to: the write-ahead log (up to the 64 MiB write buffer) turned into tables,
    // and overwritten records dropped, as LevelDB's own compactions do over time.
    const db = new Level<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view' });
    await db.open();
    // In Node `level` is classic-level, which has compactRange; its browser twin's type does not.
    await (db as unknown as { compactRange(start: string, end: string): Promise<void> }).compactRange('', '\uffff');
    await db.close();
    console.log(`… after a full compaction: ${per(await dirBytes(dir))}`);
  } finally {
    await chain.close();
    await pool.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Bytes of the files under `dir` (the LevelDB directory: blocks, state, undo, indexes, logs). */
async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) total += (await stat(join(e.parentPath ?? e.path, e.name))).size;
  }
  return total;
}
