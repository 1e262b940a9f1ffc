/**
 * The catalog under load (`npm run bench -- catalog`): `GET /api/x402/bazaar` of a real devnet
 * node process (temporary data directory, miner off, USDC rail on so every entry carries both
 * rails; the full catalog: 58 services, about 60 kB of JSON) at 64 concurrent connections with
 * autocannon, after a warm-up, in `--rounds` rounds. Also measured once each: a filtered query
 * (`?q=clock`), the catalog with `Accept-Encoding: gzip`, and the protocol descriptor.
 *
 * Each row also gives the CPU the node process used (from /proc, Linux) and the CPU of this
 * process (autocannon), in percent of one core: on a 2-core machine the load generator competes
 * with the node, so it shows which side bounds the latency.
 *
 * Options: `--seconds N` per round (default 10), `--connections N` (default 64), `--rounds N`
 * of the full catalog (default 3).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { BIN, ROOT, spawnJsonReady, stopProcess, type NodeProc } from '../test/helpers/nodeProcess.js';
import { processCpuSeconds } from './threadCpu.js';

const USDC_PAY_TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';

/** Starts the node and resolves on its `listening` log line (bounded wait); stdout is drained to the end. */
function startNode(dataDir: string): Promise<NodeProc> {
  const args = [BIN, 'start', '--dev', '--data-dir', dataDir, '--http-port', '0', '--no-p2p', '--no-stratum', '--no-mine', '--usdc-pay-to', USDC_PAY_TO, '--facilitator-url', 'http://127.0.0.1:9'];
  return spawnJsonReady(args, { cwd: ROOT, keep: () => false, timeoutMs: 30_000 });
}

interface Row {
  readonly target: string;
  readonly reqPerSec: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly kbPerResponse: number;
  readonly total: number;
  readonly non200: number;
  readonly errors: number;
  /** CPU of the node process, % of one core (NaN when unknown). */
  readonly nodeCpu: number;
  /** CPU of the load generator (this process), % of one core. */
  readonly clientCpu: number;
}

interface Measure {
  readonly pid?: number;
}

async function load(m: Measure, target: string, url: string, seconds: number, connections: number, headers: Record<string, string> = {}): Promise<Row> {
  const node0 = await processCpuSeconds(m.pid ?? -1);
  const self0 = process.cpuUsage();
  const t0 = performance.now();
  const r = await autocannon({ url, method: 'GET', headers: { accept: 'application/json', ...headers }, connections, duration: seconds });
  const wall = (performance.now() - t0) / 1000;
  const self = process.cpuUsage(self0);
  const node1 = await processCpuSeconds(m.pid ?? -1);
  const total = r.requests.total;
  const ok = r.statusCodeStats?.['200']?.count ?? 0;
  return {
    target,
    reqPerSec: total / seconds,
    p50: r.latency.p50,
    p90: r.latency.p90,
    p99: r.latency.p99,
    max: r.latency.max,
    kbPerResponse: total ? r.throughput.total / total / 1024 : 0,
    total,
    non200: total - ok,
    errors: r.errors + r.timeouts,
    nodeCpu: ((node1 - node0) / wall) * 100, // NaN where /proc is missing
    clientCpu: ((self.user + self.system) / 1e6 / wall) * 100,
  };
}

function table(rows: readonly Row[]): string {
  const head = '| request | req/s | p50 ms | p90 ms | p99 ms | max ms | kB/response | responses | non-200 | errors | node CPU | autocannon CPU |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|';
  const pct = (x: number) => (Number.isNaN(x) ? 'n/a' : `${Math.round(x)} %`);
  const body = rows
    .map((r) => `| ${r.target} | ${Math.round(r.reqPerSec).toLocaleString('en-US')} | ${r.p50} | ${r.p90} | ${r.p99} | ${r.max} | ${r.kbPerResponse.toFixed(1)} | ${r.total.toLocaleString('en-US')} | ${r.non200} | ${r.errors} | ${pct(r.nodeCpu)} | ${pct(r.clientCpu)} |`)
    .join('\n');
  return `${head}\n${body}`;
}

/** Entry point of `npm run bench -- catalog`. */
export async function run(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { seconds: { type: 'string', default: '10' }, connections: { type: 'string', default: '64' }, rounds: { type: 'string', default: '3' } }, strict: true });
  const seconds = Number(values.seconds);
  const connections = Number(values.connections);
  const rounds = Number(values.rounds);
  if (!(seconds > 0) || !(connections > 0) || !(Number.isInteger(rounds) && rounds > 0)) throw new Error('--seconds, --connections and --rounds must be positive numbers');

  const dir = await mkdtemp(join(tmpdir(), 'native-bench-catalog-'));
  const node = await startNode(join(dir, 'data'));
  try {
    const bazaar = `${node.url}/api/x402/bazaar`;
    // Wait for the prober's first round, then check the document once.
    for (let i = 0; i < 100; i++) {
      const doc = (await (await fetch(bazaar)).json()) as { resources: unknown[]; health: { checkedAt: number } };
      if (doc.health.checkedAt > 0) {
        if (doc.resources.length !== 58) throw new Error(`expected the full catalog of 58 services, got ${doc.resources.length}`);
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const loadBefore = loadavg().map((x) => x.toFixed(2)).join(' ');
    console.log(`node ${node.url}; ${seconds} s per round, ${connections} connections, ${availableParallelism()} cores, Node ${process.version}`);
    const m: Measure = { pid: node.child.pid };
    await load(m, 'warm-up', bazaar, Math.min(3, seconds), connections);
    const rows: Row[] = [];
    for (let i = 1; i <= rounds; i++) rows.push(await load(m, `GET /api/x402/bazaar (full catalog), round ${i}`, bazaar, seconds, connections));
    rows.push(await load(m, 'GET /api/x402/bazaar?q=clock', `${bazaar}?q=clock`, seconds, connections));
    rows.push(await load(m, 'GET /api/x402/bazaar, Accept-Encoding: gzip', bazaar, seconds, connections, { 'accept-encoding': 'gzip' }));
    rows.push(await load(m, 'GET /.well-known/x402 (descriptor)', `${node.url}/.well-known/x402`, seconds, connections));
    const loadAfter = loadavg().map((x) => x.toFixed(2)).join(' ');
    console.log(`\n${table(rows)}\n`);
    console.log(`load average (1/5/15 min) before: ${loadBefore}, after: ${loadAfter}`);
    const full = rows.slice(0, rounds).map((r) => r.p99).sort((a, b) => a - b);
    const median = full[Math.floor(full.length / 2)];
    console.log(`full catalog p99 over ${rounds} round(s): ${full.join(', ')} ms (median ${median} ms) at ${connections} connections; target 20 ms: ${median < 20 ? 'met' : 'NOT met'}`);
  } finally {
    await stopProcess(node);
    await rm(dir, { recursive: true, force: true });
  }
}
