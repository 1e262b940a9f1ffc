/**
 * One node vs a fleet on one PostgreSQL ledger (`npm run bench -- paid --fleet 2`).
 *
 * A throwaway PostgreSQL (test/helpers/postgres.ts: durability off, as in the tests), and N real
 * devnet nodes on it (`--ledger postgres://…`), connected over p2p (one genesis: the first node
 * mines with interval mining, `--block-time`, the others do not mine and bootstrap to it). The
 * agents of bench/paid.ts (payments signed ahead, each committing to the database's seller id,
 * quote → submit → settle with long-poll → result) run two timed phases in the same run, on the
 * same chain and ledger:
 *
 *   1. every agent calls the first node only (one node sells);
 *   2. agent i calls node i mod N (N nodes sell; an agent keeps to one node, as a sticky load
 *      balancer does, so its payments reach one mempool in nonce order).
 *
 * Then, with the nodes stopped, the ledger alone: `--ledger-workers` concurrent loops (default 32)
 * each doing what a paid call does to the ledger — a claim (INSERT … ON CONFLICT DO NOTHING) then
 * its settle (the UPDATE that ends it) — through `--ledger-pools` PgLedger instances (default 4,
 * one per simulated node, 10 connections each), for `--ledger-seconds` (default 10): ledger
 * operations per second and their p50/p99.
 *
 * On this machine every process shares the same 2 cores: the nodes, PostgreSQL and the agents.
 * Phase 2 therefore says what a second node costs and whether the shared ledger holds, not what a
 * second machine would add.
 *
 * Options: --fleet N (2), --seconds N per phase (30), --warmup N (5), --agents N (32),
 * --inflight N per agent (8), --block-time S (1), --wait N (10), --ledger-seconds N (10),
 * --ledger-workers N (32), --ledger-pools N (4).
 */
import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { DEVNET_GENESIS_FILE } from '../node/chainParams.js';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { encodeAddress, TESTNET_HRP } from '../consensus/address.js';
import { createDevnetChainParams, getDevKeyPair, getDevPayeeKeyPair } from '../consensus/devnet.js';
import { sha256 } from '../consensus/hash.js';
import { createKeyPairFromSeed } from '../consensus/keys.js';
import { COIN } from '../consensus/params.js';
import { createTransferTx } from '../consensus/txBuilder.js';
import { worldClock } from '../services/world-clock.js';
import { PgLedger } from '../x402/ledger/pgLedger.js';
import { BIN, childEnv, ROOT } from '../test/helpers/nodeProcess.js';
import { startPostgres } from '../test/helpers/postgres.js';
import { codeOf, f0, f1, f2, fastSigner, load, logLines, paidCall, request, signPayment, sleep, summary, waitMined, ZONES, type Agent, type CallRecord, type Terms } from './paidKit.js';

interface FleetNode {
  readonly child: ChildProcess;
  readonly url: string;
  readonly p2p: string | undefined;
  readonly logFile: string;
  readonly exited: Promise<number | null>;
}

async function startFleetNode(dir: string, name: string, ledger: string, flags: string[]): Promise<FleetNode> {
  const logFile = join(dir, `${name}.log`);
  const out = openSync(logFile, 'a');
  const args = [BIN, 'start', '--dev', '--data-dir', join(dir, name), '--http-host', '127.0.0.1', '--http-port', '0', '--p2p-host', '127.0.0.1', '--p2p-port', '0', '--no-stratum', '--ledger', ledger, '--http-expensive-rate', '0', ...flags];
  const child = spawn(process.execPath, args, { cwd: ROOT, env: childEnv(), stdio: ['ignore', out, out] });
  closeSync(out);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const deadline = Date.now() + 120_000;
  for (;;) {
    const lines = logLines(await readFile(logFile, 'utf8'));
    const listening = lines.find((l) => l.msg === 'listening' && typeof l.url === 'string');
    if (listening) {
      const p2p = lines.find((l) => l.msg === 'p2p listening')?.addrs as string[] | undefined;
      return { child, url: listening.url as string, p2p: p2p?.[0], logFile, exited };
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`node ${name} did not start: ${(await readFile(logFile, 'utf8')).slice(-2000)}`);
    }
    await sleep(100);
  }
}

