/**
 * MCP batches against the node's event loop (`npm run bench -- mcp`): a real devnet node
 * process (temporary data directory, miner off, USDC rail on: the full tool list, ~74 kB per
 * `tools/list`) while a probe reads `GET /api/v1/status` one request at a time (10 ms apart) and
 * reports its p50 / p90 / p99. The load runs in a worker thread (its own event loop, so parsing
 * big answers does not delay the probe): 4 clients from one address, each sending JSON-RPC batches
 * of `tools/list` back to back for `--seconds` (default 20):
 *
 *   1. probe alone (a baseline of `--seconds` / 4);
 *   2. batches of 100 (the issue's attack) on a node with the default limits: over the batch cap,
 *      each refused 400 `mcp_batch_too_large`;
 *   3. batches of 20 (the cap) with the default limits: each message counts against
 *      `--http-expensive-rate` (50/s, burst 200), so most are 429 `rate_limited`;
 *   4. batches of 20 on a second node with the limit off (`--http-expensive-rate 0`): every batch
 *      answered, the cost of the tool list itself (built and serialised once, spliced per answer).
 *
 * Each row gives the probe's percentiles, the batches by status, the node's CPU (from /proc) and the
 * 1-minute load average at the end. Target: probe p99 under 50 ms in rows 2 and 3 (the attack
 * against a configured node).
 *
 * Options: `--seconds N` per loaded row (default 20), `--clients N` (default 4).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, get } from 'node:http';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { BIN, ROOT, spawnJsonReady, stopProcess, type NodeProc } from '../test/helpers/nodeProcess.js';
import { percentile } from './percentile.js';
import { processCpuSeconds } from './threadCpu.js';

const USDC_PAY_TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';

function startNode(dataDir: string, extra: string[] = []): Promise<NodeProc> {
  const args = [BIN, 'start', '--dev', '--data-dir', dataDir, '--http-port', '0', '--no-p2p', '--no-stratum', '--no-mine', '--usdc-pay-to', USDC_PAY_TO, '--facilitator-url', 'http://127.0.0.1:9', ...extra];
  return spawnJsonReady(args, { cwd: ROOT, keep: () => false, timeoutMs: 30_000 });
}

/** The load generator (a worker thread): `clients` loops posting `batch` messages until told to stop; counts answers by status. */
const LOAD_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { url, clients, batch } = workerData;
const body = JSON.stringify(Array.from({ length: batch }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'tools/list' })));
const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
let stop = false;
const statuses = {};
let bytes = 0;
parentPort.on('message', () => { stop = true; });
async function client() {
  while (!stop) {
    try {
      const res = await fetch(url, { method: 'POST', headers, body });
      const buf = await res.arrayBuffer();
      bytes += buf.byteLength;
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      // A refused client waits as a polite one would not: straight back in (the attack).
    } catch (e) {
      statuses.error = (statuses.error ?? 0) + 1;
    }
  }
}
Promise.all(Array.from({ length: clients }, client)).then(() => parentPort.postMessage({ statuses, bytes }));
`;

interface Row {
  readonly name: string;
  readonly probes: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly statuses: Record<string, number>;
  readonly mbAnswered: number;
  readonly nodeCpu: number;
  readonly load1: number;
}

/** Probes `statusUrl` for `seconds` while (optionally) the load runs; returns the row. */
async function measure(name: string, node: NodeProc, seconds: number, load?: { clients: number; batch: number }): Promise<Row> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const statusUrl = `${node.url}/api/v1/status`;
  const worker = load ? new Worker(LOAD_WORKER, { eval: true, workerData: { url: `${node.url}/api/mcp`, ...load } }) : undefined;
  const done = worker ? new Promise<{ statuses: Record<string, number>; bytes: number }>((resolve) => worker.once('message', resolve)) : Promise.resolve({ statuses: {}, bytes: 0 });
  // Let the load reach the node before measuring.
  if (worker) await new Promise((r) => setTimeout(r, 1000));
  const cpu0 = await processCpuSeconds(node.child.pid ?? -1);
  const t0 = performance.now();
  const samples: number[] = [];
  while (performance.now() - t0 < seconds * 1000) {
    const s = performance.now();
    await new Promise<void>((resolve, reject) => {
      const req = get(statusUrl, { agent }, (res) => {
        res.resume();
        res.on('end', () => resolve());
      });
      req.on('error', reject);
    });
    samples.push(performance.now() - s);
    await new Promise((r) => setTimeout(r, 10));
  }
  const wall = (performance.now() - t0) / 1000;
  const cpu1 = await processCpuSeconds(node.child.pid ?? -1);
  worker?.postMessage('stop');
  const { statuses, bytes } = await done;
  await worker?.terminate();
  agent.destroy();
  samples.sort((a, b) => a - b);
  const r1 = (x: number) => Math.round(x * 10) / 10;
  return {
    name,
    probes: samples.length,
    p50: r1(percentile(samples, 50)),
    p90: r1(percentile(samples, 90)),
    p99: r1(percentile(samples, 99)),
    max: r1(samples[samples.length - 1]),
    statuses,
    mbAnswered: bytes / 1e6,
    nodeCpu: ((cpu1 - cpu0) / wall) * 100, // NaN where /proc is missing
    load1: loadavg()[0],
  };
}

/** Entry point of `npm run bench -- mcp`. */
export async function run(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { seconds: { type: 'string', default: '20' }, clients: { type: 'string', default: '4' } }, strict: true });
  const seconds = Number(values.seconds);
  const clients = Number(values.clients);
  if (!(seconds > 0) || !(Number.isInteger(clients) && clients > 0)) throw new Error('--seconds and --clients must be positive numbers');
  const dir = await mkdtemp(join(tmpdir(), 'native-bench-mcp-'));
  const limited = await startNode(join(dir, 'limited'));
  let open: NodeProc | undefined;
  try {
    console.log(`node ${limited.url}; ${clients} clients, ${seconds} s per loaded row, ${availableParallelism()} cores, Node ${process.version}; load average before: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    const rows: Row[] = [];
    rows.push(await measure('probe alone', limited, Math.max(2, seconds / 4)));
    rows.push(await measure(`${clients} clients x batches of 100 (default limits: over --mcp-max-batch 20)`, limited, seconds, { clients, batch: 100 }));
    rows.push(await measure(`${clients} clients x batches of 20 (default limits: 50 messages/s, burst 200)`, limited, seconds, { clients, batch: 20 }));
    await stopProcess(limited);
    open = await startNode(join(dir, 'open'), ['--http-expensive-rate', '0']);
    rows.push(await measure(`${clients} clients x batches of 20 (--http-expensive-rate 0: every batch answered)`, open, seconds, { clients, batch: 20 }));
    const head = '| load | probes | probe p50 ms | p90 ms | p99 ms | max ms | batches by status | MB answered | node CPU | load avg (1 min) |\n|---|---:|---:|---:|---:|---:|---|---:|---:|---:|';
    const body = rows
      .map(
        (r) =>
          `| ${r.name} | ${r.probes} | ${r.p50} | ${r.p90} | ${r.p99} | ${r.max} | ${
            Object.entries(r.statuses)
              .map(([k, v]) => `${k}: ${v.toLocaleString('en-US')}`)
              .join(', ') || '—'
          } | ${r.mbAnswered.toFixed(1)} | ${Number.isNaN(r.nodeCpu) ? 'n/a' : `${Math.round(r.nodeCpu)} %`} | ${r.load1.toFixed(2)} |`,
      )
      .join('\n');
    console.log(`\n${head}\n${body}\n`);
    const attack = Math.max(rows[1].p99, rows[2].p99);
    console.log(`probe p99 under the batches against the default limits: ${rows[1].p99} / ${rows[2].p99} ms; target < 50 ms: ${attack < 50 ? 'met' : 'NOT met'}`);
  } finally {
    await stopProcess(limited);
    if (open) await stopProcess(open);
    await rm(dir, { recursive: true, force: true });
  }
}
