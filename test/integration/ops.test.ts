/**
 * What operators see of a real devnet node process: `/health`, `/ready`, the descriptor's
 * `/.well-known/x402.json` alias, and `GET /metrics` on its own port (`--metrics-port 0`), parsed
 * with a Prometheus text-format parser, before and after a paid call made by the real CLI.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PrometheusFamily } from 'parse-prometheus-text-format';
import { BIN, childEnv, startNode, stopProcess, type NodeProc } from '../helpers/nodeProcess.js';
import { histogramSeries, metricSample as sample, scrapeMetrics } from '../helpers/prometheus.js';

let dir: string;
let node: NodeProc | undefined;
let metricsUrl: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'native-ops-'));
  node = await startNode(['--dev', '--data-dir', join(dir, 'data'), '--http-port', '0', '--metrics-port', '0', '--block-time', '1', '--no-stratum'], { cwd: dir, env: { HOME: join(dir, 'home') } });
  const line = node.lines.find((l) => l.msg === 'metrics listening');
  metricsUrl = String(line?.url);
}, 120_000);

afterAll(async () => {
  if (node) await stopProcess(node);
  rmSync(dir, { recursive: true, force: true });
});

let lastText = '';

/** Scrapes `/metrics` and parses it (the parser throws on malformed text). */
async function scrape(): Promise<Map<string, PrometheusFamily>> {
  const r = await scrapeMetrics(metricsUrl);
  lastText = r.text;
  return r.families;
}

function cli(args: string[]): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args, '--node', node!.url], { cwd: dir, env: childEnv({ HOME: join(dir, 'home') }), timeout: 60_000 }, (err, stdout) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout });
    });
  });
}

describe('health, readiness and the descriptor alias', () => {
  test('GET /health: up, with the version and uptime', async () => {
    const res = await fetch(`${node!.url}/health`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ status: 'ok', version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
    expect(body.uptime).toEqual(expect.any(Number));
  });

  test('GET /ready: 200 on a standalone node that serves (chain open, not syncing)', async () => {
    const res = await fetch(`${node!.url}/ready`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ready: true, checks: { chain: 'ok', sync: 'ok', http: 'ok', refunds: 'ok', ledger: 'ok' } });
  });

  test('GET /.well-known/x402.json is the descriptor of /.well-known/x402', async () => {
    // The node regenerates the document at least once a second (updatedAt): a pair of reads that
    // straddles a regeneration is read again (a few times at most), then compared whole.
    let a: Response | undefined;
    let ja: Record<string, unknown> = {};
    let jb: Record<string, unknown> = {};
    for (let attempt = 0; attempt < 5; attempt++) {
      const [ra, rb] = await Promise.all([fetch(`${node!.url}/.well-known/x402.json`), fetch(`${node!.url}/.well-known/x402`)]);
      a = ra;
      [ja, jb] = (await Promise.all([ra.json(), rb.json()])) as Record<string, unknown>[];
      if (ja.updatedAt === jb.updatedAt) break;
    }
    expect(a!.status).toBe(200);
    expect(a!.headers.get('content-type')).toMatch(/^application\/json/);
    expect(a!.headers.get('access-control-allow-origin')).toBe('*');
    expect(ja).toEqual(jb);
    expect(ja).toMatchObject({ version: 1, payment: { scheme: 'native-x402', asset: 'NATIVE' } });
  });
});

