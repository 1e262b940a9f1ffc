/**
 * Stratum job latency: time from the chain's new tip to the new job (clean_jobs) read by the last
 * of N connected miners, on 127.0.0.1, for N = 1, 100 and 1,000 by default. The miners are plain
 * sockets in this same process (subscribed and authorised, each paying its own address, so every
 * connection gets its own coinb1), so the figure includes their reading too: an upper bound of what
 * real miners see on the same machine. Options: `--tips N` blocks per size (default 20),
 * `--sizes 1,100,1000`.
 */
import { createConnection, type Socket } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assembleBlock, grindHeader } from '../consensus/assemble.js';
import { encodeAddress } from '../consensus/address.js';
import { createDevnetChainParams } from '../consensus/devnet.js';
import { sha256 } from '../consensus/hash.js';
import { SUPPLY_KEY } from '../consensus/state.js';
import { openChain } from '../chain/chain.js';
import { createMempool } from '../chain/mempool.js';
import { acceptAllVerifier } from './acceptAllVerifier.js';
import { createMiningStats } from '../node/mining/stats.js';
import { createStratumServer } from '../node/mining/stratum.js';
import { percentile } from './percentile.js';

function option(args: string[], name: string, fallback: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback;
}

function now(): number {
  return performance.timeOrigin + performance.now();
}

/** A minimal miner socket: counts clean jobs and when the last one arrived. */
class Miner {
  clean = 0;
  lastCleanAt = 0;
  private buf = '';
  constructor(readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      const at = now();
      this.buf += d;
      let nl: number;
      while ((nl = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        const msg = JSON.parse(line) as { method?: string; params?: unknown[] };
        if (msg.method === 'mining.notify' && msg.params?.[8] === true) {
          this.clean++;
          this.lastCleanAt = at;
        }
      }
    });
  }
}

function connect(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = createConnection({ port, host: '127.0.0.1' }, () => resolve(s));
    s.once('error', reject);
  });
}

export async function run(args: string[]): Promise<void> {
  const tips = Number(option(args, 'tips', '20'));
  const sizes = option(args, 'sizes', '1,100,1000').split(',').map(Number);
  const verifier = acceptAllVerifier;
  console.log(`stratum notify latency: chain tip → new job read by the last of N miners (${tips} tips each)`);
  console.log('miners  median ms  p95 ms  max ms  server max ms');
  for (const n of sizes) {
    const dir = await mkdtemp(join(tmpdir(), 'bench-stratum-'));
    const params = createDevnetChainParams({ genesisBits: 0x207fffff, genesisTime: Math.floor(Date.now() / 1000) - 60 });
    const chain = await openChain({ dataDir: dir, params, verifier });
    const mempool = createMempool(chain, verifier, params);
    mempool.start();
    const server = createStratumServer({ host: '127.0.0.1', port: 0, maxConnections: n + 10, maxConnectionsPerAddress: n + 10, reservedConnections: 0 }, { chain, mempool, params, stats: createMiningStats() });
    await server.start();
    const miners: Miner[] = [];
    for (let i = 0; i < n; i++) {
      const s = await connect(server.port!);
      const m = new Miner(s);
      miners.push(m);
      const address = encodeAddress(sha256(new TextEncoder().encode(`bench-miner-${i}`)).slice(0, 20), params.hrp);
      s.write(`{"id":1,"method":"mining.subscribe","params":["bench"]}\n{"id":2,"method":"mining.authorize","params":["${address}.w${i}","x"]}\n`);
    }
    while (miners.some((m) => m.clean === 0)) await new Promise((r) => setTimeout(r, 10));
    const samples: number[] = [];
    for (let t = 0; t < tips; t++) {
      const before = miners.map((m) => m.clean);
      const tip = chain.tip;
      const state = await chain.getStateView([SUPPLY_KEY]);
      const b = assembleBlock({ parent: { hash: tip.hash, height: tip.height, time: tip.header.time }, medianTimePast: chain.medianTimePast(tip), now: Math.floor(Date.now() / 1000), txs: [], miner: new Uint8Array(20), state }, params);
      const header = grindHeader(b.header, params.powLimit, 1_000_000)!;
      let tipAt = 0;
      chain.once('tip', () => (tipAt = now()));
      await chain.addBlock({ ...b, header });
      while (miners.some((m, i) => m.clean === before[i])) await new Promise((r) => setImmediate(r));
      samples.push(Math.max(...miners.map((m) => m.lastCleanAt)) - tipAt);
    }
    samples.sort((a, b) => a - b);
    const serverMax = Math.max(...server.info().notifyLatencyMs);
    console.log(`${String(n).padStart(6)}  ${percentile(samples, 50).toFixed(2).padStart(9)}  ${percentile(samples, 95).toFixed(2).padStart(6)}  ${samples[samples.length - 1].toFixed(2).padStart(6)}  ${serverMax.toFixed(2).padStart(13)}`);
    for (const m of miners) m.socket.destroy();
    await server.stop();
    mempool.stop();
    await chain.close();
    await rm(dir, { recursive: true, force: true });
  }
}
