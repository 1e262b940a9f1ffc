/**
 * `npm run bench -- sync [--blocks N] [--txs-per-block N] [--rounds N] [--threads N] [--no-import] [--verbose]`
 *
 * Initial sync throughput: a devnet chain of N blocks (default 2,000) with signed transfers in
 * every block (default 10, from as many funded senders; each sender's first transfer carries
 * its public keys) is prepared in memory and imported, without signature checks, into the data
 * directory of a serving node, which then runs in a child process (as a peer would: its own
 * event loop). A fresh node in this process (LevelDB chain, signature checks on the worker pool
 * with a cold cache, its own p2p network) syncs it from that one peer over libp2p on
 * 127.0.0.1: status, headers by locator, blocks by hash in batches, full validation. The time
 * runs from the fresh node's start to its tip equal to the server's.
 *
 * For comparison, the same raw blocks are then imported straight into another fresh chain with
 * a fresh pool (what `npm run bench -- import` measures, on these blocks: handed over 4 ahead),
 * and the ratio of the two throughputs is printed, with the load average before and after.
 * `--rounds N` (default 3) repeats the pair, sync then import, each round with fresh data
 * directories and pools, against the same serving peer, and prints every round and the medians:
 * on two shared cores one pair alone can be off by 15 %.
 */
import '../p2p/polyfill.js';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createParamsFromJson, paramsToJson, type ChainParams } from '../consensus/params.js';
import { openChain, type Chain } from '../chain/chain.js';
import { createMempool } from '../chain/mempool.js';
import { createVerifyPool } from '../chain/verifyPool.js';
import type { SignatureVerifier } from '../chain/types.js';
import { acceptAllVerifier } from './acceptAllVerifier.js';
import { createP2PNetwork, type P2PNetwork } from '../p2p/network.js';
import { buildTransferChain } from './transferChain.js';
import { importAhead } from './import.js';
import { cpuDelta, processCpuSeconds, splitCpu, threadCpu, type ThreadCpu } from './threadCpu.js';
import { percentile } from './percentile.js';


/** `--verbose`: the p2p layer's log on stderr. */
let verbose = false;
const stderrLogger = {
  debug: (o: object, m?: string) => verbose && process.env.BENCH_DEBUG && console.error(`${(performance.now() / 1000).toFixed(2)} ${m} ${JSON.stringify(o).slice(0, 300)}`),
  info: (o: object, m?: string) => verbose && console.error(`${(performance.now() / 1000).toFixed(2)} ${m} ${JSON.stringify(o).slice(0, 300)}`),
  warn: (o: object, m?: string) => verbose && console.error(`${(performance.now() / 1000).toFixed(2)} WARN ${m} ${JSON.stringify(o).slice(0, 300)}`),
  error: (o: object, m?: string) => console.error(`ERROR ${m}`, o),
};

/** A node for the p2p benchmarks: LevelDB chain, mempool, p2p network on 127.0.0.1 (not started). */
export async function node(dir: string, params: ChainParams, verifier: SignatureVerifier, bootstrap: string[]): Promise<{ chain: Chain; p2p: P2PNetwork; stop: () => Promise<void> }> {
  const chain = await openChain({ dataDir: join(dir, 'chain'), params, verifier });
  const mempool = createMempool(chain, verifier, params);
  mempool.start();
  const p2p = await createP2PNetwork({ dataDir: dir, host: '127.0.0.1', port: 0, bootstrap, agentVersion: 'native-node/bench' }, { chain, mempool, verifier, logger: stderrLogger });
  return {
    chain,
    p2p,
    async stop() {
      await p2p.stop();
      mempool.stop();
      await chain.close();
    },
  };
}

/** CPU seconds of this process (every thread, the verification workers included). */
function ownCpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** Child-process mode: serves the chain in `dir` until stdin closes; prints its address. */
async function serve(dir: string): Promise<void> {
  const params = createParamsFromJson(JSON.parse(await readFile(join(dir, 'genesis.json'), 'utf8')));
  const server = await node(dir, params, acceptAllVerifier, []);
  await server.p2p.start();
  process.stdout.write(`${JSON.stringify({ addr: server.p2p.listen[0], tip: server.chain.tip.hashHex })}\n`);
  await new Promise<void>((r) => process.stdin.once('close', r).resume());
  await server.stop();
}