describe('GET /metrics', () => {
  test('is off the API port and parses as Prometheus text with the chain, mempool and process figures', async () => {
    expect((await fetch(`${node!.url}/metrics`)).status).toBe(404);
    const m = await scrape();
    for (const name of [
      'native_chain_height',
      'native_chain_tip_age_seconds',
      'native_chain_difficulty',
      'native_p2p_peers',
      'native_sync_syncing',
      'native_mempool_transactions',
      'native_mempool_bytes',
      'native_refunds_pending',
      'native_refunds_stuck',
      'native_ledger_gap_payments',
      'native_stratum_connections',
      'native_stratum_shares_total',
      'native_pool_hashrate_hps',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
    ]) {
      expect(m.has(name)).toBe(true);
    }
    expect(m.get('native_chain_height')!.type).toBe('GAUGE');
    expect(m.get('native_sync_syncing')!.metrics[0].value).toBe('0');
    // Nothing owed that the payee cannot cover, no stretch of chain the ledger never judged.
    expect(sample(m, 'native_refunds_stuck')).toBe(0);
    expect(sample(m, 'native_ledger_gap_payments')).toBe(0);
    expect(Number(m.get('process_resident_memory_bytes')!.metrics[0].value)).toBeGreaterThan(10_000_000);
    const status = (await (await fetch(`${node!.url}/api/v1/status`)).json()) as { height: number; fleet?: unknown };
    expect(Math.abs(sample(m, 'native_chain_height') - status.height)).toBeLessThanOrEqual(2);
    // A LevelDB ledger is one node's: no fleet figures (test/node/fleet.test.ts has them on PostgreSQL).
    expect(status.fleet).toBeUndefined();
    expect([...m.keys()].filter((k) => k.startsWith('native_fleet_'))).toEqual([]);
  });

  test('a quote and a paid call move the counters: quotes, paid calls by service/rail/outcome, settle latency, HTTP requests by route', async () => {
    const before = await scrape();
    const quote = await fetch(`${node!.url}/api/x402/native-world-clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ request: 'UTC' }) });
    expect(quote.status).toBe(402);
    // The same call again: its 402 comes from the kept rendering.
    const again = await fetch(`${node!.url}/api/x402/native-world-clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ request: 'UTC' }) });
    expect(again.status).toBe(402);
    const r = await cli(['call', 'native-world-clock', 'Europe/Berlin', '--json']);
    expect(r.code).toBe(0);
    const after = await scrape();
    // The CLI asks for a quote too, then settles with payment {txId, salt} (possibly after a 202 while the block is pending).
    expect(sample(after, 'native_x402_quotes_total', { service: 'native-world-clock' }) - sample(before, 'native_x402_quotes_total', { service: 'native-world-clock' })).toBeGreaterThanOrEqual(2);
    const settled = { service: 'native-world-clock', rail: 'native', outcome: 'settled' };
    expect(sample(after, 'native_x402_paid_calls_total', settled) - sample(before, 'native_x402_paid_calls_total', settled)).toBe(1);
    // Its receipt was signed: one more receipt, covered by one more signature (alone, it is a batch of one).
    expect(sample(after, 'native_x402_receipts_signed_total', {}) - sample(before, 'native_x402_receipts_signed_total', {})).toBe(1);
    expect(sample(after, 'native_x402_receipt_signatures_total', {}) - sample(before, 'native_x402_receipt_signatures_total', {})).toBe(1);
    expect(after.get('native_x402_settle_duration_seconds')!.type).toBe('HISTOGRAM');
    // The parser merges the label sets of a histogram into one sample, so its series are read from the text.
    const series = (suffix: 'count' | 'sum' | 'bucket', extra = '') => histogramSeries(lastText, 'native_x402_settle_duration_seconds', suffix, `${extra}rail="native",outcome="settled"`);
    expect(series('count')).toBeGreaterThanOrEqual(1);
    expect(series('bucket', 'le="+Inf",')).toBe(series('count'));
    expect(series('sum')).toBeGreaterThan(0);
    expect(sample(after, 'native_x402_quote_cache_hits_total', {}) - sample(before, 'native_x402_quote_cache_hits_total', {})).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'native_x402_quote_cache_entries', {})).toBeGreaterThanOrEqual(1);
    const route = { method: 'POST', route: '/api/x402/:serviceId', status: '402' };
    expect(sample(after, 'native_http_requests_total', route) - sample(before, 'native_http_requests_total', route)).toBeGreaterThanOrEqual(2);
    expect(sample(after, 'native_http_requests_total', { route: '/api/v1/tx', status: '200' })).toBeGreaterThanOrEqual(1);
  }, 90_000);
});

describe('log formats', () => {
  test('--log-format pretty writes one human line per event; auto is JSON when stdout is not a terminal', async () => {
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, [BIN, 'start', '--dev', '--data-dir', join(dir, 'pretty'), '--http-port', '0', '--no-p2p', '--no-stratum', '--no-mine', '--log-format', 'pretty'], { cwd: dir, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line: ${lines.join('\n')}`)), 30_000);
      let buf = '';
      child.stdout!.on('data', (d: Buffer) => {
        buf += d.toString('utf8');
        const parts = buf.split('\n');
        buf = parts.pop()!;
        lines.push(...parts);
        if (parts.some((l) => / INFO: listening /.test(l))) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    expect(lines.length).toBeGreaterThan(2);
    for (const l of lines) expect(l).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] (INFO|WARN|DEBUG|ERROR): /);
    expect(lines.find((l) => l.includes('listening'))).toMatch(/INFO: listening \{"url":"http:\/\/127\.0\.0\.1:\d+".*"network":"native-devnet"/);
    expect(lines.some((l) => l.includes('[chain]') || l.includes('[x402]') || l.includes('[discovery]') || l.includes('[mempool]'))).toBe(true);
    // The node under test (started without --log-format, stdout a pipe) wrote JSON lines.
    expect(node!.lines.find((l) => l.msg === 'listening')).toMatchObject({ level: 'info', url: node!.url });
  }, 60_000);
});

describe('first hour: wallet new picks the node’s network', () => {
  const walletCli = (args: string[]) =>
    new Promise<{ code: number; stdout: string }>((resolve) => {
      execFile(process.execPath, [BIN, 'wallet', 'new', ...args], { cwd: dir, env: childEnv({ HOME: join(dir, 'home-wallets'), NATIVE_WALLET_PASSPHRASE: 'first hour' }), timeout: 30_000 }, (err, stdout) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout }),
      );
    });

  test('with the devnet node reachable: a devnet wallet, saying it followed the node', async () => {
    const r = await walletCli(['--node', node!.url, '--wallet', join(dir, 'w-devnet.json')]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^address tnative1/m);
    expect(r.stdout).toContain(`network native-devnet (the network of the node at ${node!.url})`);
    const j = await walletCli(['--node', node!.url, '--wallet', join(dir, 'w-devnet2.json'), '--json']);
    expect(JSON.parse(j.stdout)).toMatchObject({ network: 'native-devnet', networkSource: 'node', address: expect.stringMatching(/^tnative1/) });
  });

  test('with no node reachable: the default network, and it says so and how to choose', async () => {
    const r = await walletCli(['--node', 'http://127.0.0.1:1', '--wallet', join(dir, 'w-none.json')]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^address native1/m);
    expect(r.stdout).toContain('network native-mainnet (no node answered at http://127.0.0.1:1, so the default network; start your node first or pass --dev for the other one)');
    const dev = await walletCli(['--node', 'http://127.0.0.1:1', '--dev', '--wallet', join(dir, 'w-dev.json'), '--json']);
    expect(JSON.parse(dev.stdout)).toMatchObject({ network: 'native-devnet', networkSource: 'flag' });
  });
});