async function stopFleetNode(n: FleetNode): Promise<void> {
  if (n.child.exitCode !== null) return;
  n.child.kill('SIGTERM');
  const timer = setTimeout(() => n.child.kill('SIGKILL'), 30_000);
  await n.exited;
  clearTimeout(timer);
}

/** One closed-loop phase: every agent keeps `inflight` calls going against `urlOf(agent index)`. */
async function phase(agents: Agent[], urlOf: (i: number) => string, terms: Terms, o: { seconds: number; warmup: number; inflight: number; wait: number }) {
  const records: CallRecord[] = [];
  const t0 = performance.now();
  const tEnd = t0 + o.seconds * 1000;
  const tWarm = t0 + o.warmup * 1000;
  const loadWarm: number[] = [];
  const total = agents.length * o.inflight;
  const loop = async (a: Agent, ai: number, i: number) => {
    await sleep((i / total) * o.warmup * 500);
    while (performance.now() < tEnd && a.next < a.payments.length && !a.stopped) records.push(await paidCall(urlOf(ai), a, a.payments[a.next++], terms, o.wait));
  };
  const sampler = setTimeout(() => loadWarm.push(...(load().split(' ').map(Number))), o.warmup * 1000 + (o.seconds - o.warmup) * 500);
  await Promise.all(agents.flatMap((a, ai) => Array.from({ length: o.inflight }, (_, j) => loop(a, ai, j * agents.length + ai))));
  clearTimeout(sampler);
  const inWindow = records.filter((r) => r.resultAt !== undefined && r.resultAt >= tWarm && r.resultAt < tEnd);
  const lat = summary(records.filter((r) => r.resultAt !== undefined && r.submitAt >= tWarm && r.submitAt < tEnd).map((r) => r.resultAt! - r.submitAt));
  const errors = new Map<string, number>();
  for (const r of records) if (r.error) errors.set(r.error, (errors.get(r.error) ?? 0) + 1);
  return {
    rate: inWindow.length / (o.seconds - o.warmup),
    settled: records.filter((r) => r.resultAt !== undefined).length,
    started: records.length,
    lat,
    refunds: records.filter((r) => r.refunded).length,
    lost: records.filter((r) => r.accepted && r.resultAt === undefined).length,
    errors,
    loadMid: loadWarm.length ? loadWarm.map((l) => l.toFixed(2)).join(' ') : load(),
  };
}

/** The ledger alone: claim + settle loops through `pools` PgLedger instances (see module comment). */
async function ledgerOps(url: string, seconds: number, workers: number, pools: number) {
  const ledgers = await Promise.all(Array.from({ length: pools }, (_, i) => PgLedger.open(url, { nodeId: `bench-${i}` })));
  const lat: number[] = [];
  let ops = 0;
  let errors = 0;
  const tEnd = performance.now() + seconds * 1000;
  try {
    await Promise.all(
      Array.from({ length: workers }, async (_, w) => {
        const l = ledgers[w % pools]!;
        while (performance.now() < tEnd) {
          const id = randomBytes(32).toString('hex');
          try {
            let t = performance.now();
            await l.claim({ id, rail: 'native', serviceId: 'native-world-clock', requestHash: id, caller: 'bench', amount: '200000' });
            lat.push(performance.now() - t);
            t = performance.now();
            await l.settle(id, { time: '12:00' }, { txId: id, height: 1 });
            lat.push(performance.now() - t);
            ops += 2;
          } catch {
            errors++;
          }
        }
      }),
    );
  } finally {
    await Promise.all(ledgers.map((l) => l.close()));
  }
  return { opsPerSecond: ops / seconds, lat: summary(lat), errors };
}

