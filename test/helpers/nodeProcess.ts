/** Starting the real node (`bin/native-node.js start`) as a child process and waiting for its URL. */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = join(ROOT, 'bin', 'native-node.js');

export interface NodeProc {
  child: ChildProcess;
  url: string;
  lines: Record<string, unknown>[];
  exited: Promise<number | null>;
}

/** Test nodes reach nothing beyond 127.0.0.1: the providers that default to public endpoints point at a closed loopback port (their services are then `down`). */
const OFFLINE_PROVIDERS: Record<string, string> = Object.fromEntries(
  ['NATIVE_WEATHER_GEOCODING_URL', 'NATIVE_WEATHER_FORECAST_URL', 'NATIVE_FX_URL', 'NATIVE_COINGECKO_URL', 'NATIVE_BASE_RPC_URL', 'NATIVE_ETHEREUM_RPC_URL'].map((k) => [k, 'http://127.0.0.1:9/']),
);

/** Child environment: no jest flags, no stray NATIVE_* settings (but NATIVE_NODE_FROM_SOURCE, when the developer set it: children then run the sources, not build/), no public providers. */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if ((!k.startsWith('NATIVE_') || k === 'NATIVE_NODE_FROM_SOURCE') && k !== 'NODE_OPTIONS') env[k] = v;
  return { ...env, ...OFFLINE_PROVIDERS, ...extra };
}

/** Whether `args` configure the p2p network (otherwise tests run the node standalone). */
function mentionsP2P(args: readonly string[]): boolean {
  return args.some((a) => a === '--p2p' || a === '--no-p2p' || a.startsWith('--p2p-') || a === '--bootstrap');
}

/** Options of `spawnJsonReady`. */
export interface SpawnJsonOptions {
  cwd: string;
  env?: Record<string, string>;
  /** `msg` of the log line that says the process is up (its `url` is the address); default `listening`. */
  ready?: string;
  /** Which log lines to keep in `lines` (default: all); a load test keeps only what it reads. */
  keep?: (line: Record<string, unknown>) => boolean;
  /**
   * Longest silence (no log line) before the start is given up, ms on an idle machine (default
   * 20 s), scaled by `loadFactor()`; the whole start may take 4 times that.
   */
  timeoutMs?: number;
}

/**
 * How much slower than idle this machine is now: the 1-minute load average per core, between 1
 * and 8. Start waits scale with it, so a suite sharing 2 cores with other work waits longer
 * instead of failing.
 */
export function loadFactor(): number {
  return Math.min(8, Math.max(1, loadavg()[0] / availableParallelism()));
}

/**
 * Spawns `node <args>`, a process printing JSON log lines, and resolves once the `ready` line
 * gives its URL. The wait is bounded by readiness, not a fixed clock: it gives up after
 * `timeoutMs × loadFactor()` without any log line (the process is stuck), or after 4 times that
 * in all; the process is then killed. Stdout is read to the end, so the pipe never fills;
 * stderr's tail goes into the errors.
 */
export function spawnJsonReady(args: string[], opts: SpawnJsonOptions): Promise<NodeProc> {
  const ready = opts.ready ?? 'listening';
  const child = spawn(process.execPath, args, { cwd: opts.cwd, env: childEnv(opts.env), stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: Record<string, unknown>[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr = (stderr + d).slice(-8000)));
  const quietMs = Math.round((opts.timeoutMs ?? 20_000) * loadFactor());
  const startedAt = Date.now();
  return new Promise((resolve, reject) => {
    const giveUp = (why: string) => {
      child.kill('SIGKILL');
      reject(new Error(`process did not log "${ready}": ${why}; stderr: ${stderr}`));
    };
    let timer = setTimeout(() => giveUp(`no log line for ${quietMs} ms`), quietMs);
    const overall = setTimeout(() => giveUp(`not ready after ${4 * quietMs} ms`), 4 * quietMs);
    let buf = '';
    let isReady = false;
    child.stdout!.on('data', (d: Buffer) => {
      // Output means progress: the silence clock starts over (until the process is ready).
      clearTimeout(timer);
      if (!isReady) timer = setTimeout(() => giveUp(`no log line for ${quietMs} ms (${Date.now() - startedAt} ms since the spawn)`), quietMs);
      buf += d.toString('utf8');
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        let obj: Record<string, unknown>;
        try {
          obj = JSON.parse(line) as Record<string, unknown>;
        } catch {
          continue;
        }
        if (!opts.keep || opts.keep(obj) || obj.msg === ready) lines.push(obj);
        if (obj.msg === ready && !isReady) {
          isReady = true;
          clearTimeout(timer);
          clearTimeout(overall);
          resolve({ child, url: String(obj.url), lines, exited });
        }
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      clearTimeout(overall);
      reject(new Error(`process exited with ${code} before "${ready}"; stderr: ${stderr}`));
    });
  });
}

/** Stops a spawned process with SIGTERM (SIGKILL after `graceMs`) and waits for its exit. */
export async function stopProcess(p: NodeProc, graceMs = 15_000): Promise<void> {
  if (p.child.exitCode !== null) return;
  p.child.kill('SIGTERM');
  const timer = setTimeout(() => p.child.kill('SIGKILL'), graceMs);
  await p.exited;
  clearTimeout(timer);
}

/**
 * Starts `native-node start <args>` and resolves once its `listening` log line gives the URL
 * (bounded wait). Unless `args` say otherwise, the node runs with `--no-p2p`: suites that do not
 * test the network must not fight over the default p2p port 8403 when they run in parallel.
 */
export function startNode(args: string[], opts: { cwd: string; env?: Record<string, string>; timeoutMs?: number }): Promise<NodeProc> {
  if (!mentionsP2P(args)) args = [...args, '--no-p2p'];
  return spawnJsonReady([BIN, 'start', ...args], opts);
}

/** What a CLI run printed and returned; `json` is its last stdout line parsed, when it parses. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  json: Record<string, unknown> | undefined;
}

/** Runs `native-node <args>` in `cwd` with `env` (bounded by `timeoutMs`). */
export function runCli(args: string[], opts: { cwd: string; env?: Record<string, string>; timeoutMs?: number }): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: opts.cwd, env: childEnv(opts.env), timeout: opts.timeoutMs ?? 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      let json: Record<string, unknown> | undefined;
      try {
        json = JSON.parse(stdout.trim().split('\n').pop() ?? '') as Record<string, unknown>;
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, json });
    });
  });
}
