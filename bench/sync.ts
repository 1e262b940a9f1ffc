/**
 * `npm run bench -- sync [--blocks N] [--txs-per-block N] [--threads N] [--no-import] [--verbose]`
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

function row(metric: string, value: string): void {
  console.log(`| ${metric} | ${value} |`);
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

/** Runs the sync benchmark. */
export async function run(args: string[]): Promise<void> {
  verbose = args.includes('--verbose');
  if (args[0] === '--serve') return serve(args[1]);
  const { values } = parseArgs({ args, options: { blocks: { type: 'string', default: '2000' }, 'txs-per-block': { type: 'string', default: '10' }, threads: { type: 'string' }, import: { type: 'boolean', default: true }, verbose: { type: 'boolean' } }, allowNegative: true });
  const nBlocks = Number(values.blocks);
  const perBlock = Number(values['txs-per-block']);
  const poolOpts = values.threads ? { threads: Number(values.threads) } : {};
  console.log(`preparing ${nBlocks} blocks × ${perBlock} transfers…`);
  const t0 = performance.now();
  const prep = await buildTransferChain({ blocks: nBlocks, perBlock, seedPrefix: 'bench-sync-sender-', genesisTime: Math.floor(Date.now() / 1000) - 3 * nBlocks - 3600 });
  console.log(`prepared in ${((performance.now() - t0) / 1000).toFixed(1)} s; ${(prep.bytes / 1e6).toFixed(1)} MB of blocks, ${prep.txs} transfers`);

  const root = await mkdtemp(join(tmpdir(), 'native-bench-sync-'));
  const load0 = loadavg();
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
    const target = server.tip;

    const pool = await createVerifyPool(poolOpts);
    const client = await node(join(root, 'client'), prep.params, pool, [server.addr]);
    let syncSecs = 0;
    let cpu = { client: NaN, server: NaN };
    let syncThreads: ReturnType<typeof splitCpu> | undefined;
    try {
      const cpu0 = { client: ownCpuSeconds(), server: await processCpuSeconds(server.pid) };
      const threads0 = await threadCpu();
      const start = performance.now();
      await client.p2p.start();
      const deadline = Date.now() + 30 * 60_000;
      while (client.chain.tip.hashHex !== target) {
        if (Date.now() > deadline) throw new Error('sync did not finish in 30 minutes');
        await new Promise((r) => setTimeout(r, 20));
      }
      syncSecs = (performance.now() - start) / 1000;
      cpu = { client: ownCpuSeconds() - cpu0.client, server: (await processCpuSeconds(server.pid)) - cpu0.server };
      const st = pool.stats();
      syncThreads = splitCpu(cpuDelta(threads0, await threadCpu()), process.pid, st.threads);
      console.log(`sync: ${st.verified} signatures checked by the pool, ${st.cacheHits} answered from its cache (checked ahead of the chain)`);
    } finally {
      await client.stop();
      await server.stop();
      await pool.stop();
    }

    let importSecs = 0;
    let importCpu = NaN;
    let importThreads: ReturnType<typeof splitCpu> | undefined;
    if (values.import) {
      const pool2 = await createVerifyPool(poolOpts);
      const chain = await openChain({ dataDir: join(root, 'import'), params: prep.params, verifier: pool2 });
      try {
        const start = performance.now();
        const cpu0 = ownCpuSeconds();
        const threads0: Map<number, ThreadCpu> = await threadCpu();
        await importAhead(chain, prep.blocks, 4);
        importSecs = (performance.now() - start) / 1000;
        importCpu = ownCpuSeconds() - cpu0;
        importThreads = splitCpu(cpuDelta(threads0, await threadCpu()), process.pid, pool2.stats().threads);
      } finally {
        await chain.close();
        await pool2.stop();
      }
    }

    console.log('');
    console.log('| metric | sync from one peer | direct import |');
    console.log('|---|---|---|');
    const both = (f: (s: number) => string) => `${f(syncSecs)} | ${values.import ? f(importSecs) : '—'}`;
    row('blocks', `${nBlocks} | ${nBlocks}`);
    row('transfers', `${prep.txs} | ${prep.txs}`);
    row('seconds', both((s) => s.toFixed(2)));
    row('blocks per second', both((s) => (nBlocks / s).toFixed(1)));
    row('transfers per second', both((s) => String(Math.round(prep.txs / s))));
    row('CPU seconds, this node (all threads)', `${cpu.client.toFixed(2)} | ${values.import ? importCpu.toFixed(2) : '—'}`);
    const split = (t: ReturnType<typeof splitCpu> | undefined) => (t ? `${t.main.toFixed(2)} / ${t.busiest.toFixed(2)} / ${t.rest.toFixed(2)}` : '—');
    row('… main thread / verify pool (its busiest threads) / rest (LevelDB, libuv, V8 GC)', `${split(syncThreads)} | ${split(importThreads)}`);
    row('CPU seconds, the serving peer (same machine)', `${cpu.server.toFixed(2)} | —`);
    if (values.import) {
      console.log('');
      console.log(`sync / import throughput: ${(importSecs / syncSecs).toFixed(2)}`);
    }
    console.log(`load average (1/5/15 min) before: ${load0.map((l) => l.toFixed(2)).join(' ')}, after: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
