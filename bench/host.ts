/**
 * The bazaar under random Host headers (`npm run bench -- host`): `GET /api/x402/bazaar`
 * of a real devnet node process (temporary data directory, miner off, USDC rail on: the full
 * catalog, about 60 kB) at 64 connections with autocannon, in rounds A B B A of `--seconds` each:
 * A with one fixed Host (the listening address), B with a new random `Host` on every request
 * (`r<random>.example:<port>`). Both go through the same per-request hook, so the load generator
 * does the same work in both. Before the catalog was built once, every new Host rebuilt the catalog (documents were
 * kept per Host); now documents name the public URL and are kept once, so the target is B within
 * 10 % of A. Also checked: no answer of a B round names a random Host.
 *
 * Options: `--seconds N` per round (default 10), `--connections N` (default 64).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { BIN, ROOT, spawnJsonReady, stopProcess, type NodeProc } from '../test/helpers/nodeProcess.js';

const USDC_PAY_TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';

function startNode(dataDir: string): Promise<NodeProc> {
  const args = [BIN, 'start', '--dev', '--data-dir', dataDir, '--http-port', '0', '--no-p2p', '--no-stratum', '--no-mine', '--usdc-pay-to', USDC_PAY_TO, '--facilitator-url', 'http://127.0.0.1:9'];
  return spawnJsonReady(args, { cwd: ROOT, keep: () => false, timeoutMs: 30_000 });
}

interface Row {
  readonly round: string;
  readonly reqPerSec: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly total: number;
  readonly non200: number;
  readonly leaked: number;
}

async function round(name: string, url: string, seconds: number, connections: number, hostOf: () => string): Promise<Row> {
  let leaked = 0;
  const r = await autocannon({
    url,
    connections,
    duration: seconds,
    requests: [
      {
        method: 'GET',
        path: '/api/x402/bazaar',
        setupRequest: (req: Record<string, any>) => ({ ...req, headers: { ...req.headers, accept: 'application/json', host: hostOf() } }),
        // Reading every body costs the load generator too much; sample one in 64.
        onResponse: (_status: number, body: string) => {
          if (Math.random() < 1 / 64 && /r[0-9a-f]{12}\.example/.test(body)) leaked++;
        },
      },
    ],
  } as autocannon.Options);
  const total = r.requests.total;
  return { round: name, reqPerSec: total / seconds, p50: r.latency.p50, p99: r.latency.p99, max: r.latency.max, total, non200: total - (r.statusCodeStats?.['200']?.count ?? 0), leaked };
}

/** Entry point of `npm run bench -- host`. */
export async function run(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { seconds: { type: 'string', default: '10' }, connections: { type: 'string', default: '64' } }, strict: true });
  const seconds = Number(values.seconds);
  const connections = Number(values.connections);
  if (!(seconds > 0) || !(connections > 0)) throw new Error('--seconds and --connections must be positive numbers');
  const dir = await mkdtemp(join(tmpdir(), 'native-bench-host-'));
  const node = await startNode(join(dir, 'data'));
  try {
    const bazaar = `${node.url}/api/x402/bazaar`;
    for (let i = 0; i < 100; i++) {
      const doc = (await (await fetch(bazaar)).json()) as { health: { checkedAt: number } };
      if (doc.health.checkedAt > 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const fixed = new URL(node.url).host;
    const port = new URL(node.url).port;
    const random = () => `r${randomBytes(6).toString('hex')}.example:${port}`;
    const loadBefore = loadavg().map((x) => x.toFixed(2)).join(' ');
    console.log(`node ${node.url}; ${seconds} s per round, ${connections} connections, ${availableParallelism()} cores, Node ${process.version}`);
    await round('warm-up', node.url, Math.min(3, seconds), connections, () => fixed);
    const rows: Row[] = [];
    rows.push(await round('A fixed Host', node.url, seconds, connections, () => fixed));
    rows.push(await round('B random Host', node.url, seconds, connections, random));
    rows.push(await round('B random Host', node.url, seconds, connections, random));
    rows.push(await round('A fixed Host', node.url, seconds, connections, () => fixed));
    const loadAfter = loadavg().map((x) => x.toFixed(2)).join(' ');
    const head = '| round | req/s | p50 ms | p99 ms | max ms | responses | non-200 | sampled bodies naming a random Host |\n|---|---:|---:|---:|---:|---:|---:|---:|';
    const body = rows.map((r) => `| ${r.round} | ${Math.round(r.reqPerSec).toLocaleString('en-US')} | ${r.p50} | ${r.p99} | ${r.max} | ${r.total.toLocaleString('en-US')} | ${r.non200} | ${r.leaked} |`).join('\n');
    console.log(`\n${head}\n${body}\n`);
    console.log(`load average (1/5/15 min) before: ${loadBefore}, after: ${loadAfter}`);
    const mean = (xs: Row[]) => xs.reduce((s, r) => s + r.reqPerSec, 0) / xs.length;
    const a = mean(rows.filter((r) => r.round.startsWith('A')));
    const b = mean(rows.filter((r) => r.round.startsWith('B')));
    const ratio = b / a;
    console.log(`random Host / fixed Host throughput: ${Math.round(b)} / ${Math.round(a)} req/s = ${(ratio * 100).toFixed(1)} %; target within 10 %: ${ratio >= 0.9 ? 'met' : 'NOT met'}`);
  } finally {
    await stopProcess(node);
    await rm(dir, { recursive: true, force: true });
  }
}
