#!/usr/bin/env node
/**
 * The house rules, checked: `node scripts/architecture.mjs [--json]`.
 *
 *   - no import circle between the product's modules (TypeScript sources outside test/);
 *   - no arrow up: each top folder imports only the folders its README allows (RULES below),
 *     and each room of x402/ only the rooms below it (ROOMS);
 *   - no file over MAX_LINES lines in the product and the benches;
 *   - every file of the product and the benches is named by its folder's README: the nearest
 *     README.md at or above it names it by its file name, or a README.md at or above it (up to
 *     its top folder) by its path from that README's folder or from the repository's root; every
 *     file of the folders in LISTED is named by theirs. So a README cannot fall behind its folder.
 *
 * Imports are read from the sources (static `import … from`, `export … from`, `import type`,
 * and `import('…')` with a literal), resolved relative to the importing file. Type-only imports
 * count: a circle of types is still a circle for the reader. Exits 1 and lists what breaks a rule.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const MAX_LINES = 650;

/** The top folders of the product and what each may import (besides itself and npm packages). */
export const RULES = {
  common: [],
  consensus: ['common'],
  chain: ['common', 'consensus'],
  p2p: ['common', 'consensus', 'chain'],
  services: ['common', 'consensus', 'chain'],
  x402: ['common', 'consensus', 'chain', 'services'],
  discovery: ['common', 'consensus', 'x402', 'services'],
  sdk: ['common', 'consensus', 'x402', 'chain'],
  node: ['common', 'consensus', 'chain', 'p2p', 'services', 'x402', 'discovery', 'sdk'],
  cli: ['common', 'consensus', 'chain', 'p2p', 'services', 'x402', 'discovery', 'sdk', 'node'],
  bench: ['common', 'consensus', 'chain', 'p2p', 'services', 'x402', 'discovery', 'sdk', 'node', 'cli', 'test'],
  packages: ['common', 'consensus', 'x402', 'chain', 'sdk'],
};

/** The rooms of x402/ and the rooms each may import (x402/README.md): a layered order, no circle between rooms. */
export const ROOMS = {
  'x402/ledger': [],
  'x402/fleet': [],
  'x402/core': ['x402/ledger'],
  'x402/usdc': ['x402/core', 'x402/ledger'],
  'x402/native': ['x402/core', 'x402/ledger'],
  'x402/providers': ['x402/core', 'x402/ledger', 'x402/native', 'x402/fleet'],
};

/** Narrower rules inside a folder: `from` (a path prefix) may import only `to` prefixes of the same folder. */
export const NARROW = [
  // The SDK runs without a node: of x402 only the wire modules (pure, consensus/ hashing only), of chain only the logger type.
  { from: 'sdk/', deny: ['x402/'], allow: ['x402/core/wire.ts', 'x402/core/receiptBatch.ts', 'x402/usdc/commitment.ts'] },
  { from: 'sdk/', deny: ['chain/'], allow: ['chain/types.ts', 'chain/logger.ts'] },
  // Services see x402 not at all; x402 sees of services their types and the runner.
];

/** Folders outside the product whose every file (of any kind) their README.md names. */
export const LISTED = ['scripts'];

/**
 * Modules that name files for their README: the service files of services/ (one per service,
 * `<serviceId without native->.ts`, as services/README.md says) are the ones the catalog,
 * services/index.ts, imports.
 */
