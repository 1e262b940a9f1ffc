/**
 * Starting worker threads whose entry module is TypeScript, under the CLI (tsx) and inside jest alike.
 *
 * A worker is a fresh Node thread: it gets neither jest's transform nor the parent's tsx hooks.
 * `execArgv: ['--import', 'tsx']` is not enough on Node 20: tsx registers its hooks only on the
 * main thread there (`isMainThread` guard in `tsx/esm`), so the worker fails with
 * `Unknown file extension ".ts"`. Instead each worker starts from a two-line bootstrap that
 * registers tsx's ESM hooks through its API (`tsx/esm/api` → `register()`) and then imports the
 * entry module. The parent's `execArgv` (jest's `--experimental-vm-modules`, inspector flags…) is
 * not forwarded; pass `options.execArgv` to give the worker flags of its own.
 */
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

let tsxApiUrl: string | undefined;

/** Absolute file URL of tsx's ESM API module (`tsx/esm/api`, import condition), whose `register()` installs the hooks. */
export function getTsxEsmApiUrl(): string {
  if (tsxApiUrl === undefined) {
    // package.json is an explicit export, so this resolves whatever conditions the caller runs under.
    const pkgPath = createRequire(import.meta.url).resolve('tsx/package.json');
    const pkg = JSON.parse(readFileSync(pkgPath, 'utf8')) as { exports?: Record<string, { import?: { default?: string } } | string> };
    const entry = pkg.exports?.['./esm/api'];
    const rel = typeof entry === 'object' && entry.import?.default ? entry.import.default : './dist/esm/api/index.mjs';
    tsxApiUrl = pathToFileURL(join(dirname(pkgPath), rel)).href;
  }
  return tsxApiUrl;
}

/** Starts a worker thread running the TypeScript (or JavaScript) ES module at `url` through tsx. */
export function createTsWorker(url: URL, options: WorkerOptions = {}): Worker {
  // The bootstrap is an eval'd CommonJS script; dynamic import() is how it reaches ESM. A failed
  // import rejects, which ends the worker with an 'error' event carrying the cause.
  const bootstrap =
    `import(${JSON.stringify(getTsxEsmApiUrl())})` +
    `.then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); });`;
  return new Worker(bootstrap, { ...options, eval: true, execArgv: options.execArgv ?? [] });
}
