/**
 * Mempool admission and eviction at scale: for each pool size (default 10k, 50k,
 * 100k ready transactions from as many senders), fills a mempool capped at exactly that many
 * transfers, then admits transactions that each evict one (a higher fee rate than the lowest
 * package) and transactions refused `mempool_full`, and prints the rates, the cost per admission
 * and the process RSS.
 *
 * What it measures is the mempool's own work: the chain is an in-memory stub (every account
 * funded, its key published) and signatures are accepted without checking (acceptAllVerifier),
 * so neither LevelDB reads nor ML-DSA verification (see `bench -- verify`) are in the numbers.
 * Options: `--sizes 10000,50000,100000`, `--evictions N` (default 2000), `--module <path>`
 * (another mempool module exporting createMempool, e.g. an older version, for comparison).
 *
 * `--runs SxD` (e.g. `64x32`) measures instead what a paid-call load does: S senders each admit D
 * transfers in nonce order, each sending its next when the previous is answered (the agents'
 * closed loop), so every sender keeps a run of pending nonces; the stub's state read yields to
 * the event loop once, as a database read does. Prints CPU µs per admission, wall time and the
 * number of state reads (admissions waiting together share one).
 */
import { EventEmitter } from 'node:events';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createDevnetChainParams } from '../consensus/devnet.js';
import { encodeAccount } from '../consensus/state.js';
import { encodeTx, TxType, TX_VERSION, type Tx } from '../consensus/tx.js';
import { transfer } from '../consensus/txTypes/transfer.js';
import { sha256 } from '../consensus/hash.js';
import { ED25519_PUBLIC_KEY_SIZE, ED25519_SIGNATURE_SIZE, MLDSA_PUBLIC_KEY_SIZE, MLDSA_SIGNATURE_SIZE } from '../consensus/keys.js';
import { COIN } from '../consensus/params.js';
import type { Chain } from '../chain/chain.js';
import type { StateView } from '../consensus/state.js';
import type { createMempool as CreateMempool } from '../chain/mempool.js';
import { acceptAllVerifier } from './acceptAllVerifier.js';

const params = createDevnetChainParams({ genesisBits: 0x207fffff });
const signature = { mldsa: new Uint8Array(MLDSA_SIGNATURE_SIZE), ed25519: new Uint8Array(ED25519_SIGNATURE_SIZE) };
/** Every account of the stub state: funded, nonce 0, its key published. */
const account = encodeAccount({ balance: 1_000_000n * COIN, nonce: 0n, publicKey: { mldsa: new Uint8Array(MLDSA_PUBLIC_KEY_SIZE), ed25519: new Uint8Array(ED25519_PUBLIC_KEY_SIZE) } });
const view: StateView = { get: (key) => (key.startsWith('a') ? account : undefined) };

/** State reads of the stub chains. */
let reads = 0;

/** The chain as the mempool uses it, in memory: a fixed tip over the stub state; a read waits one turn of the event loop. */
function stubChain(): Chain {
  const chain = Object.assign(new EventEmitter(), {
    params,
    tip: { hashHex: '00'.repeat(32), height: 1 },
    getStateView: async () => {
      reads++;
      await new Promise((r) => setImmediate(r));
      return view;
    },
    getAccount: async () => ({ balance: 1_000_000n * COIN, nonce: 0n }),
  });
  return chain as unknown as Chain;
}

/** Transfer number `i` (its own sender) paying `fee`, with `nonce`; keyless (the stub state has every key). */
function transferBytes(i: number, fee: bigint, nonce = 0n): Uint8Array {
  const from = sha256(new TextEncoder().encode(`bench-sender:${i}`)).subarray(0, 20);
  const tx: Tx = { version: TX_VERSION, chainId: params.chainId, type: TxType.transfer, from, nonce, fee, payload: transfer.encodePayload({ to: from, amount: 1n }), signature };
  return encodeTx(tx);
}

/** `--runs SxD`: S senders, each admitting D nonces in order, the next when the previous is answered. */
async function runs(spec: string, createMempool: typeof CreateMempool): Promise<void> {
  const [senders, depth] = spec.split('x').map(Number);
  if (!(senders > 0 && depth > 0)) throw new Error(`--runs takes SENDERSxDEPTH, e.g. 64x32, not ${spec}`);
  const pool = createMempool(stubChain(), acceptAllVerifier, params, {});
  const fee = 1n << 30n;
  const lists = Array.from({ length: senders }, (_, i) => Array.from({ length: depth }, (_, n) => transferBytes(i, fee, BigInt(n))));
  reads = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(lists.map(async (list) => {
    for (const b of list) await pool.add(b);
  }));
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const n = senders * depth;
  if (pool.count !== n) throw new Error(`admitted ${pool.count} of ${n}`);
  console.log(`| ${senders} × ${depth} | ${((cpu.user + cpu.system) / n).toFixed(0)} | ${wallMs.toFixed(0)} | ${reads.toLocaleString('en')} |`);
  pool.stop();
}

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}