/** Starts the serving node in a child process; resolves with its address and tip. */
function startServer(dir: string): Promise<{ addr: string; tip: string; pid: number; stop: () => Promise<void> }> {
  const index = fileURLToPath(new URL('./index.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', index, 'sync', '--serve', dir, ...(verbose ? ['--verbose'] : [])], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error('server did not start in 60 s')), 60_000);
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString('utf8');
      const line = buf.split('\n').find((l) => l.startsWith('{'));
      if (!line) return;
      clearTimeout(timer);
      const { addr, tip } = JSON.parse(line) as { addr: string; tip: string };
      resolve({
        addr,
        tip,
        pid: child.pid!,
        stop: async () => {
          child.stdin!.end();
          const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
          await exited;
          clearTimeout(t);
        },
      });
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
}

/** One round's figures: the sync from the peer, then the direct import of the same blocks (import fields NaN with `--no-import`). */
interface Round {
  syncSecs: number;
  importSecs: number;
  /** CPU seconds of this node (every thread) during the sync / the import. */
  syncCpu: number;
  importCpu: number;
  /** CPU seconds of the serving peer's process during the sync. */
  serverCpu: number;
  syncThreads: ReturnType<typeof splitCpu>;
  importThreads?: ReturnType<typeof splitCpu>;
  /** Pool counters of the sync. */
  checked: number;
  fromCache: number;
}

/** A fresh node (own data dir, own pool with a cold cache) syncs from the server until its tip is the server's. */
async function syncRound(dir: string, params: ChainParams, server: { addr: string; tip: string; pid: number }, poolOpts: { threads?: number }): Promise<Pick<Round, 'syncSecs' | 'syncCpu' | 'serverCpu' | 'syncThreads' | 'checked' | 'fromCache'>> {
  const pool = await createVerifyPool(poolOpts);
  const client = await node(dir, params, pool, [server.addr]);
  try {
    const cpu0 = { client: ownCpuSeconds(), server: await processCpuSeconds(server.pid) };
    const threads0 = await threadCpu();
    const start = performance.now();
    await client.p2p.start();
    const deadline = Date.now() + 30 * 60_000;
    while (client.chain.tip.hashHex !== server.tip) {
      if (Date.now() > deadline) throw new Error('sync did not finish in 30 minutes');
      await new Promise((r) => setTimeout(r, 20));
    }
    const syncSecs = (performance.now() - start) / 1000;
    const syncCpu = ownCpuSeconds() - cpu0.client;
    const serverCpu = (await processCpuSeconds(server.pid)) - cpu0.server;
    const st = pool.stats();
    const syncThreads = splitCpu(cpuDelta(threads0, await threadCpu()), process.pid, st.threads);
    return { syncSecs, syncCpu, serverCpu, syncThreads, checked: st.verified, fromCache: st.cacheHits };
  } finally {
    await client.stop();
    await pool.stop();
  }
}

/** The same raw blocks imported straight into a fresh chain with a fresh pool, handed over 4 ahead. */
async function importRound(dir: string, params: ChainParams, blocks: readonly Uint8Array[], poolOpts: { threads?: number }): Promise<Pick<Round, 'importSecs' | 'importCpu' | 'importThreads'>> {
  const pool = await createVerifyPool(poolOpts);
  const chain = await openChain({ dataDir: dir, params, verifier: pool });
  try {
    const cpu0 = ownCpuSeconds();
    const threads0: Map<number, ThreadCpu> = await threadCpu();
    const start = performance.now();
    await importAhead(chain, blocks, 4);
    const importSecs = (performance.now() - start) / 1000;
    return { importSecs, importCpu: ownCpuSeconds() - cpu0, importThreads: splitCpu(cpuDelta(threads0, await threadCpu()), process.pid, pool.stats().threads) };
  } finally {
    await chain.close();
    await pool.stop();
  }
}