export async function runFleet(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      fleet: { type: 'string' },
      seconds: { type: 'string' },
      warmup: { type: 'string' },
      agents: { type: 'string' },
      inflight: { type: 'string' },
      'block-time': { type: 'string' },
      wait: { type: 'string' },
      'ledger-seconds': { type: 'string' },
      'ledger-workers': { type: 'string' },
      'ledger-pools': { type: 'string' },
    },
    strict: true,
  });
  const int = (v: string | undefined, d: number, min = 1) => {
    const n = Number(v ?? d);
    if (!Number.isInteger(n) || n < min) throw new RangeError(`expected an integer ≥ ${min}, got ${v}`);
    return n;
  };
  const fleetSize = int(values.fleet, 2, 2);
  const seconds = int(values.seconds, 30);
  const warmup = int(values.warmup, 5, 0);
  if (warmup >= seconds) throw new RangeError('--warmup must be shorter than --seconds');
  const agentCount = int(values.agents, 32);
  const inflight = int(values.inflight, 8);
  const blockTime = int(values['block-time'], 1);
  const wait = int(values.wait, 10, 0);
  const ledgerSeconds = int(values['ledger-seconds'], 10);
  const ledgerWorkers = int(values['ledger-workers'], 32);
  const ledgerPools = int(values['ledger-pools'], 4);
  // Enough payments for both phases at up to 400 calls/s (one node sold 255 calls/s on 2026-11-28: the 150 of before ran the second phase dry).
  const presign = Math.ceil((400 * 2 * seconds) / agentCount) + inflight;

  console.log(`paid-call fleet benchmark: ${availableParallelism()} cores, Node ${process.version}, ${new Date().toISOString()}`);
  console.log(`command: npm run bench -- paid ${args.join(' ')}`);
  console.log(`load average before: ${load()}`);
  console.log(`${fleetSize} nodes on one PostgreSQL ledger; ${agentCount} agents × ${inflight} calls in flight; two phases of ${seconds} s (first ${warmup} s not counted); interval mining --block-time ${blockTime} on the first node`);
  const dir = await mkdtemp(join(tmpdir(), 'native-bench-fleet-'));
  const pg = await startPostgres();
  const nodes: FleetNode[] = [];
  try {
    const url = await pg.createDatabase('fleet');
    // The seller id is the database's: created here by the first open, before the nodes start, so the payments can be signed ahead.
    const first = await PgLedger.open(url, { nodeId: 'bench' });
    const sellerId = first.sellerId;
    await first.close();
    const devnet = createDevnetChainParams();
    const terms: Terms = { chainId: devnet.chainId, amount: worldClock.priceBase, payTo: getDevPayeeKeyPair().address, payToText: encodeAddress(getDevPayeeKeyPair().address, devnet.hrp), sellerId, feeRate: devnet.minFeeRate };
    const keys = Array.from({ length: agentCount }, (_, i) => createKeyPairFromSeed(sha256(new TextEncoder().encode(`bench-fleet-agent-${i}`))));
    const sign = await fastSigner();
    const tSign = performance.now();
    const agents: Agent[] = keys.map((kp, i) => {
      const payments = Array.from({ length: presign + 1 }, (_, n) => signPayment(sign, kp, terms, BigInt(n), ZONES[(i + n) % ZONES.length]!));
      return { key: kp, address: encodeAddress(kp.address, TESTNET_HRP), payments, next: 0, submitted: Promise.resolve() };
    });
    console.log(`signed ${agentCount * (presign + 1)} payments ahead in ${f1((performance.now() - tSign) / 1000)} s`);

    const miner = encodeAddress(createKeyPairFromSeed(sha256(new TextEncoder().encode('bench-fleet-miner'))).address, TESTNET_HRP);
    nodes.push(await startFleetNode(dir, 'n0', url, ['--mine', '--block-time', String(blockTime), '--miner-address', miner]));
    if (!nodes[0]!.p2p) throw new Error('the first node logged no p2p address');
    // One chain: the others start from the first node's genesis (a new devnet data dir would make its own, timed now).
    for (let i = 1; i < fleetSize; i++) {
      await mkdir(join(dir, `n${i}`), { recursive: true });
      await copyFile(join(dir, 'n0', DEVNET_GENESIS_FILE), join(dir, `n${i}`, DEVNET_GENESIS_FILE));
    }
    for (let i = 1; i < fleetSize; i++) nodes.push(await startFleetNode(dir, `n${i}`, url, ['--no-mine', '--block-time', String(blockTime), '--bootstrap', nodes[0]!.p2p!]));
    const urls = nodes.map((n) => n.url);

    // Funding from the dev wallet through the first node; every node must see it mined.
    const funds = (terms.amount + 10_000n * terms.feeRate) * BigInt(presign + 1) + COIN;
    const dev = getDevKeyPair();
    const devAccount = (await request('GET', `${urls[0]}/api/v1/account/${encodeAddress(dev.address, TESTNET_HRP)}`)).json;
    let devNonce = BigInt(devAccount.pendingNonce as number);
    const fundIds: string[] = [];
    for (const kp of keys) {
      const t = createTransferTx({ key: dev, chainId: terms.chainId, to: kp.address, amount: funds, nonce: devNonce, includeKey: devNonce === 0n && devAccount.publicKeyKnown !== true, feeRate: terms.feeRate });
      devNonce++;
      const a = await request('POST', `${urls[0]}/api/v1/tx`, { tx: Buffer.from(t.bytes).toString('hex') });
      if (a.status >= 300) throw new Error(`funding transfer refused: ${codeOf(a)}`);
      fundIds.push(t.id);
    }
    for (const u of urls) await waitMined(u, fundIds, 60_000);
    // First call of every agent (its key goes on chain), at its phase-2 node; then every node must know the keys.
    const firsts = await Promise.all(agents.map((a, i) => paidCall(urls[i % fleetSize]!, a, a.payments[a.next++]!, terms, wait)));
    const bad = firsts.filter((r) => r.resultAt === undefined);
    if (bad.length) throw new Error(`${bad.length} first calls failed: ${bad[0]!.error}`);
    const fleet = (await request('GET', `${urls[0]}/api/v1/status`)).json.fleet as { live?: number } | undefined;
    console.log(`fleet up: ${fleet?.live ?? '?'} live nodes in the heartbeat table; funding and first calls done`);

    const o = { seconds, warmup, inflight, wait };
    const one = await phase(agents, () => urls[0]!, terms, o);
    const many = await phase(agents, (i) => urls[i % fleetSize]!, terms, o);
    for (const n of nodes.splice(0)) await stopFleetNode(n);
    const lg = await ledgerOps(await pg.createDatabase('ledger_ops'), ledgerSeconds, ledgerWorkers, ledgerPools);

    const row = (name: string, p: Awaited<ReturnType<typeof phase>>) =>
      `| ${name} | ${f1(p.rate)} | ${f0(p.lat.p50)} / ${f0(p.lat.p99)} | ${p.settled} / ${p.started} | ${p.refunds} | ${p.lost} | ${p.errors.size ? [...p.errors].map(([c, n]) => `${c}: ${n}`).join(', ') : 'none'} | ${p.loadMid} |`;
    console.log('');
    console.log(`## Paid calls: one node vs ${fleetSize} nodes on one PostgreSQL ledger (same run, same chain and ledger)`);
    console.log('');
    console.log('| phase | settled calls/s | submit → result ms p50 / p99 | settled / started | refunds | lost | errors | load average mid-phase |');
    console.log('|---|---|---|---|---|---|---|---|');
    console.log(row('1 node sells', one));
    console.log(row(`${fleetSize} nodes sell`, many));
    console.log('');
    console.log(`## The ledger alone: claim + settle, ${ledgerWorkers} loops through ${ledgerPools} PgLedger pools, ${ledgerSeconds} s`);
    console.log('');
    console.log('| metric | value |');
    console.log('|---|---|');
    console.log(`| ledger operations/s (claims + settles) | ${f0(lg.opsPerSecond)} |`);
    console.log(`| paid calls/s that is (2 operations each) | ${f0(lg.opsPerSecond / 2)} |`);
    console.log(`| operation ms p50 / p99 | ${f2(lg.lat.p50)} / ${f2(lg.lat.p99)} |`);
    console.log(`| errors | ${lg.errors} |`);
    console.log(`\nload average after: ${load()}`);
  } finally {
    for (const n of nodes) await stopFleetNode(n).catch(() => undefined);
    await pg.stop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}
