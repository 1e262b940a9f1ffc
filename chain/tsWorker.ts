/**
 * Starting worker threads from the compiled build and from the TypeScript sources alike.
 *
 * In the build (`npm run build`, what `bin/native-node.js` runs) the entry is a `.js` file and
 * the worker is a plain one. From the sources (tsx, jest) the entry is `.ts`:
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

/**
 * URL of the worker module `name` (without extension) beside the module at `base` (its
 * `import.meta.url`): `.js` when that module is compiled JavaScript, `.ts` when it is a source.
 */
export function siblingModuleUrl(name: string, base: string): URL {
  return new URL(`./${name}${base.endsWith('.ts') ? '.ts' : '.js'}`, base);
}

/** Starts a worker thread running the ES module at `url`: directly when it is JavaScript, through tsx when it is TypeScript. */
export function createTsWorker(url: URL, options: WorkerOptions = {}): Worker {
  if (!url.pathname.endsWith('.ts')) return new Worker(url, { ...options, execArgv: options.execArgv ?? [] });
  // The bootstrap is an eval'd CommonJS script; dynamic import() is how it reaches ESM. A failed
  // import rejects, which ends the worker with an 'error' event carrying the cause.
  const bootstrap =
    `import(${JSON.stringify(getTsxEsmApiUrl())})` +
    `.then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); });`;
  return new Worker(bootstrap, { ...options, eval: true, execArgv: options.execArgv ?? [] });
}
