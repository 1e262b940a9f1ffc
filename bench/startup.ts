/**
 * `npm run bench -- startup [--runs N] [--idle-seconds S]`
 *
 * Start-up time and memory of a devnet node (`bin/native-node.js start --dev`, fresh data
 * directory, HTTP on a free port, no p2p, no Stratum, no miner) run two ways, alternately:
 *   - build:  the compiled JavaScript of build/ (what the bin runs; `npm run bench` builds first)
 *   - source: the TypeScript sources through tsx (NATIVE_NODE_FROM_SOURCE=1, the former default)
 * Start-up = from spawn to the `listening` log line. RSS (Linux /proc/<pid>/status VmRSS) and
 * CPU seconds (user + system, /proc/<pid>/stat, all threads) at `listening` and after S seconds
 * idle (default 5; the health probes' first round runs then). Prints the median of N runs
 * (default 5). The CPU is what a test suite starting ~150 nodes pays, whatever the load.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { BIN, spawnJsonReady, stopProcess } from '../test/helpers/nodeProcess.js';

type Mode = 'build' | 'source';

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** CPU seconds (user + system) the process has used so far (Linux: /proc/<pid>/stat, clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

interface Sample {
  ms: number;
  rssReady: number;
  rssIdle: number;
  cpuReady: number;
  cpuIdle: number;
}

async function once(mode: Mode, idleSeconds: number): Promise<Sample> {
  const dir = mkdtempSync(join(tmpdir(), 'native-bench-startup-'));
  try {
    const t0 = performance.now();
    const p = await spawnJsonReady([BIN, 'start', '--dev', '--data-dir', join(dir, 'data'), '--http-port', '0', '--no-p2p', '--no-stratum', '--no-mine'], {
      cwd: dir,
      env: { NATIVE_NODE_FROM_SOURCE: mode === 'source' ? '1' : '0' },
      keep: () => false,
      timeoutMs: 60_000,
    });
    const ms = performance.now() - t0;
    const rssReady = rssMiB(p.child.pid!);
    const cpuReady = cpuSeconds(p.child.pid!);
    await new Promise((r) => setTimeout(r, idleSeconds * 1000));
    const rssIdle = rssMiB(p.child.pid!);
    const cpuIdle = cpuSeconds(p.child.pid!);
    await stopProcess(p);
    return { ms, rssReady, rssIdle, cpuReady, cpuIdle };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs the start-up benchmark. */
export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { runs: { type: 'string', default: '5' }, 'idle-seconds': { type: 'string', default: '5' } } });
  const runs = Number(values.runs);
  const idle = Number(values['idle-seconds']);
  const results: Record<Mode, Sample[]> = { build: [], source: [] };
  await once('build', 0); // warm the file cache for both
  await once('source', 0);
  for (let i = 0; i < runs; i++) for (const mode of (i % 2 ? ['source', 'build'] : ['build', 'source']) as Mode[]) results[mode].push(await once(mode, idle));
  console.log(`devnet node start-up, median of ${runs} runs (node ${process.version}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} at the end)\n`);
  console.log(`| run from | start-up ms (spawn → listening) | CPU s at listening | CPU s after ${idle} s idle | RSS MiB at listening | RSS MiB after ${idle} s idle |\n|---|---:|---:|---:|---:|---:|`);
  for (const mode of ['source', 'build'] as Mode[]) {
    const r = results[mode];
    const med = (k: keyof Sample, digits: number) => median(r.map((x) => x[k])).toFixed(digits);
    console.log(`| ${mode === 'build' ? 'build/ (compiled)' : 'sources through tsx'} | ${med('ms', 0)} | ${med('cpuReady', 2)} | ${med('cpuIdle', 2)} | ${med('rssReady', 0)} | ${med('rssIdle', 0)} |`);
  }
}