/** Admits `all` in batches (admissions are serial inside the mempool; a batch keeps its queue busy); returns accepted and refused counts by code. */
async function admit(pool: { add(b: Uint8Array): Promise<unknown> }, all: Uint8Array[], batch = 1000): Promise<Map<string, number>> {
  const outcomes = new Map<string, number>();
  for (let i = 0; i < all.length; i += batch) {
    const rs = await Promise.allSettled(all.slice(i, i + batch).map((b) => pool.add(b)));
    for (const r of rs) {
      const k = r.status === 'fulfilled' ? 'accepted' : ((r.reason as { code?: string }).code ?? 'error');
      outcomes.set(k, (outcomes.get(k) ?? 0) + 1);
    }
  }
  return outcomes;
}

export async function run(args: string[]): Promise<void> {
  const sizes = (option(args, 'sizes') ?? '10000,50000,100000').split(',').map(Number);
  const evictions = Number(option(args, 'evictions') ?? 2000);
  const modulePath = option(args, 'module');
  const { createMempool } = (await import(modulePath ? pathToFileURL(resolve(modulePath)).href : '../chain/mempool.js')) as { createMempool: typeof CreateMempool };
  const runSpecs = option(args, 'runs');
  if (runSpecs) {
    console.log(`mempool bench, runs: ${modulePath ?? 'chain/mempool.ts'}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);
    console.log('| senders × nonces | CPU µs per admission | wall ms | state reads |\n|---|---:|---:|---:|');
    for (const spec of runSpecs.split(',')) await runs(spec, createMempool);
    return;
  }
  const minRate = params.minFeeRate;
  const size = transferBytes(0, 1n << 40n).length;
  console.log(`mempool bench: ${modulePath ?? 'chain/mempool.ts'}, transfers of ${size} bytes, ${evictions} evicting admissions per size, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const rows: string[] = [];
  let next = 0;
  for (const n of sizes) {
    const pool = createMempool(stubChain(), acceptAllVerifier, params, { maxBytes: n * size });
    // Fill: fee rates from 1× to 2× the minimum, in a fixed pseudo-random order.
    const fill = Array.from({ length: n }, (_, i) => transferBytes(next++, BigInt(size) * minRate * (1000n + BigInt((i * 7919) % 1000)) / 1000n));
    let t0 = performance.now();
    const filled = await admit(pool, fill);
    const fillSec = (performance.now() - t0) / 1000;
    if (filled.get('accepted') !== n || pool.count !== n) throw new Error(`fill: ${JSON.stringify([...filled])}, count ${pool.count}`);
    // Each of these pays more than every entry: it enters and evicts the lowest package.
    const rich = Array.from({ length: evictions }, (_, i) => transferBytes(next++, BigInt(size) * minRate * (3000n + BigInt(i)) / 1000n));
    t0 = performance.now();
    const evicting = await admit(pool, rich);
    const evictUs = ((performance.now() - t0) * 1000) / evictions;
    if (evicting.get('accepted') !== evictions || Math.abs(pool.count - n) > n / 100) throw new Error(`evicting: ${JSON.stringify([...evicting])}, count ${pool.count}`);
    // Each of these pays the minimum rate: refused mempool_full.
    const poor = Array.from({ length: evictions }, () => transferBytes(next++, BigInt(size) * minRate));
    t0 = performance.now();
    const refused = await admit(pool, poor);
    const refuseUs = ((performance.now() - t0) * 1000) / evictions;
    if (refused.get('mempool_full') !== evictions) throw new Error(`refused: ${JSON.stringify([...refused])}`);
    const rss = process.memoryUsage().rss / 2 ** 20;
    rows.push(`| ${n.toLocaleString('en')} | ${Math.round(n / fillSec).toLocaleString('en')} | ${evictUs.toFixed(0)} | ${refuseUs.toFixed(0)} | ${rss.toFixed(0)} |`);
    console.log(rows[rows.length - 1]);
    pool.stop();
  }
  console.log('\n| entries | fill, admissions/s | admission that evicts, µs each | refused mempool_full, µs each | RSS after, MiB |\n|---:|---:|---:|---:|---:|');
  for (const r of rows) console.log(r);
}
