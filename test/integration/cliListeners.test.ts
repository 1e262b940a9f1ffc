/**
 * Starting nodes as the tour does: a port already taken gives one line naming the flag that
 * moves that listener (HTTP, p2p, metrics, getblocktemplate RPC, Stratum); `devnet` prints hints
 * that run as printed (from the repository, after `npm ci`) and one Ctrl-C — SIGINT to its
 * process group, as a terminal sends it — stops every node of three cleanly: no "second signal"
 * in any node's log nor in what devnet itself prints (stdout and stderr).
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, ROOT, childEnv, loadFactor } from '../helpers/nodeProcess.js';

const dir = mkdtempSync(join(tmpdir(), 'native-cli-listeners-'));
let devnet: ChildProcess | undefined;

afterAll(async () => {
  if (devnet && devnet.exitCode === null && devnet.pid) {
    try {
      process.kill(-devnet.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

function run(file: string, args: string[], timeoutMs = 60_000): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd: ROOT, env: childEnv(), timeout: Math.round(timeoutMs * loadFactor()), maxBuffer: 8 * 1024 * 1024 }, (e, out, err) => {
      resolve({ code: e ? ((e as { code?: number }).code ?? 1) : 0, out: String(out), err: String(err) });
    });
  });
}

describe('a port already taken', () => {
  test('each listener: exit 2 and one line naming its flag', async () => {
    const taken: Server = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
    const port = String((taken.address() as { port: number }).port);
    try {
      // Every other listener on a free port (or off): the default ports may be taken by other suites running beside this one.
      const p2p = ['--p2p-host', '127.0.0.1', '--p2p-port', '0'];
      const cases: [string, string[], string][] = [
        ['HTTP', ['--http-port', port, ...p2p, '--no-stratum'], 'http'],
        ['peers', ['--http-port', '0', '--p2p-host', '127.0.0.1', '--p2p-port', port, '--no-stratum'], 'p2p'],
        ['metrics', ['--http-port', '0', ...p2p, '--no-stratum', '--metrics-port', port], 'metrics'],
        ['getblocktemplate RPC', ['--http-port', '0', ...p2p, '--no-stratum', '--rpc-port', port, '--rpc-user', 'u', '--rpc-password', 'p'], 'rpc'],
        ['Stratum', ['--http-port', '0', ...p2p, '--stratum-port', port], 'stratum'],
      ];
      for (const [what, args, flag] of cases) {
        const r = await run(process.execPath, [BIN, 'start', '--dev', '--no-mine', '--data-dir', join(dir, flag), ...args]);
        expect({ what, code: r.code, err: r.err }).toEqual({
          what,
          code: 2,
          err: expect.stringMatching(new RegExp(`^error \\w+_listen_failed: cannot listen for ${what} on 127\\.0\\.0\\.1:${port}: the port is in use \\(another node or program has it\\); start with another --${flag}-port \\(0 picks a free port\\)\\n$`)),
        });
      }
    } finally {
      taken.close();
    }
  }, 120_000);
});

describe('native-node devnet', () => {
  test('its hints run as printed, and one Ctrl-C stops every node of three cleanly', async () => {
    const data = join(dir, 'devnet');
    // The command itself (npx would stand between the terminal and it, with its own exit status).
    devnet = spawn(process.execPath, [BIN, 'devnet', '--nodes', '3', '--http-port', '0', '--p2p-port', '0', '--data-dir', data], { cwd: ROOT, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const exited = new Promise<number | null>((r) => devnet!.once('close', (code) => r(code)));
    let out = '';
    let err = '';
    devnet.stdout!.on('data', (d) => (out += String(d)));
    devnet.stderr!.on('data', (d) => (err += String(d)));
    const deadline = Date.now() + 90_000 * loadFactor();
    while (!out.includes('Ctrl-C stops every node.')) {
      if (Date.now() > deadline || devnet.exitCode !== null) throw new Error(`devnet did not print its hints: ${out}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const tries = out
      .slice(out.indexOf('Try:'))
      .split('\n')
      .slice(1)
      .filter((l) => l.startsWith('  '))
      .map((l) => l.trim());
    expect(tries.length).toBe(3);
    for (const line of tries) {
      expect(line).toMatch(/^(npx native-node|curl) /);
      expect(line).not.toMatch(/<[a-z]+>/); // no placeholder: runs as printed
      const r = await run('/bin/sh', ['-c', line], 150_000);
      expect({ line, code: r.code, err: r.err }).toEqual({ line, code: 0, err: expect.any(String) });
    }
    const pids = [...out.matchAll(/data (\S+)/g)].map((m) => join(ROOT, m[1]));
    expect(pids).toHaveLength(3);
    // Ctrl-C in a terminal: SIGINT to the foreground process group.
    process.kill(-devnet.pid!, 'SIGINT');
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([exited, new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), 60_000)))]);
    clearTimeout(timer);
    expect(code).toBe(0);
    // devnet's own output ('close': both pipes read to the end): its stop line, no second signal.
    expect(out).toMatch(/^devnet stopped$/m);
    expect({ out: out.includes('second signal'), err: err.includes('second signal') }).toEqual({ out: false, err: false });
    for (const nodeDir of pids) {
      const log = readFileSync(join(nodeDir, 'node.log'), 'utf8');
      expect({ nodeDir, second: log.includes('second signal'), stopped: log.includes('"msg":"stopped"') }).toEqual({ nodeDir, second: false, stopped: true });
    }
  }, 300_000);
});