/** Runs the sync benchmark. */
export async function run(args: string[]): Promise<void> {
  verbose = args.includes('--verbose');
  if (args[0] === '--serve') return serve(args[1]);
  const { values } = parseArgs({ args, options: { blocks: { type: 'string', default: '2000' }, 'txs-per-block': { type: 'string', default: '10' }, rounds: { type: 'string', default: '3' }, threads: { type: 'string' }, import: { type: 'boolean', default: true }, verbose: { type: 'boolean' } }, allowNegative: true });
  const nBlocks = Number(values.blocks);
  const perBlock = Number(values['txs-per-block']);
  const rounds = Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 50) throw new Error('--rounds must be an integer from 1 to 50');
  const poolOpts = values.threads ? { threads: Number(values.threads) } : {};
  console.log(`preparing ${nBlocks} blocks × ${perBlock} transfers…`);
  const t0 = performance.now();
  const prep = await buildTransferChain({ blocks: nBlocks, perBlock, seedPrefix: 'bench-sync-sender-', genesisTime: Math.floor(Date.now() / 1000) - 3 * nBlocks - 3600 });
  console.log(`prepared in ${((performance.now() - t0) / 1000).toFixed(1)} s; ${(prep.bytes / 1e6).toFixed(1)} MB of blocks, ${prep.txs} transfers`);

  const root = await mkdtemp(join(tmpdir(), 'native-bench-sync-'));
  const load0 = loadavg();
  const results: Round[] = [];
  try {
    // The serving peer's data: the chain imported without signature checks (they are not what is measured).
    const serverDir = join(root, 'server');
    const seed = await openChain({ dataDir: join(serverDir, 'chain'), params: prep.params, verifier: acceptAllVerifier });
    for (const raw of prep.blocks) {
      const r = await seed.addBlock(raw);
      if (r.status !== 'connected') throw new Error(`server block not connected: ${r.status}`);
    }
    await seed.close();
    await writeFile(join(serverDir, 'genesis.json'), JSON.stringify(paramsToJson(prep.params)));
    const server = await startServer(serverDir);
    try {
      // Rounds alternate sync and import, so a neighbour's burst on the shared cores lands in
      // one round, and the median ratio is of figures taken minutes apart at most.
      for (let r = 1; r <= rounds; r++) {
        const s = await syncRound(join(root, `client-${r}`), prep.params, server, poolOpts);
        await rm(join(root, `client-${r}`), { recursive: true, force: true });
        const i = values.import ? await importRound(join(root, `import-${r}`), prep.params, prep.blocks, poolOpts) : { importSecs: NaN, importCpu: NaN };
        await rm(join(root, `import-${r}`), { recursive: true, force: true });
        results.push({ ...s, ...i });
        const ratio = values.import ? `, sync / import ${(i.importSecs / s.syncSecs).toFixed(2)}` : '';
        console.log(`round ${r}: sync ${s.syncSecs.toFixed(2)} s (${s.checked} signatures checked by the pool, ${s.fromCache} answered from its cache, checked ahead of the chain)${values.import ? `, import ${i.importSecs.toFixed(2)} s` : ''}${ratio}`);
      }
    } finally {
      await server.stop();
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }

  const split = (t: ReturnType<typeof splitCpu> | undefined) => (t ? `${t.main.toFixed(2)} / ${t.busiest.toFixed(2)} / ${t.rest.toFixed(2)}` : '—');
  const opt = (x: number, f: (x: number) => string) => (Number.isNaN(x) ? '—' : f(x));
  console.log('');
  console.log(`${nBlocks} blocks, ${prep.txs} transfers (${(prep.bytes / 1e6).toFixed(1)} MB); CPU split: main thread / verify pool (its busiest threads) / rest (LevelDB, libuv, V8 GC)`);
  console.log('');
  console.log('| round | sync s | import s | sync transfers/s | import transfers/s | this node\'s CPU s, sync / import | split, sync | split, import | serving peer CPU s | sync / import |');
  console.log('|---:|---:|---:|---:|---:|---:|---|---|---:|---:|');
  results.forEach((r, k) => {
    console.log(`| ${k + 1} | ${r.syncSecs.toFixed(2)} | ${opt(r.importSecs, (x) => x.toFixed(2))} | ${Math.round(prep.txs / r.syncSecs)} | ${opt(r.importSecs, (x) => String(Math.round(prep.txs / x)))} | ${r.syncCpu.toFixed(2)} / ${opt(r.importCpu, (x) => x.toFixed(2))} | ${split(r.syncThreads)} | ${split(r.importThreads)} | ${r.serverCpu.toFixed(2)} | ${opt(r.importSecs, (x) => (x / r.syncSecs).toFixed(2))} |`);
  });
  console.log('');
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const range = (xs: number[], f: (x: number) => string) => { const s = sorted(xs); return `${f(s[0])}–${f(s[s.length - 1])}, median ${f(percentile(s, 50))}`; };
  console.log(`sync: ${range(results.map((r) => prep.txs / r.syncSecs), (x) => String(Math.round(x)))} transfers/s`);
  if (values.import) {
    console.log(`import: ${range(results.map((r) => prep.txs / r.importSecs), (x) => String(Math.round(x)))} transfers/s`);
    console.log(`sync / import throughput: ${range(results.map((r) => r.importSecs / r.syncSecs), (x) => x.toFixed(2))}`);
  }
  console.log(`load average (1/5/15 min) before: ${load0.map((l) => l.toFixed(2)).join(' ')}, after: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
}
