/**
 * x402 on the native rail, in one run (`npm run bench -- x402`):
 *
 * 1. Unpaid-quote throughput and p50/p99 latency at 64 concurrent connections (autocannon), for
 *    `POST /api/x402/native-world-clock {"request": "Europe/Berlin"}` against
 *    (a) our node — a real devnet node process on a temporary data directory, miner off, with the
 *        USDC rail configured so its 402 carries both options (native + exact/base) and validates
 *        the request first — and
 *    (b) the reference middleware `x402-express` 1.2.0 on express 4 in its own process, answering
 *        the 402 of an equivalent route (one exact/base option, no input validation).
 *    Rounds run A B B A after a warm-up of each, so drift and ordering affect both alike. The
 *    load generator (autocannon) runs in a process of its own (`bench/quoteLoad.ts`; with
 *    `--generator in-process`, in the bench process as before), and each round reports the CPU
 *    of the generator and of the server (main thread and all threads, from /proc) and names the
 *    bound: the process whose main thread was busy nearly all the round, or the machine's cores.
 * 2. Settle cost per call: N payments for native-world-clock are made and mined first (node
 *    with its miner on), then the node restarts with the miner off and each payment is settled
 *    once, sequentially, over a keep-alive connection (`?wait=0`: already mined; the body names
 *    the tx and the salt its request hash commits to). Reported beside
 *    it: the unpaid quote of the same request on the same connection (the HTTP + validation
 *    floor), a repeated settle of the same payment (stored answer), the service's own run time
 *    measured in-process, and the node's own "paid call settled" log timing (claim → stored).
 *    Settle overhead = first settle − the service's run time.
 *
 * The reference middleware lives in `reference/` (its own package.json and lock file, installed
 * here on first use), not in the root install.
 *
 * Options: `--seconds N` per autocannon round (default 10), `--connections N` (default 64),
 * `--payments N` (default 110; 0 skips part 2), `--generator process|in-process` (default process),
 * `--cpu-prof DIR` (the node that answers the quote rounds and the settles writes a V8 CPU profile
 * there when it stops: `node --cpu-prof`; the profiler's own cost slows it a little).
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { encodeAddress, TESTNET_HRP } from '../consensus/address.js';
import { getDevKeyPair } from '../consensus/devnet.js';
import { sha256 } from '../consensus/hash.js';
import { createKeyPairFromSeed } from '../consensus/keys.js';
import type { ServiceContext } from '../services/types.js';
import { worldClock } from '../services/world-clock.js';
import { createAgentClient, type AgentQuote } from '../sdk/client.js';
import { BIN, ROOT, spawnJsonReady, stopProcess, type NodeProc } from '../test/helpers/nodeProcess.js';
import { ensureReferenceInstalled, REFERENCE_DIR } from '../test/helpers/reference.js';
import { percentile } from './percentile.js';
import { quoteLoad, type QuoteLoadOptions, type QuoteLoadResult } from './quoteLoad.js';
import { cpuDelta, machineBusySeconds, splitCpu, threadCpu, type ThreadCpu } from './threadCpu.js';

const SERVICE = 'native-world-clock';
const REQUEST = 'Europe/Berlin';
const ZONES = ['Europe/Berlin', 'Asia/Tokyo', 'America/New_York', 'UTC', 'Australia/Sydney', 'Africa/Cairo'];
/** Any valid checksummed EVM address: the USDC payee of both servers' 402. */
const USDC_PAY_TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';

/** Keeps only the node's per-call settle timings out of its log during the load rounds. */
const keepSettled = (l: Record<string, unknown>) => l.msg === 'paid call settled';

/** Starts the node; `nodeArgs` go to node itself, before the script (`--cpu-prof …`). */
function startNode(dataDir: string, mine: boolean, minerAddress: string, nodeArgs: readonly string[] = []): Promise<NodeProc> {
  const args = [...nodeArgs, BIN, 'start', '--dev', '--data-dir', dataDir, '--http-port', '0', '--no-p2p', '--no-stratum', '--usdc-pay-to', USDC_PAY_TO, '--facilitator-url', 'http://127.0.0.1:9', '--miner-address', minerAddress,
    // The load comes from one address: the per-address limit of the expensive endpoints is off for the bench.
    '--http-expensive-rate', '0'];
  return spawnJsonReady(mine ? [...args, '--mine', '--mine-threads', '1'] : [...args, '--no-mine'], { cwd: ROOT, keep: keepSettled, timeoutMs: 30_000 });
}

