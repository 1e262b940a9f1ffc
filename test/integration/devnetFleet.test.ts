/**
 * `native-node devnet --nodes 3 --ledger postgres://…`: a devnet fleet in one command, on a
 * throwaway PostgreSQL (free ports, a temporary directory). The three nodes print their own HTTP
 * and p2p addresses (Stratum off), share one genesis and one ledger — one seller id, their three
 * heartbeats and one signer lease holder in `fleet status` — and SIGTERM stops them all (their
 * heartbeat rows marked stopped) and the command exits 0. `fleet --help` lists `--ledger`.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFleetStatus } from '../../cli/fleetCommand.js';
import { BIN, childEnv } from '../helpers/nodeProcess.js';
import { spawnDevnet } from '../helpers/devnetProcess.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { getJson, waitUntil } from '../p2p/helpers/processes.js';

interface DevnetInfo {
  dir: string;
  genesis: string;
  ledger: string | null;
  nodes: { name: string; url: string; peerId: string; p2p: string[]; stratum: null; dataDir: string; log: string; pid: number }[];
}

const dir = mkdtempSync(join(tmpdir(), 'native-devnet-fleet-'));
let server: TestPostgres | undefined;
let ledger: string;
let child: ChildProcess | undefined;
let exited: Promise<number | null> | undefined;

beforeAll(async () => {
  server = await startPostgres();
  ledger = await server.createDatabase('devnet_fleet');
}, 60_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGKILL');
    await exited;
  }
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function startDevnet(): Promise<DevnetInfo> {
  // No mining: the fleet is what is tested here, not the chain (p2p-devnet.test.ts mines).
  const d = spawnDevnet<DevnetInfo>(['--nodes', '3', '--ledger', ledger, '--data-dir', join(dir, 'net'), '--http-port', '0', '--p2p-port', '0', '--no-mine'], dir);
  child = d.child;
  exited = d.exited;
  return d.info;
}

describe('native-node devnet --nodes 3 --ledger postgres://…', () => {
  let info: DevnetInfo;

  test('fleet --help lists --ledger', async () => {
    const help = await new Promise<string>((resolve, reject) => execFile(process.execPath, [BIN, 'fleet', '--help'], { env: childEnv(), timeout: 30_000 }, (e, stdout) => (e ? reject(e) : resolve(stdout))));
    expect(help).toMatch(/--ledger\b/);
  }, 30_000);

  test('three nodes on their own ports, one genesis, one ledger: one seller id, three heartbeats, one lease holder', async () => {
    info = await startDevnet();
    expect(info.ledger).toBe(ledger);
    expect(info.nodes.map((n) => n.name)).toEqual(['node1', 'node2', 'node3']);
    expect(new Set(info.nodes.map((n) => n.url)).size).toBe(3);
    expect(new Set(info.nodes.map((n) => n.p2p[0])).size).toBe(3);
    expect(info.nodes.map((n) => n.stratum)).toEqual([null, null, null]);
    const genesis = readFileSync(info.genesis, 'utf8');
    for (const n of info.nodes) expect(readFileSync(join(n.dataDir, 'genesis.json'), 'utf8')).toBe(genesis);
    const statuses = await Promise.all(info.nodes.map((n) => getJson(n.url, '/api/v1/status')));
    const sellers = new Set(statuses.map((s) => (s.payments as { sellerId?: string }).sellerId));
    expect(sellers.size).toBe(1);
    expect([...sellers][0]).toMatch(/^[0-9a-f]{16}$/);
    const nodeIds = info.nodes.map((n) => readFileSync(join(n.dataDir, 'node-id'), 'utf8').trim());
    let view = await readFleetStatus(ledger);
    await waitUntil(
      async () => {
        view = await readFleetStatus(ledger);
        return view.live === 3 && view.leaseHolder !== null;
      },
      30_000,
      'three heartbeats and a lease holder',
    );
    expect(view.nodes.map((n) => n.nodeId).sort()).toEqual([...nodeIds].sort());
    expect(nodeIds).toContain(view.leaseHolder);
    expect(view.nodes.map((n) => n.url).sort()).toEqual(info.nodes.map((n) => n.url).sort());
  }, 240_000);

  test('SIGTERM stops every node (their heartbeats marked stopped) and the command exits 0', async () => {
    child!.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([exited!, new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), 45_000)))]);
    clearTimeout(timer);
    expect(code).toBe(0);
    const view = await readFleetStatus(ledger);
    expect(view.live).toBe(0);
    expect(view.gone.map((g) => g.reason)).toEqual(['stopped', 'stopped', 'stopped']);
  }, 60_000);
});
