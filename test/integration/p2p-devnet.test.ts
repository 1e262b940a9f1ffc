/**
 * `native-node devnet --nodes 3` as an operator runs it (free ports here): three connected
 * mining nodes from one genesis converge on one tip; SIGTERM stops them all and the command
 * exits 0.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnDevnet } from '../helpers/devnetProcess.js';
import { getJson, status, waitUntil } from '../p2p/helpers/processes.js';

interface DevnetInfo {
  dir: string;
  genesis: string;
  nodes: { name: string; url: string; peerId: string; p2p: string[]; dataDir: string; log: string; pid: number }[];
}

const dir = mkdtempSync(join(tmpdir(), 'native-p2p-devnet-'));
let child: ChildProcess | undefined;
let exited: Promise<number | null> | undefined;

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGKILL');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

function startDevnet(): Promise<DevnetInfo> {
  const d = spawnDevnet<DevnetInfo>(['--nodes', '3', '--data-dir', join(dir, 'net'), '--http-port', '0', '--p2p-port', '0'], dir);
  child = d.child;
  exited = d.exited;
  return d.info;
}

describe('native-node devnet --nodes 3', () => {
  let info: DevnetInfo;

  test('starts three nodes with their own data directories and ports, one genesis, connected', async () => {
    info = await startDevnet();
    expect(info.nodes.map((n) => n.name)).toEqual(['node1', 'node2', 'node3']);
    expect(new Set(info.nodes.map((n) => n.url)).size).toBe(3);
    expect(new Set(info.nodes.map((n) => n.p2p[0])).size).toBe(3);
    const genesis = readFileSync(info.genesis, 'utf8');
    for (const n of info.nodes) {
      expect(readFileSync(join(n.dataDir, 'genesis.json'), 'utf8')).toBe(genesis);
      expect(existsSync(n.log)).toBe(true);
    }
    const g = await Promise.all(info.nodes.map((n) => getJson(n.url, '/api/v1/block/0')));
    expect(new Set(g.map((x) => x.hash)).size).toBe(1);
    await waitUntil(async () => (await Promise.all(info.nodes.map((n) => status(n.url)))).every((s) => s.peers === 2), 30_000, 'every node to have 2 peers');
  }, 240_000);

  test('the three mining nodes converge on one tip', async () => {
    let seen: { height: number; tip: string }[] = [];
    await waitUntil(
      async () => {
        seen = await Promise.all(info.nodes.map((n) => status(n.url)));
        return seen.every((s) => s.height >= 4) && new Set(seen.map((s) => s.tip)).size === 1;
      },
      120_000,
      'one common tip at height ≥ 4',
      200,
    );
    // Nodes that joined through a bootstrap peer start mining once they know its chain (within a few seconds).
    await waitUntil(async () => (await Promise.all(info.nodes.map((n) => getJson(n.url, '/api/v1/status')))).every((s) => s.mining.running === true), 30_000, 'all three nodes mining');
  }, 130_000);

  test('SIGTERM stops every node and the command exits 0', async () => {
    child!.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([exited!, new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), 45_000)))]);
    clearTimeout(timer);
    expect(code).toBe(0);
    for (const n of info.nodes) {
      expect(() => process.kill(n.pid, 0)).toThrow();
      expect(readFileSync(n.log, 'utf8')).toContain('"msg":"stopped"');
    }
  }, 60_000);
});
