/**
 * Hybrid signature verification throughput (ML-DSA-87 + Ed25519, both must verify), in one run:
 * the @noble reference and the fast path (liboqs WASM + OpenSSL) on the main thread, then the
 * worker pool with one thread and with every core. Options: `--seconds N` per measurement
 * (default 3), `--messages N` distinct signed messages, each under its own key (default 200).
 */
import { availableParallelism, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { createKeyPairFromSeed, signHybrid, verifyHybridReference } from '../consensus/keys.js';
import { createFastVerifier } from '../consensus/fastVerify.js';
import { createVerifyPool, type VerifyJob } from '../chain/verifyPool.js';
import { sha256 } from '../consensus/hash.js';

interface Row {
  readonly path: string;
  readonly threads: number;
  readonly where: string;
  readonly opsPerSec: number;
  /** Verifications per CPU-second of the whole process (all threads): robust when other processes share the cores. */
  readonly opsPerCpuSec: number;
}

interface Rate {
  readonly opsPerSec: number;
  readonly opsPerCpuSec: number;
}

function rate(done: number, wallStart: number, cpuStart: NodeJS.CpuUsage): Rate {
  const wall = (performance.now() - wallStart) / 1000;
  const cpu = process.cpuUsage(cpuStart);
  return { opsPerSec: done / wall, opsPerCpuSec: done / ((cpu.user + cpu.system) / 1e6) };
}

function option(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  const raw = i >= 0 ? args[i + 1] : args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new RangeError(`--${name} must be a positive number`);
  return n;
}

/** Jobs without ids, so the pool's cache never answers for the workers. */
function prepareJobs(count: number): VerifyJob[] {
  const enc = new TextEncoder();
  return Array.from({ length: count }, (_, i) => {
    const kp = createKeyPairFromSeed(sha256(enc.encode(`bench-verify-key-${i}`)));
    const msg = sha256(enc.encode(`bench-verify-msg-${i}`));
    return { pub: kp.publicKey, msg, sig: signHybrid(kp, msg) };
  });
}

/** Verifications per second of `verify` cycling over the jobs on this thread for `seconds`. */
function measureSync(jobs: readonly VerifyJob[], seconds: number, verify: (job: VerifyJob) => boolean): Rate {
  for (let i = 0; i < Math.min(jobs.length, 20); i++) verify(jobs[i]); // warm-up: JIT, WASM tiers
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  const deadline = start + seconds * 1000;
  let done = 0;
  while (performance.now() < deadline) {
    if (!verify(jobs[done % jobs.length])) throw new Error(`job ${done % jobs.length} did not verify`);
    done++;
  }
  return rate(done, start, cpuStart);
}

/** Verifications per second through a pool of `threads`, two batches in flight so workers never wait. */
async function measurePool(jobs: VerifyJob[], seconds: number, threads: number): Promise<Rate> {
  const pool = await createVerifyPool({ threads, cacheSize: 0 });
  try {
    await pool.verifyBatch(jobs); // warm-up
    const cpuStart = process.cpuUsage();
    const start = performance.now();
    const deadline = start + seconds * 1000;
    let done = 0;
    const lane = async (): Promise<void> => {
      while (performance.now() < deadline) {
        const results = await pool.verifyBatch(jobs);
        if (!results.every(Boolean)) throw new Error('a valid job did not verify in the pool');
        done += results.length;
      }
    };
    await Promise.all([lane(), lane()]);
    return rate(done, start, cpuStart);
  } finally {
    await pool.stop();
  }
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

/** Runs the benchmark and prints the table. */
export async function run(args: string[]): Promise<void> {
  const seconds = option(args, 'seconds', 3);
  const messages = Math.floor(option(args, 'messages', 200));
  const cores = availableParallelism();

  const t0 = performance.now();
  const jobs = prepareJobs(messages);
  console.log(`prepared ${messages} signed messages (one key each) in ${((performance.now() - t0) / 1000).toFixed(1)} s; ${seconds} s per measurement, ${cores} cores`);

  const rows: Row[] = [];
  const load = (): string => loadavg().map((l) => l.toFixed(2)).join(' ');
  const loadBefore = load();
  rows.push({ path: 'noble (reference)', threads: 1, where: 'main thread', ...measureSync(jobs, seconds, (j) => verifyHybridReference(j.pub, j.msg, j.sig)) });
  const fast = await createFastVerifier();
  rows.push({ path: 'fast (liboqs WASM + OpenSSL)', threads: 1, where: 'main thread', ...measureSync(jobs, seconds, (j) => fast.verify(j.pub, j.msg, j.sig)) });
  const poolSizes = [...new Set([1, cores])];
  for (const threads of poolSizes) {
    rows.push({ path: 'pool (fast path)', threads, where: 'workers', ...(await measurePool(jobs, seconds, threads)) });
  }

  const baseline = rows[0].opsPerSec;
  const header = ['path', 'threads', 'where', 'verifications/s', 'per thread', 'vs noble 1 core', 'per CPU-second'];
  const body = rows.map((r) => [
    r.path,
    String(r.threads),
    r.where,
    fmt(r.opsPerSec),
    fmt(r.opsPerSec / r.threads),
    `${(r.opsPerSec / baseline).toFixed(1)}×`,
    fmt(r.opsPerCpuSec),
  ]);
  const widths = header.map((h, c) => Math.max(h.length, ...body.map((b) => b[c].length)));
  const line = (cells: string[]): string => `| ${cells.map((cell, c) => (c === 0 || c === 2 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join(' | ')} |`;
  console.log('');
  console.log(line(header));
  console.log(`|${widths.map((w, c) => (c === 0 || c === 2 ? `-${'-'.repeat(w)}-` : `-${'-'.repeat(w)}:`)).join('|')}|`);
  for (const b of body) console.log(line(b));

  const fastRow = rows[1];
  const pool1 = rows.find((r) => r.where === 'workers' && r.threads === 1);
  const poolAll = rows.find((r) => r.where === 'workers' && r.threads === cores);
  console.log('');
  console.log(`load average (1/5/15 min) before: ${loadBefore}, after: ${load()}`);
  console.log(`fast / noble, one core: ${(fastRow.opsPerSec / baseline).toFixed(1)}×`);
  if (pool1) console.log(`pool with 1 thread / fast on the main thread: ${(pool1.opsPerSec / fastRow.opsPerSec).toFixed(2)}× (messaging overhead)`);
  if (pool1 && poolAll && cores > 1) {
    console.log(`pool scaling 1 → ${cores} threads: ${(poolAll.opsPerSec / pool1.opsPerSec).toFixed(2)}× (ideal ${cores}×)`);
    console.log(`CPU cost per verification, pool ${cores} threads / pool 1 thread: ${(pool1.opsPerCpuSec / poolAll.opsPerCpuSec).toFixed(2)}× (1.00 = no parallel overhead)`);
  }
}