/** The reference: x402-express 1.2.0 on express 4, one paid POST route, in its own process. */
const EXPRESS_SERVER = `
import express from 'express';
import { paymentMiddleware } from 'x402-express';
const app = express();
app.use(express.json());
app.use(paymentMiddleware(${JSON.stringify(USDC_PAY_TO)}, {
  'POST /api/x402/${SERVICE}': { price: '$0.002', network: 'base', config: { description: 'current time, UTC offset, date, ISO timestamp', mimeType: 'application/json' } },
}));
app.post('/api/x402/${SERVICE}', (req, res) => res.json({ time: new Date().toISOString() }));
const server = app.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ msg: 'listening', url: 'http://127.0.0.1:' + server.address().port }));
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

/** Starts the reference server; its imports resolve from `reference/` (the working directory of `-e` code). */
async function startExpress(): Promise<NodeProc> {
  await ensureReferenceInstalled();
  return spawnJsonReady(['--input-type=module', '-e', EXPRESS_SERVER], { cwd: REFERENCE_DIR, keep: keepSettled, timeoutMs: 30_000 });
}

function stats(samples: readonly number[]): { p50: number; p99: number; mean: number; n: number } {
  const s = [...samples].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p99: percentile(s, 99), mean: s.reduce((a, b) => a + b, 0) / Math.max(1, s.length), n: s.length };
}

/** One timed POST over the shared keep-alive pool; checks the status. */
async function timedPost(url: string, body: unknown, expect: number): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  const ms = performance.now() - t0;
  if (res.status !== expect) throw new Error(`POST ${url} answered ${res.status}, expected ${expect}: ${text.slice(0, 300)}`);
  return ms;
}

/** Where the load generator runs: a process of its own, or the bench process (as before 2026-11-27). */
type Generator = 'process' | 'in-process';

/** CPU of one process in a round, in cores (CPU seconds / wall seconds of the round). */
interface ProcCpu {
  readonly main: number;
  readonly total: number;
}

interface LoadRow {
  readonly target: string;
  readonly reqPerSec: number;
  readonly p50: number;
  readonly p99: number;
  readonly total: number;
  readonly non402: number;
  readonly errors: number;
  /** Wall seconds between the two CPU readings. */
  readonly seconds: number;
  readonly server: ProcCpu;
  readonly generator: ProcCpu;
  /** Cores busy with anything else on the machine (the machine's busy time minus both processes'). */
  readonly others: number;
  /** Which one bounds the round (see `boundOf`). */
  readonly bound: string;
}

/** A main thread busy at least this share of the round is taken as the bound (Node serves and generates load on one thread). */
const BOUND_MAIN = 0.85;

/**
 * The bound of a round: the process whose main thread was busiest, if at least BOUND_MAIN of a
 * core; else the machine's cores, if they were at least BOUND_MAIN busy (by these two processes,
 * or by other work on the machine beside them); else neither (latency, not CPU).
 */
function boundOf(server: string, s: ProcCpu, g: ProcCpu, others: number): string {
  const [name, main] = s.main >= g.main ? [server, s.main] : ['generator', g.main];
  if (main >= BOUND_MAIN) return `${name} main thread`;
  const cores = availableParallelism();
  if (s.total + g.total + others >= BOUND_MAIN * cores) return others >= 0.5 ? 'the cores, shared with other work' : 'the cores';
  return 'not CPU';
}

/** Main-thread and all-thread CPU seconds of `pid` between two readings. */
async function cpuSince(pid: number, before: Map<number, ThreadCpu>): Promise<{ main: number; total: number }> {
  const d = splitCpu(cpuDelta(before, await threadCpu(pid)), pid, 0);
  return { main: d.main, total: d.total };
}

/** Runs the generator in a process of its own; `onStart` runs when the load begins, the answer when it ended. */
function loadInChild(o: QuoteLoadOptions, onStart: (pid: number) => Promise<void>): Promise<QuoteLoadResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', 'quoteLoad.ts'), JSON.stringify(o)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let buf = '';
    let started: Promise<void> | undefined;
    let ended = false;
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString('utf8');
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = JSON.parse(buf.slice(0, nl)) as { msg: string } & QuoteLoadResult;
        buf = buf.slice(nl + 1);
        if (line.msg === 'start') started = onStart(child.pid!);
        // The end reading waits for the start reading (both are /proc reads, a few ms).
        else if (line.msg === 'done') {
          ended = true;
          void (started ?? Promise.resolve()).then(() => resolve(line), reject);
        }
      }
    });
    child.once('exit', (code) => {
      if (!ended) reject(new Error(`the load generator exited with ${code} before its result`));
    });
  });
}

/** One load round against `target` (served by process `serverPid`), with CPU readings of the server and the generator over the round. */
async function load(target: string, url: string, seconds: number, connections: number, serverPid: number, generator: Generator): Promise<LoadRow> {
  const o: QuoteLoadOptions = { url, body: JSON.stringify({ request: REQUEST }), connections, seconds };
  let t0 = 0;
  let server0 = new Map<number, ThreadCpu>();
  let gen0 = server0;
  let machine0 = 0;
  let genPid = process.pid;
  const startReadings = async (pid: number) => {
    genPid = pid;
    [server0, gen0, machine0] = await Promise.all([threadCpu(serverPid), threadCpu(pid), machineBusySeconds()]);
    t0 = performance.now();
  };
  let r: QuoteLoadResult;
  if (generator === 'process') r = await loadInChild(o, startReadings);
  else {
    await startReadings(process.pid);
    r = await quoteLoad(o);
  }
  const [serverS, genS, machine1] = await Promise.all([cpuSince(serverPid, server0), cpuSince(genPid, gen0), machineBusySeconds()]);
  const wall = (performance.now() - t0) / 1000;
  const server = { main: serverS.main / wall, total: serverS.total / wall };
  const gen = { main: genS.main / wall, total: genS.total / wall };
  const others = Math.max(0, (machine1 - machine0) / wall - server.total - gen.total);
  return { target, reqPerSec: r.total / seconds, p50: r.p50, p99: r.p99, total: r.total, non402: r.total - r.n402, errors: r.errors, seconds: wall, server, generator: gen, others, bound: boundOf(target, server, gen, others) };
}

/** Pays `count` quotes from the dev wallet and waits until all are mined. */
async function preparePayments(nodeUrl: string, count: number): Promise<{ quote: AgentQuote; txId: string }[]> {
  const client = createAgentClient({ nodeUrl, key: getDevKeyPair() });
  const out: { quote: AgentQuote; txId: string }[] = [];
  for (let i = 0; i < count; i++) {
    const quote = await client.quote(SERVICE, ZONES[i % ZONES.length]);
    out.push({ quote, txId: await client.pay(quote) });
  }
  const deadline = Date.now() + 120_000;
  for (const p of out) {
    for (;;) {
      const res = await fetch(`${nodeUrl}/api/v1/tx/${p.txId}`);
      const tx = (await res.json()) as { status?: string };
      if (tx.status === 'mined') break;
      if (Date.now() > deadline) throw new Error(`payment ${p.txId} not mined within 120 s`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  return out;
}

/** The service's own run time, in-process (world-clock reads only the clock). */
async function serviceRunMs(iterations: number): Promise<ReturnType<typeof stats>> {
  // world-clock uses ctx.now() only; the rest of the context is never touched.
  const ctx = { now: () => Date.now() } satisfies Pick<ServiceContext, 'now'> as unknown as ServiceContext;
  const run = worldClock.run!;
  const samples: number[] = [];
  for (let i = 0; i < iterations + 200; i++) {
    const t0 = performance.now();
    JSON.parse(JSON.stringify(await run(ctx, ZONES[i % ZONES.length])));
    if (i >= 200) samples.push(performance.now() - t0);
  }
  return stats(samples);
}

const f1 = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 1, minimumFractionDigits: 1 });
const f2 = (n: number) => n.toFixed(2);
const f3 = (n: number) => n.toFixed(3);

/** Runs the benchmark (see module comment). */
export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { seconds: { type: 'string' }, connections: { type: 'string' }, payments: { type: 'string' }, generator: { type: 'string' }, 'cpu-prof': { type: 'string' } }, strict: true });
  const generator = (values.generator ?? 'process') as Generator;
  if (generator !== 'process' && generator !== 'in-process') throw new RangeError('--generator is process or in-process');
  const seconds = Number(values.seconds ?? 10);
  const connections = Number(values.connections ?? 64);
  const payments = Number(values.payments ?? 110);
  if (![seconds, connections].every((n) => Number.isInteger(n) && n > 0) || !(Number.isInteger(payments) && payments >= 0)) throw new RangeError('--seconds and --connections are positive integers, --payments a non-negative one');
  const warm = Math.min(10, Math.floor(payments / 4));
  const nodeArgs: string[] = [];
  if (values['cpu-prof']) {
    const profDir = resolve(values['cpu-prof']);
    await mkdir(profDir, { recursive: true });
    nodeArgs.push('--cpu-prof', '--cpu-prof-dir', profDir);
  }

  console.log(`x402 benchmark: ${availableParallelism()} cores, Node ${process.version}, ${new Date().toISOString()}`);
  console.log(`load average before: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const dir = await mkdtemp(join(tmpdir(), 'native-bench-x402-'));
  const dataDir = join(dir, 'data');
  const minerAddress = encodeAddress(createKeyPairFromSeed(sha256(new TextEncoder().encode('bench-x402-miner'))).address, TESTNET_HRP);
  const procs: NodeProc[] = [];
  try {
    // --- payments, mined while the miner runs
    let paid: { quote: AgentQuote; txId: string }[] = [];
    if (payments > 0) {
      const miningNode = await startNode(dataDir, true, minerAddress);
      procs.push(miningNode);
      const tPay = performance.now();
      paid = await preparePayments(miningNode.url, payments);
      console.log(`paid and mined ${paid.length} native-world-clock calls in ${((performance.now() - tPay) / 1000).toFixed(1)} s`);
      await stopProcess(miningNode);
    }

    // --- the same chain, miner off: nothing else competes for the cores
    const node = await startNode(dataDir, false, minerAddress, nodeArgs);
    procs.push(node);
    const endpoint = `${node.url}/api/x402/${SERVICE}`;
    const quoteMs: number[] = [];
    const settleMs: number[] = [];
    const repeatMs: number[] = [];
    for (let i = 0; i < 200; i++) await timedPost(endpoint, { request: REQUEST }, 402); // warm-up
    for (const [i, p] of paid.entries()) {
      const body = { request: p.quote.request, payment: { txId: p.txId, salt: p.quote.salt } };
      quoteMs.push(await timedPost(endpoint, { request: p.quote.request }, 402));
      const first = await timedPost(`${endpoint}?wait=0`, body, 200);
      const again = await timedPost(`${endpoint}?wait=0`, body, 200);
      if (i >= warm) {
        settleMs.push(first);
        repeatMs.push(again);
      }
    }
    const serverMs = node.lines.filter((l) => l.msg === 'paid call settled' && typeof l.ms === 'number').map((l) => l.ms as number).slice(warm);
    const run = await serviceRunMs(2000);
    const q = stats(quoteMs.slice(warm));
    const s = stats(settleMs);
    const rpt = stats(repeatMs);
    const srv = stats(serverMs);

    // --- quote throughput: ours and the reference, A B B A
    const ref = await startExpress();
    procs.push(ref);
    const targets = { node: endpoint, 'x402-express': `${ref.url}/api/x402/${SERVICE}` } as const;
    const pids = { node: node.child.pid!, 'x402-express': ref.child.pid! } as const;
    const sample = await fetch(targets['x402-express'], { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ request: REQUEST }) });
    if (sample.status !== 402) throw new Error(`the reference answered ${sample.status}, not 402`);
    await load('node', targets.node, 2, connections, pids.node, generator);
    await load('x402-express', targets['x402-express'], 2, connections, pids['x402-express'], generator);
    const rows: LoadRow[] = [];
    for (const t of ['node', 'x402-express', 'x402-express', 'node'] as const) rows.push(await load(t, targets[t], seconds, connections, pids[t], generator));

    console.log('');
    console.log(`## Unpaid quote (402), ${connections} connections, ${seconds} s per round, rounds A B B A, load generator ${generator === 'process' ? 'in its own process' : 'in the bench process'}`);
    console.log('');
    console.log('| server | round | requests/s | p50 ms | p99 ms | requests | non-402 | errors | server CPU, cores: main / all threads | generator CPU, cores: main / all threads | other work, cores | bound |');
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|');
    rows.forEach((r, i) => console.log(`| ${r.target} | ${i + 1} | ${f1(r.reqPerSec)} | ${r.p50} | ${r.p99} | ${r.total} | ${r.non402} | ${r.errors} | ${f2(r.server.main)} / ${f2(r.server.total)} | ${f2(r.generator.main)} / ${f2(r.generator.total)} | ${f2(r.others)} | ${r.bound} |`));
    const avg = (t: string, k: 'reqPerSec' | 'p50' | 'p99') => {
      const xs = rows.filter((r) => r.target === t).map((r) => r[k]);
      return xs.reduce((a, b) => a + b, 0) / xs.length;
    };
    console.log('');
    // CPU per answer does not depend on who else runs on the machine as much as throughput does.
    const usPer402 = (t: string) => {
      const xs = rows.filter((r) => r.target === t);
      return (1e6 * xs.reduce((a, r) => a + r.server.main * r.seconds, 0)) / xs.reduce((a, r) => a + r.total, 0);
    };
    console.log('| server | mean requests/s | mean p50 ms | mean p99 ms | server main-thread CPU per 402, µs |');
    console.log('|---|---:|---:|---:|---:|');
    for (const t of ['node', 'x402-express']) console.log(`| ${t} | ${f1(avg(t, 'reqPerSec'))} | ${f1(avg(t, 'p50'))} | ${f1(avg(t, 'p99'))} | ${usPer402(t).toFixed(0)} |`);
    console.log('');
    const ratio = avg('node', 'reqPerSec') / avg('x402-express', 'reqPerSec');
    const bounds = [...new Set(rows.map((r) => r.bound))];
    const serversBound = rows.every((r) => r.bound === `${r.target} main thread`);
    console.log(`node / x402-express throughput: ${f2(ratio)}×; bound: ${bounds.map((b) => `${b} (rounds ${rows.flatMap((r, i) => (r.bound === b ? [i + 1] : [])).join(', ')})`).join('; ')}`);
    console.log(
      serversBound
        ? 'every round was bound by its server\'s main thread: the ratio compares the servers'
        : `not every round was bound by its server: the throughput ratio compares the servers under that bound; main-thread CPU per 402, x402-express / node: ${f2(usPer402('x402-express') / usPer402('node'))}×`,
    );

    if (paid.length === 0) {
      console.log(`load average after: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
      return;
    }
    console.log('');
    console.log(`## Settle of an already-mined payment (native-world-clock), sequential, keep-alive, ${s.n} calls after ${warm} warm-up`);
    console.log('');
    console.log('| what | p50 ms | p99 ms | mean ms |');
    console.log('|---|---:|---:|---:|');
    console.log(`| unpaid quote, same request and connection (HTTP + validation floor) | ${f3(q.p50)} | ${f3(q.p99)} | ${f3(q.mean)} |`);
    console.log(`| first settle (verify from local state, claim, run, store, receipt) | ${f3(s.p50)} | ${f3(s.p99)} | ${f3(s.mean)} |`);
    console.log(`| repeated settle (stored answer) | ${f3(rpt.p50)} | ${f3(rpt.p99)} | ${f3(rpt.mean)} |`);
    console.log(`| the service's own run (in-process, ${run.n} runs) | ${f3(run.p50)} | ${f3(run.p99)} | ${f3(run.mean)} |`);
    console.log(`| node log "paid call settled" ms (claim → stored, 1 ms resolution) | ${srv.n ? f3(srv.p50) : 'n/a'} | ${srv.n ? f3(srv.p99) : 'n/a'} | ${srv.n ? f3(srv.mean) : 'n/a'} |`);
    console.log('');
    console.log(`settle overhead per call excluding the service (first settle − service run), median: ${f3(s.p50 - run.p50)} ms`);
    console.log(`settle cost beyond an unpaid quote on the same connection (first settle − quote), median: ${f3(s.p50 - q.p50)} ms`);
    console.log(`load average after: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  } finally {
    for (const p of procs.reverse()) await stopProcess(p).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}
