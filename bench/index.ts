/**
 * Benchmark dispatcher: `npm run bench -- <name> [args…]` loads `bench/<name>.ts` from the table
 * below and calls its `run(args)`. An unknown or missing name prints the usage and exits with 1.
 */

/** What every benchmark module exports. */
interface Bench {
  run(args: string[]): Promise<void>;
}

/** The known benchmarks, by name. */
const benches: Readonly<Record<string, () => Promise<Bench>>> = {
  verify: () => import('./verify.js'),
  import: () => import('./import.js'),
  sync: () => import('./sync.js'),
  relay: () => import('./relay.js'),
  stratum: () => import('./stratum.js'),
  miner: () => import('./miner.js'),
  x402: () => import('./x402.js'),
  paid: () => import('./paid.js'),
  catalog: () => import('./catalog.js'),
  services: () => import('./services.js'),
  explorer: () => import('./explorer.js'),
  install: () => import('./install.js'),
  startup: () => import('./startup.js'),
  mempool: () => import('./mempool.js'),
  mcp: () => import('./mcp.js'),
  host: () => import('./host.js'),
  quality: () => import('./quality.js'),
};

const [name, ...args] = process.argv.slice(2);
const load = name !== undefined && Object.hasOwn(benches, name) ? benches[name] : undefined;
if (!load) {
  console.error(`usage: npm run bench -- <name> [args…]\nbenchmarks: ${Object.keys(benches).join(', ')}`);
  process.exit(1);
}
await (await load()).run(args);
