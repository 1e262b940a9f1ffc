/**
 * CPU seconds by thread from /proc (Linux): what the node's main thread, its verify pool, its
 * miner and the background threads (LevelDB, libuv, V8) each cost. Shared by the paid, import,
 * sync and x402 benches (threads that exited between two readings are not counted); the x402 bench
 * also reads the whole machine's busy time, to tell a full machine from a busy process.
 */
import { readdir, readFile } from 'node:fs/promises';

const TICK_S = 0.01; // USER_HZ is 100 on Linux

/** One thread's CPU seconds (user + system) and its name (`/proc/<pid>/task/<tid>/comm`: `node` for all of Node's own threads). */
export interface ThreadCpu {
  readonly name: string;
  readonly seconds: number;
}

/** Name and CPU seconds (utime + stime) of a `/proc/…/stat` line; undefined when it is not one. */
function parseStat(stat: string): ThreadCpu | undefined {
  // The command name is in parentheses and may contain spaces: the fields follow the last ')'.
  const open = stat.indexOf('(');
  const close = stat.lastIndexOf(')');
  const fields = stat.slice(close + 2).split(' ');
  if (open < 0 || fields.length <= 13) return undefined;
  return { name: stat.slice(open + 1, close), seconds: (Number(fields[11]) + Number(fields[12])) * TICK_S };
}

/** CPU seconds of every thread of `pid` (default: this process), by thread id; empty where /proc is missing. */
export async function threadCpu(pid: number = process.pid): Promise<Map<number, ThreadCpu>> {
  const out = new Map<number, ThreadCpu>();
  for (const tid of await readdir(`/proc/${pid}/task`).catch(() => [] as string[])) {
    const t = parseStat(await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8').catch(() => ''));
    if (t) out.set(Number(tid), t);
  }
  return out;
}

/** CPU seconds a whole process has used so far (exited threads included); NaN where /proc is missing. */
export async function processCpuSeconds(pid: number): Promise<number> {
  return parseStat(await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => ''))?.seconds ?? NaN;
}

/** CPU seconds the whole machine has spent busy so far, all cores together (/proc/stat: all but idle and iowait); NaN where /proc is missing. */
export async function machineBusySeconds(): Promise<number> {
  const line = (await readFile('/proc/stat', 'utf8').catch(() => '')).split('\n')[0] ?? '';
  if (!line.startsWith('cpu ')) return NaN;
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already inside user and nice)
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return (total - f[3] - f[4]) * TICK_S;
}

/** CPU seconds each thread spent between two readings (threads started in between count from zero). */
export function cpuDelta(a: Map<number, ThreadCpu>, b: Map<number, ThreadCpu>): Map<number, ThreadCpu> {
  const d = new Map<number, ThreadCpu>();
  for (const [tid, t] of b) d.set(tid, { name: t.name, seconds: t.seconds - (a.get(tid)?.seconds ?? 0) });
  return d;
}

/**
 * A window's CPU seconds split into the main thread, the `busiest` busiest other threads (a
 * worker pool: Node names every thread `node`, so the split is by load, not by name) and the rest
 * (LevelDB's compaction, libuv's pool, V8's GC and compiler threads).
 */
export function splitCpu(d: Map<number, ThreadCpu>, mainTid: number, busiest: number): { main: number; busiest: number; rest: number; total: number } {
  const others = [...d].filter(([tid]) => tid !== mainTid).map(([, t]) => t.seconds).sort((a, b) => b - a);
  const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
  const main = d.get(mainTid)?.seconds ?? 0;
  return { main, busiest: sum(others.slice(0, busiest)), rest: sum(others.slice(busiest)), total: main + sum(others) };
}
