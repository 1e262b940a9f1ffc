/** Starting the real node (`bin/native-node.js start`) as a child process and waiting for its URL. */
import { spawn, type ChildProcess } from 'node:child_process';
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

/** Child environment: no jest flags, no stray NATIVE_* settings (but the sources, not build/: NATIVE_NODE_FROM_SOURCE, set by jest.config.js). */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if ((!k.startsWith('NATIVE_') || k === 'NATIVE_NODE_FROM_SOURCE') && k !== 'NODE_OPTIONS') env[k] = v;
  return { ...env, ...extra };
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
  timeoutMs?: number;
}

/**
 * Spawns `node <args>`, a process printing JSON log lines, and resolves once the `ready` line
 * gives its URL (bounded wait; the process is killed on timeout). Stdout is read to the end, so
 * the pipe never fills; stderr's tail goes into the errors.
 */
export function spawnJsonReady(args: string[], opts: SpawnJsonOptions): Promise<NodeProc> {
  const ready = opts.ready ?? 'listening';
  const child = spawn(process.execPath, args, { cwd: opts.cwd, env: childEnv(opts.env), stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: Record<string, unknown>[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr = (stderr + d).slice(-8000)));
  const timeoutMs = opts.timeoutMs ?? 20_000;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`process did not log "${ready}" within ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
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
        if (obj.msg === ready) {
          clearTimeout(timer);
          resolve({ child, url: String(obj.url), lines, exited });
        }
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
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
