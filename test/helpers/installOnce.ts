/**
 * Installs a folder with its own lock file (reference/, a data pack) once, whatever number of jest
 * workers or benches ask at the same time: the first takes a lock directory (`mkdir` is atomic)
 * and installs, the others wait for npm's end-of-install marker.
 */
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { npmCi as npmCiIn } from '../../node/dataPacks.js';

const INSTALL_TIMEOUT_MS = 10 * 60_000;

/** Runs `install` in `dir` unless `node_modules/.package-lock.json` (written by npm at the end of a complete install) is there; concurrent callers wait for it. */
export async function ensureInstalledOnce(dir: string, install: () => Promise<unknown>): Promise<void> {
  const marker = join(dir, 'node_modules', '.package-lock.json');
  const lock = join(dir, '.installing');
  const deadline = Date.now() + INSTALL_TIMEOUT_MS;
  while (!existsSync(marker)) {
    let mine = false;
    try {
      mkdirSync(lock);
      mine = true;
    } catch {
      // Another process installs; a lock older than the install timeout is stale.
      if (existsSync(lock) && Date.now() - statSync(lock).mtimeMs > INSTALL_TIMEOUT_MS) rmSync(lock, { recursive: true, force: true });
    }
    if (mine) {
      try {
        if (existsSync(marker)) return;
        await install();
        return;
      } finally {
        rmSync(lock, { recursive: true, force: true });
      }
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for another process installing ${dir}`);
    await new Promise((r) => setTimeout(r, 1_000));
  }
}

/** `npm ci` in `dir` (its own lock file), as the node installs its data packs; rejects with npm's last words when it fails. */
export function npmCi(dir: string): Promise<void> {
  return npmCiIn(dir, [], INSTALL_TIMEOUT_MS);
}
