// npm's `prepare` step (after `npm ci` / `npm install` in a checkout, and before `npm pack`):
// compiles the sources into build/ when TypeScript is installed. An install without the dev
// dependencies (`npm ci --omit=dev`) has no compiler: it keeps an existing build/ and says what
// to do when there is none, without failing the install.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

const root = new URL('..', import.meta.url);
// Dev dependencies are there when @types/koa is (typescript alone is not a sign: viem's optional
// peer dependency on it keeps it in a production install).
const omitted = (process.env.npm_config_omit ?? '').split(/[\s,]+/).includes('dev');
let tsc;
try {
  if (omitted) throw new Error('dev dependencies omitted');
  createRequire(import.meta.url).resolve('@types/koa/package.json');
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  if (!existsSync(new URL('build/cli/cli.js', root))) {
    process.stderr.write('native-node: no build/ and no TypeScript compiler (dev dependencies omitted); run `npm ci && npm run build` first, then `npm prune --omit=dev`\n');
  }
  process.exit(0);
}
const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
process.exit(r.status ?? 1);
