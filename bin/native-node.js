#!/usr/bin/env node
// The `native-node` command. It runs the compiled JavaScript in build/ (`npm run build`, which
// `npm ci` and `npm start` run for you). With NATIVE_NODE_FROM_SOURCE=1 it runs the TypeScript
// sources through tsx instead (a dev dependency): what the tests do, so they never run a stale build.
import { existsSync } from 'node:fs';

const built = new URL('../build/cli/cli.js', import.meta.url);
let main;
if (process.env.NATIVE_NODE_FROM_SOURCE === '1') {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../cli/cli.ts'));
} else if (existsSync(built)) {
  ({ main } = await import(built.href));
} else {
  process.stderr.write('error build_missing: build/ is missing; run `npm run build` (needs the dev dependencies), or set NATIVE_NODE_FROM_SOURCE=1 to run the TypeScript sources through tsx\n');
  process.exit(2);
}
process.exitCode = await main(process.argv.slice(2));
