// Jest's global setup: the node processes the tests start (bin/native-node.js) run the compiled
// build/, as an operator's node does, so build/ must match the sources. When any source file is
// newer than the last build (or there is none), this runs the incremental `tsc -p
// tsconfig.build.json` once before the tests; an up-to-date build costs only the mtime walk.
// A lock directory keeps two jest runs started together from building at the same time.
// NATIVE_NODE_FROM_SOURCE=1 skips all this: the children then run the sources through tsx
// (slower to start: ~2× here, see docs/benchmarks.md).
// The run gets a state directory of its own (XDG_STATE_HOME, inherited by the workers and the
// node processes): the nodes' ledger witnesses outside their data directories go there, not to
// the user's ~/.local/state; globalTeardown.mjs removes it.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const STAMP = join(ROOT, 'build', '.tsbuildinfo');
const LOCK = join(ROOT, 'build', '.building');

/** Newest modification time (ms) of the TypeScript sources under `dir`. */
function newestSource(dir) {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, newestSource(p));
    else if (e.name.endsWith('.ts')) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

function buildIsCurrent() {
  if (!existsSync(STAMP) || !existsSync(join(ROOT, 'build', 'cli', 'cli.js'))) return false;
  const dirs = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')).include;
  const newest = Math.max(...dirs.map((d) => newestSource(join(ROOT, d))), statSync(join(ROOT, 'tsconfig.build.json')).mtimeMs, statSync(join(ROOT, 'tsconfig.json')).mtimeMs);
  return newest <= statSync(STAMP).mtimeMs;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export default async function globalSetup() {
  process.env.XDG_STATE_HOME = process.env.NATIVE_TEST_STATE_HOME = mkdtempSync(join(tmpdir(), 'native-test-state-'));
  if (process.env.NATIVE_NODE_FROM_SOURCE === '1' || buildIsCurrent()) return;
  mkdirSync(join(ROOT, 'build'), { recursive: true });
  // Another jest run builds: wait for it (at most 5 minutes; a lock older than that is stale).
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch {
      if (Date.now() - statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs > 300_000) rmSync(LOCK, { recursive: true, force: true });
      await sleep(500);
    }
  }
  try {
    if (buildIsCurrent()) return;
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const t0 = Date.now();
    const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: ROOT, encoding: 'utf8' });
    // 0: built; 2: built with type errors (`npm test` runs `tsc --noEmit` first and stops on them).
    if (r.status !== 0 && r.status !== 2) throw new Error(`the build before the tests failed (tsc exit ${r.status}):\n${r.stdout}${r.stderr}`);
    if (r.status === 2) process.stderr.write(`warning: build/ was compiled with type errors:\n${r.stdout}\n`);
    else {
      // tsc leaves its build info alone when no file's content changed: mark the build current anyway.
      const now = new Date();
      utimesSync(STAMP, now, now);
    }
    process.stderr.write(`build/ compiled for the node processes of the tests (${((Date.now() - t0) / 1000).toFixed(1)} s)\n`);
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}
