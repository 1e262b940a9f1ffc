/**
 * `npm run bench -- install [--rev <git revision>] [--reference]`
 *
 * What a fresh clone installs: the files of the working tree (tracked and untracked, not
 * ignored) or of `--rev`, copied into a temporary directory, then
 *   1. `npm ci` (what the README's set-up runs; `prepare` builds build/),
 *   2. `npm ci --omit=dev` (a production install) after deleting node_modules,
 *   3. `npm ci --omit=dev --omit=optional` the same way: without viem's optional peer dependency
 *      `typescript`, which npm keeps in 2 because the dev tree has it (`devOptional`; the only
 *      optional package of the production tree),
 *   4. with `--reference`, `npm ci` in reference/ (the reference x402 stacks of the client tests).
 * Prints, for each, the time, the size of node_modules on disk (`du -sm`, MiB), the number of
 * packages and the EBADENGINE warnings npm printed (the team's rule: none).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from '../test/helpers/nodeProcess.js';

interface InstallRow {
  readonly what: string;
  readonly seconds: number;
  readonly mib: number;
  readonly packages: number;
  readonly ebadengine: number;
  readonly ok: boolean;
}

/** Copies the tree to install: a git revision, or the working tree's non-ignored files. */
function checkout(dest: string, rev: string | undefined): void {
  if (rev) {
    const tar = execFileSync('git', ['archive', '--format=tar', rev], { cwd: ROOT, maxBuffer: 512 * 1024 * 1024 });
    spawnSync('tar', ['-x', '-C', dest], { input: tar });
    return;
  }
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT }).toString('utf8').split('\0').filter(Boolean);
  for (const f of files) {
    mkdirSync(dirname(join(dest, f)), { recursive: true });
    try {
      cpSync(join(ROOT, f), join(dest, f));
    } catch {
      // deleted in the working tree but still tracked
    }
  }
}

function countPackages(nodeModules: string): number {
  let n = 0;
  const walk = (dir: string) => {
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.startsWith('.')) continue;
      if (e.startsWith('@')) walk(join(dir, e));
      else {
        n++;
        walk(join(dir, e, 'node_modules'));
      }
    }
  };
  walk(nodeModules);
  return n;
}

function npmCi(what: string, cwd: string, extra: string[]): InstallRow {
  const t0 = performance.now();
  const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund', ...extra], { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const seconds = (performance.now() - t0) / 1000;
  const out = `${r.stdout}\n${r.stderr}`;
  if (r.status !== 0) process.stderr.write(out.slice(-4000));
  const mib = Number(execFileSync('du', ['-sm', join(cwd, 'node_modules')]).toString().split('\t')[0]);
  return { what, seconds, mib, packages: countPackages(join(cwd, 'node_modules')), ebadengine: (out.match(/EBADENGINE Unsupported engine/g) ?? []).length, ok: r.status === 0 };
}

/** Runs the install benchmark. */
export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { rev: { type: 'string' }, reference: { type: 'boolean', default: false } } });
  const dir = mkdtempSync(join(tmpdir(), 'native-bench-install-'));
  try {
    checkout(dir, values.rev);
    const label = values.rev ?? 'working tree';
    const rows: InstallRow[] = [npmCi('npm ci', dir, [])];
    rmSync(join(dir, 'node_modules'), { recursive: true, force: true });
    rows.push(npmCi('npm ci --omit=dev', dir, ['--omit=dev']));
    rmSync(join(dir, 'node_modules'), { recursive: true, force: true });
    rows.push(npmCi('npm ci --omit=dev --omit=optional', dir, ['--omit=dev', '--omit=optional']));
    if (values.reference) rows.push(npmCi('reference/: npm ci', join(dir, 'reference'), []));
    console.log(`fresh install of ${label} (node ${process.version}, npm ${execFileSync('npm', ['--version']).toString().trim()})\n`);
    console.log('| install | time s | node_modules MiB (du -sm) | packages | EBADENGINE warnings | ok |\n|---|---:|---:|---:|---:|---|');
    for (const r of rows) console.log(`| ${r.what} | ${r.seconds.toFixed(0)} | ${r.mib} | ${r.packages} | ${r.ebadengine} | ${r.ok ? 'yes' : 'FAILED'} |`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
