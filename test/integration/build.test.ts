/**
 * The production build: `npm run build` compiles the sources into build/, and bin/native-node.js
 * (without NATIVE_NODE_FROM_SOURCE) runs it — a devnet node whose miner and signature workers
 * start from the compiled `.js` files (tsx is not registered in that mode, so a `.ts` worker
 * would fail to load) mines and sells a paid call to the built CLI.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { siblingModuleUrl } from '../../chain/tsWorker.js';
import { BIN, ROOT, childEnv, startNode, stopProcess, type NodeProc } from '../helpers/nodeProcess.js';

let dir: string;
let node: NodeProc | undefined;
const builtEnv = { NATIVE_NODE_FROM_SOURCE: '0' };

function run(file: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd: ROOT, env: childEnv(env), timeout: 240_000, maxBuffer: 8 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'native-build-'));
  const build = await run('npm', ['run', 'build', '--silent']);
  expect(build).toMatchObject({ code: 0 });
}, 240_000);

afterAll(async () => {
  if (node) await stopProcess(node);
  rmSync(dir, { recursive: true, force: true });
});

describe('npm run build and the compiled node', () => {
  test('worker entries resolve to compiled .js beside compiled modules, to .ts beside sources', () => {
    expect(siblingModuleUrl('verifyWorker', 'file:///x/build/chain/verifyPool.js').pathname).toBe('/x/build/chain/verifyWorker.js');
    expect(siblingModuleUrl('verifyWorker', 'file:///x/chain/verifyPool.ts').pathname).toBe('/x/chain/verifyWorker.ts');
    for (const f of ['cli/cli.js', 'chain/verifyWorker.js', 'chain/minerWorker.js']) expect(existsSync(join(ROOT, 'build', f))).toBe(true);
  });

  test('the bin runs the build: a devnet node mines with its worker threads and settles a paid call from the built CLI', async () => {
    node = await startNode(['--dev', '--data-dir', join(dir, 'data'), '--http-port', '0', '--mine-threads', '1', '--no-stratum'], { cwd: dir, env: { ...builtEnv, HOME: join(dir, 'home') }, timeoutMs: 60_000 });
    const r = await run(process.execPath, [BIN, 'call', 'native-world-clock', 'UTC', '--json', '--node', node.url], { ...builtEnv, HOME: join(dir, 'home') });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout.trim().split('\n').pop()!)).toMatchObject({ serviceId: 'native-world-clock', result: { timezone: 'UTC' } });
    expect(node.lines.some((l) => l.msg === 'block connected' || l.msg === 'block found')).toBe(true);
  }, 120_000);
});