export const NAMED_BY = ['services/index.ts'];

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SKIP = new Set(['node_modules', 'build', 'test', 'reference', 'vendor', 'packs', 'dist', '.git', 'docs', 'scripts', 'genesis.json']);

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name) || name.startsWith('.')) continue;
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) walk(p, out);
    else if (/\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

const IMPORT_RE = /(?:^|[\s;])(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** The product's files (relative paths) and each one's imports of other product files. */
export function importGraph(base = root) {
  const files = walk(base).map((f) => relative(base, f).split(sep).join('/'));
  const known = new Set(files);
  const graph = new Map();
  for (const f of files) {
    const text = readFileSync(join(base, f), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
    const deps = new Set();
    for (const m of text.matchAll(IMPORT_RE)) {
      const spec = m[1] ?? m[2];
      if (!spec?.startsWith('.')) continue;
      const target = relative(base, resolve(base, dirname(f), spec)).split(sep).join('/').replace(/\.js$/, '.ts');
      const candidates = [target, `${target}.ts`, `${target}/index.ts`];
      const hit = candidates.find((c) => known.has(c));
      if (hit && hit !== f) deps.add(hit);
    }
    graph.set(f, [...deps]);
  }
  return { files, graph };
}

/** Strongly connected components with more than one file (Tarjan). */
export function circles(graph) {
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const out = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const comp = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1) out.push(comp.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return out;
}

const escapeRe = (t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Whether `text` names `name` as a word of its own (not the tail of a longer name or path). */
export function names(text, name) {
  return new RegExp(`(?<![\\w./-])${escapeRe(name)}(?![\\w])`).test(text);
}

/**
 * The READMEs that may name `f` (a path relative to `base`), nearest first: the README.md of its
 * folder and of each folder above it, up to its top folder.
 */
function readmesOf(base, f) {
  const out = [];
  const parts = f.split('/').slice(0, -1);
  for (let n = parts.length; n >= 1; n--) {
    const dir = parts.slice(0, n).join('/');
    if (existsSync(join(base, dir, 'README.md'))) out.push(dir);
  }
  return out;
}

/** Files no README names (see the module comment): the product's and benches' `files`, then those of LISTED. */
export function unnamed(base, files, graph) {
  const text = new Map();
  const read = (dir) => {
    if (!text.has(dir)) text.set(dir, readFileSync(join(base, dir, 'README.md'), 'utf8'));
    return text.get(dir);
  };
  const byModule = new Set(NAMED_BY.flatMap((m) => graph.get(m) ?? []));
  const out = [];
  for (const f of files) {
    if (byModule.has(f)) continue;
    const dirs = readmesOf(base, f);
    const named = dirs.some((dir, i) => names(read(dir), f) || names(read(dir), f.slice(dir.length + 1)) || (i === 0 && names(read(dir), f.slice(f.lastIndexOf('/') + 1))));
    if (!named) out.push({ file: f, readme: dirs[0] && `${dirs[0]}/README.md` });
  }
  for (const dir of LISTED) {
    if (!existsSync(join(base, dir))) continue;
    for (const name of readdirSync(join(base, dir)).sort()) {
      if (name === 'README.md' || statSync(join(base, dir, name)).isDirectory()) continue;
      if (!existsSync(join(base, dir, 'README.md')) || !names(read(dir), name)) out.push({ file: `${dir}/${name}`, readme: existsSync(join(base, dir, 'README.md')) ? `${dir}/README.md` : undefined });
    }
  }
  return out;
}

const top = (f) => (f.includes('/') ? f.slice(0, f.indexOf('/')) : '.');

/** Everything that breaks a rule: circles, arrows up, files too long, files their README does not name. */
export function check(base = root) {
  const { files, graph } = importGraph(base);
  const problems = [];
  for (const c of circles(graph)) problems.push({ rule: 'circle', files: c, message: `import circle: ${c.join(' → ')}` });
  for (const [f, deps] of graph) {
    const from = top(f);
    const allowed = RULES[from];
    for (const d of deps) {
      const to = top(d);
      if (to === from && from !== 'x402') continue;
      if (to !== from && allowed && !allowed.includes(to)) problems.push({ rule: 'arrow-up', files: [f, d], message: `${f} imports ${d}: ${from}/ may import ${allowed.length ? allowed.join(', ') : 'no other folder'}` });
      const room = (p) => p.split('/').slice(0, 2).join('/');
      if (from === 'x402' && to === 'x402' && room(f) !== room(d)) {
        const may = ROOMS[room(f)];
        if (!may || !may.includes(room(d))) problems.push({ rule: 'arrow-up', files: [f, d], message: `${f} imports ${d}: ${room(f)}/ may import ${may?.length ? may.map((r) => `${r}/`).join(', ') : 'no other room of x402/'}` });
      }
      for (const n of NARROW) if (f.startsWith(n.from) && n.deny.some((p) => d.startsWith(p)) && !n.allow.includes(d)) problems.push({ rule: 'arrow-up', files: [f, d], message: `${f} imports ${d}: ${n.from} may import of ${n.deny.join(', ')} only ${n.allow.join(', ')}` });
    }
  }
  for (const f of files) {
    const lines = readFileSync(join(base, f), 'utf8').split('\n').length;
    if (lines > MAX_LINES) problems.push({ rule: 'too-long', files: [f], message: `${f} has ${lines} lines (at most ${MAX_LINES})` });
  }
  for (const u of unnamed(base, files, graph)) problems.push({ rule: 'unnamed', files: [u.file], message: u.readme ? `${u.file} is not named in ${u.readme}` : `${u.file} has no README.md in its folder or above` });
  return { files: files.length, problems };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { files, problems } = check();
  if (process.argv.includes('--json')) console.log(JSON.stringify({ files, problems }, null, 2));
  else {
    for (const p of problems) console.log(`${p.rule}: ${p.message}`);
    console.log(`${files} files, ${problems.length} problem(s)`);
  }
  process.exit(problems.length ? 1 : 0);
}
