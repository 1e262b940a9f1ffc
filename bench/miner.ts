/**
 * CPU miner job latency: time from the chain's new tip to the moment every worker thread of the
 * built-in miner has taken the job for it (the workers' acknowledgement, `MinerJobEvent.at`), and
 * to the moment the main thread posted it. The miner follows the mining job feed
 * (chain/jobFeed.ts) as in a node. The blocks come from "another miner" (built here, trivial
 * difficulty); the miner mines at a difficulty it cannot meet, so its workers stay busy hashing.
 * Options: `--tips N` (default 20), `--threads N` (default 2).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assembleBlock, grindHeader } from '../consensus/assemble.js';
import { createDevnetChainParams } from '../consensus/devnet.js';
import { sha256 } from '../consensus/hash.js';
import { SUPPLY_KEY } from '../consensus/state.js';
import { openChain } from '../chain/chain.js';
import { createMempool } from '../chain/mempool.js';
import { createJobFeed } from '../chain/jobFeed.js';
import { createMiner, type MinerJobEvent } from '../chain/miner.js';
import { acceptAllVerifier } from './acceptAllVerifier.js';
import { percentile } from './percentile.js';

function option(args: string[], name: string, fallback: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback;
}

export async function run(args: string[]): Promise<void> {
  const tips = Number(option(args, 'tips', '20'));
  const threads = Number(option(args, 'threads', '2'));
  const verifier = acceptAllVerifier;
  const dir = await mkdtemp(join(tmpdir(), 'bench-miner-'));
  const params = createDevnetChainParams({ genesisBits: 0x207fffff, genesisTime: Math.floor(Date.now() / 1000) - 60 });
  // The miner's own view: far harder bits, so it never solves and keeps hashing.
  const hard = createDevnetChainParams({ genesisBits: 0x1d00ffff, asertHalfLife: 2 ** 30, genesisTime: params.genesis.time });
  const chain = await openChain({ dataDir: dir, params, verifier });
  const mempool = createMempool(chain, verifier, params);
  mempool.start();
  const feed = createJobFeed({ mempoolRefreshMs: 2_000, keepAliveMs: 25_000, tag: 'bench' }, { chain, mempool, params: hard });
  await feed.start();
  const miner = createMiner(chain, mempool, hard, { threads, address: sha256(new TextEncoder().encode('bench-miner')).slice(0, 20), feed });
  const jobs: MinerJobEvent[] = [];
  miner.on('job', (e) => jobs.push(e));
  await miner.start();
  const other = sha256(new TextEncoder().encode('bench-other')).slice(0, 20);
  const acked: number[] = [];
  const posted: number[] = [];
  try {
    for (let i = 0; i < tips; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const tip = chain.tip;
      const state = await chain.getStateView([SUPPLY_KEY]);
      const b = assembleBlock({ parent: { hash: tip.hash, height: tip.height, time: tip.header.time }, medianTimePast: chain.medianTimePast(tip), now: Math.floor(Date.now() / 1000), txs: [], miner: other, state }, params);
      const header = grindHeader(b.header, params.powLimit, 10_000_000)!;
      let tipAt = 0;
      chain.once('tip', () => (tipAt = performance.timeOrigin + performance.now()));
      await chain.addBlock({ ...b, header });
      const hash = chain.tip.hashHex;
      const end = Date.now() + 10_000;
      const onTip = () => jobs.filter((e) => e.parentHash === hash);
      while (new Set(onTip().map((e) => e.worker)).size < threads && Date.now() < end) await new Promise((r) => setTimeout(r, 1));
      acked.push(Math.max(...onTip().map((e) => e.at - tipAt)));
      posted.push(Math.max(...onTip().map((e) => e.postedAt - tipAt)));
    }
  } finally {
    await miner.stop();
    feed.stop();
    mempool.stop();
    await chain.close();
    await rm(dir, { recursive: true, force: true });
  }
  console.log(`cpu miner job latency: chain tip → job taken by every worker (${threads} threads, ${tips} tips)`);
  console.log('measure            median ms  p95 ms  max ms');
  for (const [name, xs] of [
    ['posted (main)', posted],
    ['taken (workers)', acked],
  ] as const) {
    const s = [...xs].sort((a, b) => a - b);
    console.log(`${name.padEnd(17)} ${percentile(s, 50).toFixed(2).padStart(10)} ${percentile(s, 95).toFixed(2).padStart(7)} ${s[s.length - 1].toFixed(2).padStart(7)}`);
  }
}
