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
 *    Rounds run A B B A after a warm-up of each, so drift and ordering affect both alike.
 * 2. Settle cost per call: N payments for native-world-clock are made and mined first (node
 *    with its miner on), then the node restarts with the miner off and each payment is settled
 *    once, sequentially, over a keep-alive connection (`?wait=0`: already mined). Reported beside
 *    it: the unpaid quote of the same request on the same connection (the HTTP + validation
 *    floor), a repeated settle of the same payment (stored answer), the service's own run time
 *    measured in-process, and the node's own "paid call settled" log timing (claim → stored).
 *    Settle overhead = first settle − the service's run time.
 *
 * The reference middleware lives in `reference/` (its own package.json and lock file, installed
 * here on first use), not in the root install.
 *
 * Options: `--seconds N` per autocannon round (default 10), `--connections N` (default 64),
 * `--payments N` (default 110).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
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

const SERVICE = 'native-world-clock';
const REQUEST = 'Europe/Berlin';
const ZONES = ['Europe/Berlin', 'Asia/Tokyo', 'America/New_York', 'UTC', 'Australia/Sydney', 'Africa/Cairo'];
/** Any valid checksummed EVM address: the USDC payee of both servers' 402. */
const USDC_PAY_TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';

/** Keeps only the node's per-call settle timings out of its log during the load rounds. */
const keepSettled = (l: Record<string, unknown>) => l.msg === 'paid call settled';

function startNode(dataDir: string, mine: boolean, minerAddress: string): Promise<NodeProc> {
  const args = [BIN, 'start', '--dev', '--data-dir', dataDir, '--http-port', '0', '--no-p2p', '--no-stratum', '--usdc-pay-to', USDC_PAY_TO, '--facilitator-url', 'http://127.0.0.1:9', '--miner-address', minerAddress,
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

interface LoadRow {
  readonly target: string;
  readonly reqPerSec: number;
  readonly p50: number;
  readonly p99: number;
  readonly total: number;
  readonly non402: number;
  readonly errors: number;
}

async function load(target: string, url: string, seconds: number, connections: number): Promise<LoadRow> {
  const r = await autocannon({
    url,
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ request: REQUEST }),
    connections,
    duration: seconds,
  });
  const total = r.requests.total;
  const n402 = r.statusCodeStats?.['402']?.count ?? 0;
  return { target, reqPerSec: total / seconds, p50: r.latency.p50, p99: r.latency.p99, total, non402: total - n402, errors: r.errors + r.timeouts };
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
  const { values } = parseArgs({ args, options: { seconds: { type: 'string' }, connections: { type: 'string' }, payments: { type: 'string' } }, strict: true });
  const seconds = Number(values.seconds ?? 10);
  const connections = Number(values.connections ?? 64);
  const payments = Number(values.payments ?? 110);
  if (![seconds, connections, payments].every((n) => Number.isInteger(n) && n > 0)) throw new RangeError('--seconds, --connections and --payments are positive integers');
  const warm = Math.min(10, Math.floor(payments / 4));

  console.log(`x402 benchmark: ${availableParallelism()} cores, Node ${process.version}, ${new Date().toISOString()}`);
  console.log(`load average before: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const dir = await mkdtemp(join(tmpdir(), 'native-bench-x402-'));
  const dataDir = join(dir, 'data');
  const minerAddress = encodeAddress(createKeyPairFromSeed(sha256(new TextEncoder().encode('bench-x402-miner'))).address, TESTNET_HRP);
  const procs: NodeProc[] = [];
  try {
    // --- payments, mined while the miner runs
    let node = await startNode(dataDir, true, minerAddress);
    procs.push(node);
    const tPay = performance.now();
    const paid = await preparePayments(node.url, payments);
    console.log(`paid and mined ${paid.length} native-world-clock calls in ${((performance.now() - tPay) / 1000).toFixed(1)} s`);
    await stopProcess(node);

    // --- the same chain, miner off: nothing else competes for the cores
    node = await startNode(dataDir, false, minerAddress);
    procs.push(node);
    const endpoint = `${node.url}/api/x402/${SERVICE}`;
    const quoteMs: number[] = [];
    const settleMs: number[] = [];
    const repeatMs: number[] = [];
    for (let i = 0; i < 200; i++) await timedPost(endpoint, { request: REQUEST }, 402); // warm-up
    for (const [i, p] of paid.entries()) {
      const body = { request: p.quote.request, payment: { txId: p.txId } };
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
    const sample = await fetch(targets['x402-express'], { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ request: REQUEST }) });
    if (sample.status !== 402) throw new Error(`the reference answered ${sample.status}, not 402`);
    await load('node', targets.node, 2, connections);
    await load('x402-express', targets['x402-express'], 2, connections);
    const rows: LoadRow[] = [];
    for (const t of ['node', 'x402-express', 'x402-express', 'node'] as const) rows.push(await load(t, targets[t], seconds, connections));

    console.log('');
    console.log(`## Unpaid quote (402), ${connections} connections, ${seconds} s per round, rounds A B B A`);
    console.log('');
    console.log('| server | round | requests/s | p50 ms | p99 ms | requests | non-402 | errors |');
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
    rows.forEach((r, i) => console.log(`| ${r.target} | ${i + 1} | ${f1(r.reqPerSec)} | ${r.p50} | ${r.p99} | ${r.total} | ${r.non402} | ${r.errors} |`));
    const avg = (t: string, k: 'reqPerSec' | 'p50' | 'p99') => {
      const xs = rows.filter((r) => r.target === t).map((r) => r[k]);
      return xs.reduce((a, b) => a + b, 0) / xs.length;
    };
    console.log('');
    console.log('| server | mean requests/s | mean p50 ms | mean p99 ms |');
    console.log('|---|---:|---:|---:|');
    for (const t of ['node', 'x402-express']) console.log(`| ${t} | ${f1(avg(t, 'reqPerSec'))} | ${f1(avg(t, 'p50'))} | ${f1(avg(t, 'p99'))} |`);
    console.log('');
    console.log(`node / x402-express throughput: ${f2(avg('node', 'reqPerSec') / avg('x402-express', 'reqPerSec'))}×`);

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
