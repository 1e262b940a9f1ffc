// Builds the package: compiles src/ and the node's modules it imports (sdk/, consensus/,
// x402/core/wire.ts, …) into dist/ with the repository's TypeScript, keeps only the JavaScript the
// entry point loads (the declarations stay whole), and refuses a build whose code would load a
// package that package.json does not declare (the node's server stack must never leak in).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const PKG = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(PKG, 'dist');
const ENTRY = join(DIST, 'packages', 'agent', 'src', 'index.js');
const pkg = JSON.parse(readFileSync(join(PKG, 'package.json'), 'utf8'));
const declared = new Set(Object.keys(pkg.dependencies ?? {}));

rmSync(DIST, { recursive: true, force: true });
// The repository's own compiler (root devDependency), found from here upwards.
const tsc = createRequire(join(PKG, 'package.json')).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(PKG, 'tsconfig.json')], { stdio: ['ignore', 2, 2] });

/** Runtime import specifiers of a compiled module (static and dynamic). */
function importsOf(file) {
  const text = readFileSync(file, 'utf8');
  const out = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g)) out.push(m[1] ?? m[2] ?? m[3]);
  return out;
}

const reached = new Set();
const external = new Map();
const stack = [ENTRY];
while (stack.length) {
  const file = stack.pop();
  if (reached.has(file)) continue;
  if (!existsSync(file)) throw new Error(`${relative(PKG, file)} is imported but was not emitted`);
  reached.add(file);
  for (const spec of importsOf(file)) {
    if (spec.startsWith('.')) stack.push(resolve(dirname(file), spec));
    else if (!spec.startsWith('node:')) {
      const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
      external.set(name, relative(DIST, file));
    }
  }
}
const undeclared = [...external].filter(([name]) => !declared.has(name));
if (undeclared.length) {
  throw new Error(`the package code loads undeclared packages: ${undeclared.map(([n, f]) => `${n} (from ${f})`).join(', ')}`);
}

// Modules emitted only for their types (reached through `import type`) are not shipped as code.
let dropped = 0;
const walk = (dir) => {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p);
    else if (e.name.endsWith('.js') && !reached.has(p)) {
      rmSync(p);
      dropped++;
    }
  }
};
walk(DIST);
process.stderr.write(`${pkg.name}: ${reached.size} modules, loads ${[...external.keys()].sort().join(', ')}; ${dropped} type-only modules kept as declarations\n`);
