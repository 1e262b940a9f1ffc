/**
 * `native-node devnet --json` as a child process: started with the given flags, resolved with the
 * `{"devnet": …}` line it prints once its nodes listen (bounded, scaled by the machine's load).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { BIN, childEnv, loadFactor } from './nodeProcess.js';

/** A running devnet command: its process, its exit, and what it printed about its nodes. */
export interface DevnetProcess<Info> {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  readonly info: Promise<Info>;
}

/** Spawns `native-node devnet <args> --json` in `cwd`; `info` rejects if it exits or stays silent too long. */
export function spawnDevnet<Info>(args: readonly string[], cwd: string): DevnetProcess<Info> {
  const child = spawn(process.execPath, [BIN, 'devnet', ...args, '--json'], { cwd, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  let out = '';
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const info = new Promise<Info>((resolve, reject) => {
    // Several node processes start at once (each loads the build): 90 s on a quiet machine, scaled by the load.
    const limitMs = Math.round(90_000 * Math.min(loadFactor(), 2.5));
    const timer = setTimeout(() => reject(new Error(`devnet did not print its nodes in ${limitMs / 1000} s; stderr: ${err}`)), limitMs);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      const line = out.split('\n').find((l) => l.startsWith('{"devnet"'));
      if (line) {
        clearTimeout(timer);
        resolve((JSON.parse(line) as { devnet: Info }).devnet);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`devnet exited with ${code}; stderr: ${err}`));
    });
  });
  return { child, exited, info };
}
