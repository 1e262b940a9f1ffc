/**
 * Paid calls per second end to end (`npm run bench -- paid`).
 *
 * A real devnet node process (built-in miner on with one thread, Stratum and p2p off, the
 * per-address limit of the expensive endpoints off because every agent comes from 127.0.0.1,
 * its log at the default level written to a file, as an operator's would be, not to a pipe this
 * busy process would have to drain) and, in this process, N simulated agents (default 64), each with its own key, calling
 * `native-world-clock` the whole native way:
 *
 *   quote (unpaid POST → 402, parsed and checked against the payment about to be sent)
 *   → POST /api/v1/tx with the signed `agent_invoke` (its requestHash the commitment to the
 *     node's seller id, the service, the request and the payment's own salt, x402/core/wire.ts)
 *   → POST the call again with `payment: {txId, salt}` and `?wait=` (long-poll until the block)
 *   → 200 with the result and a receipt (checked: tx id, service, height).
 *
 * Funding: a funding phase, not genesis. The dev wallet sends one transfer to every agent; once
 * they are mined, every agent makes one call whose payment carries its public key (nonce 0), so
 * the timed calls are all 4.8 kB payments of known keys, like an agent's steady state.
 *
 * Payments are signed ahead of time here, before the node starts (ML-DSA-87 through liboqs WASM
 * plus Ed25519 through OpenSSL, 1.2–1.5 ms per payment on this machine, one thread): signing is
 * the agents' cost, not the node's; on 2 cores signing during the run would take CPU from the
 * node being measured, and signing while the node idles would let its miner set the difficulty
 * for a whole core (ASERT's 120 s half-life then makes blocks slow for minutes once the load
 * starts). The quote of each request is known ahead (the devnet's chain id, the dev payee,
 * world-clock's price, and the seller id: the node's ledger is created here, before the node
 * starts, so its random id is known; each payment commits to it, its request and a random salt
 * of its own), so a payment signed ahead is exactly what an agent would sign after its quote; the
 * node's quotes are checked against these terms when it is up, and each timed call still asks for
 * its quote and refuses to pay when it differs.
 *
 * Load: closed loop by default. Every agent keeps `--inflight` calls going (nonces in order: a call's
 * payment is submitted after the previous payment of the same agent was accepted), so up to
 * agents × inflight calls wait for blocks at once; the loops start spread over the first half of
 * the warm-up. A closed loop saturates the node, so its p99 is a queue's. With `--rate N` the
 * load is an open loop instead: N calls per second in all, spread evenly over the agents and in
 * time (agent i starts its calls at i/N s, then every agents/N s, whether or not its earlier calls
 * finished; each agent still submits its payments in nonce order), so p99 can be measured at a
 * fixed offered load below saturation. The open loop also reports latency from the scheduled
 * start (what an agent waits, queueing in the agents' process included).
 *
 * Blocks: the devnet's free-running proof-of-work miner by default (exponential block intervals:
 * the p99 of the wait for the next block alone is about 4.6 × the mean). With `--block-time S`
 * the node runs interval mining (chain/pacedMiner.ts: a block every S s on the slot grid, no
 * hashing load), so submit → result measures what the node adds to the wait for the next slot;
 * the report compares p99 with one block interval + 200 ms (the throughput goal). The first `--warmup` seconds are not counted; settled calls per second is over the
 * rest of `--seconds`. Afterwards every call still in flight is awaited (bounded): a payment
 * accepted by the node without a result is "lost". A quote is tried up to 3 times; an agent whose
 * payment was not accepted stops (its later nonces could never be mined) and is reported.
 *
 * Then a USDC-rail round against the test facilitator (test/helpers/facilitator.ts, its own
 * process): `--usdc-connections` loops paying with EIP-3009 authorizations (signed ahead with
 * viem from reference/), reporting calls per second, p50/p99 and the facilitator's own handling
 * time of /verify and /settle in the same run. Skipped, saying why, without reference/.
 *
 * Reported: sustained settled calls/s; per block in the window the transactions and bytes; block
 * intervals; p50/p99 from submit to result, and from the including block's arrival to the result;
 * how many calls made the first block mined after their submit; refunds; errors by code; the
 * node's CPU seconds in the timed window by thread (main thread = the process id; the miner is the
 * thread that was busiest while the node was idle; the verify pool's two threads follow).
 *
 * Options: --seconds N (60), --warmup N (10), --agents N (64), --inflight N per agent (32),
 * --rate N total calls/s (open loop; default: the closed loop), --block-time S (interval mining),
 * --pipeline (each agent sends its next payment once the previous one was sent, not answered),
 * --wait N settle long-poll seconds (10), --presign N payments per agent (default: enough for
 * 600 calls/s), --usdc-seconds N (20; 0 skips), --usdc-connections N (64), --cpu-prof DIR
 * (writes the node's V8 CPU profile there and prints the counted window's main-thread time by part:
 * bench/cpuProfile.ts), --node-arg ARG (extra node flag, repeatable).
 * --fleet N: one node vs N nodes on one PostgreSQL ledger instead (bench/paidFleet.ts, its own options).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { encodeAddress, TESTNET_HRP } from '../consensus/address.js';
import { createDevnetChainParams, getDevKeyPair, getDevPayeeKeyPair } from '../consensus/devnet.js';
import { sha256 } from '../consensus/hash.js';
import { createKeyPairFromSeed } from '../consensus/keys.js';
import { COIN } from '../consensus/params.js';
import { createTransferTx } from '../consensus/txBuilder.js';
import { worldClock } from '../services/world-clock.js';
import { openLedger } from '../x402/ledger/open.js';
import { FacilitatorControl, startFacilitatorProcess, type FacilitatorProcess } from '../test/helpers/facilitator.js';
import { BIN, childEnv, ROOT } from '../test/helpers/nodeProcess.js';
import { cpuDelta, splitCpu, threadCpu, type ThreadCpu } from './threadCpu.js';
import { newestProfile, profileParts, type ProfileParts } from './cpuProfile.js';
import { type Agent, type CallRecord, SERVICE, type Signed, type Terms, ZONES, codeOf, f0, f1, f2, fastSigner, load, logLines, paidCall, request, signPayment, sleep, summary, waitMined, httpAgent, quoteOf, quoteRetryReasons, type Answer } from './paidKit.js';

/** The USDC payee of the node's 402 (any checksummed EVM address). */
const USDC_PAY_TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';

// ---------------------------------------------------------------- node and payments

/** The node process: its log goes to a file, so a busy agents' process never makes it wait on a full pipe. */
interface BenchNode {
  readonly child: ChildProcess;
  readonly url: string;
  readonly logFile: string;
  readonly exited: Promise<number | null>;
}

async function startNode(dir: string, minerAddress: string, facilitatorUrl: string, nodeArgs: string[], nodeFlags: string[]): Promise<BenchNode> {
  const logFile = join(dir, 'node.log');
  const out = openSync(logFile, 'a');
  const args = [...nodeArgs, BIN, 'start', '--dev', '--data-dir', join(dir, 'data'), '--http-host', '127.0.0.1', '--http-port', '0', '--no-p2p', '--no-stratum', '--mine', '--mine-threads', '1', '--miner-address', minerAddress,
    '--usdc-pay-to', USDC_PAY_TO, '--facilitator-url', facilitatorUrl, '--base-rpc-url', 'http://127.0.0.1:9',
    // Every agent calls from 127.0.0.1: the per-address limit of the expensive endpoints is off for the bench.
    '--http-expensive-rate', '0', ...nodeFlags];
  const child = spawn(process.execPath, args, { cwd: ROOT, env: childEnv(), stdio: ['ignore', out, out] });
  closeSync(out);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const deadline = Date.now() + 120_000;
  for (;;) {
    const listening = logLines(await readFile(logFile, 'utf8')).find((l) => l.msg === 'listening' && typeof l.url === 'string');
    if (listening) return { child, url: listening.url as string, logFile, exited };
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the node did not start: ${(await readFile(logFile, 'utf8')).slice(-2000)}`);
    }
    await sleep(100);
  }
}

async function stopNode(node: BenchNode): Promise<void> {
  if (node.child.exitCode !== null) return;
  node.child.kill('SIGTERM');
  const timer = setTimeout(() => node.child.kill('SIGKILL'), 30_000);
  await node.exited;
  clearTimeout(timer);
}

// ---------------------------------------------------------------- USDC round

interface UsdcResult {
  readonly seconds: number;
  readonly ok: number;
  readonly latencies: number[];
  readonly errors: Map<string, number>;
  readonly verifyMs: number[];
  readonly settleMs: number[];
  /** CPU seconds in the round. */
  readonly cpu: { readonly nodeMain: number; readonly nodeTotal: number; readonly facilitator: number; readonly agents: number };
}

async function usdcRound(url: string, facilitator: FacilitatorProcess, seconds: number, connections: number, signed: string[], nodePid: number): Promise<UsdcResult> {
  const endpoint = `${url}/api/x402/${SERVICE}`;
  const control = new FacilitatorControl(facilitator.url);
  await control.reset();
  const latencies: number[] = [];
  const errors = new Map<string, number>();
  let next = 0;
  let ok = 0;
  const end = performance.now() + seconds * 1000;
  const loop = async () => {
    while (performance.now() < end && next < signed.length) {
      const header = signed[next++];
      const t0 = performance.now();
      const a = await request('POST', endpoint, { request: 'Europe/Berlin' }, { 'x-payment': header }).catch((e: Error) => ({ status: 0, json: { error: { code: `transport: ${e.message.slice(0, 40)}` } } }) as Answer);
      if (a.status === 200 && a.json.result !== undefined) {
        ok++;
        latencies.push(performance.now() - t0);
      } else errors.set(codeOf(a), (errors.get(codeOf(a)) ?? 0) + 1);
    }
  };
  // Who is busy during the round: the node (its main thread), the facilitator process, this one.
  const cpu0 = { node: await threadCpu(nodePid), facilitator: await threadCpu(facilitator.child.pid!), agents: process.cpuUsage() };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: connections }, loop));
  const elapsed = (performance.now() - t0) / 1000;
  const nodeCpu = splitCpu(cpuDelta(cpu0.node, await threadCpu(nodePid)), nodePid, 2);
  const facilitatorCpu = splitCpu(cpuDelta(cpu0.facilitator, await threadCpu(facilitator.child.pid!)), facilitator.child.pid!, 0).total;
  const agents = process.cpuUsage(cpu0.agents);
  const calls = await control.calls();
  return {
    seconds: elapsed,
    ok,
    latencies,
    errors,
    verifyMs: calls.handledMs.verify,
    settleMs: calls.handledMs.settle,
    cpu: { nodeMain: nodeCpu.main, nodeTotal: nodeCpu.total, facilitator: facilitatorCpu, agents: (agents.user + agents.system) / 1e6 },
  };
}

// ---------------------------------------------------------------- the run

export async function run(args: string[]): Promise<void> {
  // One node vs a fleet on one PostgreSQL ledger: bench/paidFleet.ts.
  if (args.some((a) => a === '--fleet' || a.startsWith('--fleet='))) return (await import('./paidFleet.js')).runFleet(args);
  const { values } = parseArgs({
    args,
    options: {
      seconds: { type: 'string' },
      warmup: { type: 'string' },
      agents: { type: 'string' },
      inflight: { type: 'string' },
      rate: { type: 'string' },
      'block-time': { type: 'string' },
      wait: { type: 'string' },
      presign: { type: 'string' },
      'usdc-seconds': { type: 'string' },
      'usdc-connections': { type: 'string' },
      'cpu-prof': { type: 'string' },
      'node-arg': { type: 'string', multiple: true },
      pipeline: { type: 'boolean' },
    },
    strict: true,
  });
  const int = (v: string | undefined, d: number, min = 1) => {
    const n = Number(v ?? d);
    if (!Number.isInteger(n) || n < min) throw new RangeError(`expected an integer ≥ ${min}, got ${v}`);
    return n;
  };
  const seconds = int(values.seconds, 60);
  const warmup = int(values.warmup, 10, 0);
  if (warmup >= seconds) throw new RangeError('--warmup must be shorter than --seconds');
  const agentCount = int(values.agents, 64);
  const inflight = int(values.inflight, 32);
  const waitSeconds = int(values.wait, 10, 0);
  const offeredRate = values.rate === undefined ? undefined : int(values.rate, 1);
  const blockTime = values['block-time'] === undefined ? undefined : int(values['block-time'], 1);
  // Open loop: the calls of the run plus the margin of a slow start; closed: enough for 600 calls/s.
  const presign = int(values.presign, offeredRate ? Math.ceil((offeredRate * seconds) / agentCount) + 8 : Math.ceil((600 * seconds) / agentCount) + inflight);
  const usdcSeconds = int(values['usdc-seconds'], 20, 0);
  const usdcConnections = int(values['usdc-connections'], 64);
  const nodeArgs = [...(values['node-arg'] ?? [])];
  const nodeFlags = blockTime ? ['--block-time', String(blockTime)] : [];
  const profDir = values['cpu-prof'] ? resolve(values['cpu-prof']) : undefined;
  if (profDir) {
    await mkdir(profDir, { recursive: true });
    nodeArgs.push('--cpu-prof', '--cpu-prof-dir', profDir);
  }
  const profWindow: { fromUs: number; toUs: number; pid: number; mainMsPerCall?: number } = { fromUs: 0, toUs: 0, pid: 0 };

  console.log(`paid-call benchmark: ${availableParallelism()} cores, Node ${process.version}, ${new Date().toISOString()}`);
  console.log(`load average before: ${load()}`);
  const loadText = (offeredRate ? `open loop, ${offeredRate} calls/s offered over ${agentCount} agents` : `${agentCount} agents × ${inflight} calls in flight`) + (values.pipeline ? ", payments pipelined (each sent once the agent's previous one was sent)" : "");
  console.log(`${loadText}, ${seconds} s (first ${warmup} s not counted), settle ?wait=${waitSeconds}, ${presign} payments signed ahead per agent`);
  console.log(blockTime ? `blocks: interval mining, --block-time ${blockTime} (no hashing)` : 'blocks: the free-running proof-of-work miner (one thread)');
  const dir = await mkdtemp(join(tmpdir(), 'native-bench-paid-'));
  const procs: { stop(): Promise<void> }[] = [];
  try {
    // ---- payments signed ahead, before the node starts (its miner would otherwise set the
    // difficulty for a core left to it while this process signs), for the devnet's terms: chain
    // id, the dev payee, world-clock's price, the seller id, the minimum fee rate; each commits to
    // its request and a salt of its own. The seller id is the node's ledger's: the ledger is
    // created here, in the node's data directory, before the node starts. The node's own quotes
    // are checked against these terms once it runs.
    const devnet = createDevnetChainParams();
    const ledger = await openLedger(join(dir, 'data', 'ledger')); // node/payments.ts LEDGER_DIR
    const sellerId = ledger.sellerId;
    await ledger.close();
    const terms: Terms = {
      chainId: devnet.chainId,
      amount: worldClock.priceBase,
      payTo: getDevPayeeKeyPair().address,
      payToText: encodeAddress(getDevPayeeKeyPair().address, devnet.hrp),
      sellerId,
      feeRate: devnet.minFeeRate,
    };
    const keys = Array.from({ length: agentCount }, (_, i) => createKeyPairFromSeed(sha256(new TextEncoder().encode(`bench-paid-agent-${i}`))));
    const sign = await fastSigner();
    const tSign = performance.now();
    const agents: Agent[] = keys.map((kp, i) => {
      const payments: Signed[] = [];
      for (let n = 0; n <= presign; n++) payments.push(signPayment(sign, kp, terms, BigInt(n), ZONES[(i + n) % ZONES.length]));
      return { key: kp, address: encodeAddress(kp.address, TESTNET_HRP), payments, next: 0, submitted: Promise.resolve(), pipeline: values.pipeline === true };
    });
    const signS = (performance.now() - tSign) / 1000;
    const totalSigned = agentCount * (presign + 1);
    console.log(`signed ${totalSigned} payments ahead in ${f1(signS)} s (${f2((signS * 1000) / totalSigned)} ms each, one thread)`);

    const facilitator = await startFacilitatorProcess();
    procs.push(facilitator);
    const minerAddress = encodeAddress(createKeyPairFromSeed(sha256(new TextEncoder().encode('bench-paid-miner'))).address, TESTNET_HRP);
    const node = await startNode(dir, minerAddress, facilitator.url, nodeArgs, nodeFlags);
    procs.push({ stop: () => stopNode(node) });
    const url = node.url;
    const pid = node.child.pid!;
    profWindow.pid = pid;

    // ---- the node's quotes must be the terms the payments were signed for
    const status = (await request('GET', `${url}/api/v1/status`)).json;
    const endpoint = `${url}/api/x402/${SERVICE}`;
    for (const z of ZONES) {
      const q = await quoteOf(endpoint, z, Date.now());
      if (q.chainId !== terms.chainId || q.amount !== terms.amount || q.payTo !== terms.payToText || q.sellerId !== terms.sellerId || String(status.minFeeRate) !== terms.feeRate.toString()) {
        throw new Error(`the node's quote of ${z} is not what the payments were signed for: ${JSON.stringify({ chainId: q.chainId, amount: q.amount.toString(), payTo: q.payTo, sellerId: q.sellerId, minFeeRate: status.minFeeRate })}`);
      }
    }

    // ---- funding phase: one transfer from the dev wallet to every agent
    const perPaymentMax = terms.amount + 10_000n * terms.feeRate;
    const funds = perPaymentMax * BigInt(presign + 1) + COIN;
    const dev = getDevKeyPair();
    const devAccount = (await request('GET', `${url}/api/v1/account/${encodeAddress(dev.address, TESTNET_HRP)}`)).json;
    let devNonce = BigInt(devAccount.pendingNonce as number);
    const fundIds: string[] = [];
    for (const kp of keys) {
      const t = createTransferTx({ key: dev, chainId: terms.chainId, to: kp.address, amount: funds, nonce: devNonce, includeKey: devNonce === 0n && devAccount.publicKeyKnown !== true, feeRate: terms.feeRate });
      devNonce++;
      const a = await request('POST', `${url}/api/v1/tx`, { tx: Buffer.from(t.bytes).toString('hex') });
      if (a.status >= 300) throw new Error(`funding transfer refused: ${codeOf(a)}`);
      fundIds.push(t.id);
    }
    const tFund = performance.now();
    await waitMined(url, fundIds, 180_000);
    console.log(`funding phase: ${agentCount} transfers of ${Number(funds) / Number(COIN)} NATIVE from the dev wallet, mined in ${f1((performance.now() - tFund) / 1000)} s`);

    // ---- first call of every agent: publishes its key (not timed)
    const tFirst = performance.now();
    const first = await Promise.all(agents.map((a) => paidCall(url, a, a.payments[a.next++], terms, waitSeconds)));
    const firstBad = first.filter((r) => r.resultAt === undefined);
    if (firstBad.length) throw new Error(`${firstBad.length} first calls failed: ${firstBad[0].error}`);
    console.log(`first call of every agent (carries its key) settled in ${f1((performance.now() - tFirst) / 1000)} s`);

    // ---- who is the miner thread: the busiest while the node only mines (none with interval mining: it works on the main thread, briefly)
    let minerTid: number | undefined;
    if (!blockTime) {
      const idle0 = await threadCpu(pid);
      await sleep(2000);
      const idle = cpuDelta(idle0, await threadCpu(pid));
      minerTid = [...idle].filter(([t]) => t !== pid).sort((a, b) => b[1].seconds - a[1].seconds)[0]?.[0];
    }

    // ---- the timed phase
    const records: CallRecord[] = [];
    const tips: { height: number; at: number }[] = [];
    let stopped = false;
    const t0 = performance.now();
    const tEnd = t0 + seconds * 1000;
    const tWarm = t0 + warmup * 1000;
    let cpuWarm: Map<number, ThreadCpu> | undefined;
    let cpuEnd: Map<number, ThreadCpu> | undefined;
    let heightWarm = 0;
    let agentsCpuWarm: NodeJS.CpuUsage | undefined;
    let agentsCpuEnd: NodeJS.CpuUsage | undefined;
    let heightEnd = 0;
    const watcher = (async () => {
      let last = -1;
      while (!stopped) {
        const s = await request('GET', `${url}/api/v1/status`).catch(() => undefined);
        const h = s?.json.height;
        if (typeof h === 'number' && h !== last) {
          tips.push({ height: h, at: performance.now() });
          last = h;
        }
        const now = performance.now();
        if (!cpuWarm && now >= tWarm) [cpuWarm, heightWarm, agentsCpuWarm, profWindow.fromUs] = [await threadCpu(pid), last, process.cpuUsage(), monotonicUs()];
        if (!cpuEnd && now >= tEnd) [cpuEnd, heightEnd, agentsCpuEnd, profWindow.toUs] = [await threadCpu(pid), last, process.cpuUsage(agentsCpuWarm), monotonicUs()];
        await sleep(50);
      }
    })();
    // The loops start spread over the first half of the warm-up: thousands of connections opened
    // at once overflow the node's listen backlog and the dropped SYNs wait for TCP's retransmits.
    const total = agentCount * inflight;
    const loop = async (a: Agent, i: number) => {
      await sleep((i / total) * warmup * 500);
      while (performance.now() < tEnd && a.next < a.payments.length && !a.stopped) {
        const p = a.payments[a.next++];
        records.push(await paidCall(url, a, p, terms, waitSeconds));
      }
    };
    // Open loop: agent i's calls are due at t0 + (i + j·agents)/rate s; each starts when due, whatever its earlier calls are doing.
    const openLoop = async (a: Agent, i: number) => {
      const calls: Promise<void>[] = [];
      for (let j = 0; ; j++) {
        const due = t0 + ((i + j * agentCount) * 1000) / offeredRate!;
        if (due >= tEnd || a.next >= a.payments.length || a.stopped) break;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        const p = a.payments[a.next++];
        calls.push(paidCall(url, a, p, terms, waitSeconds).then((r) => void records.push({ ...r, scheduledAt: due })));
      }
      await Promise.all(calls);
    };
    if (offeredRate) await Promise.all(agents.map((a, i) => openLoop(a, i)));
    else await Promise.all(agents.flatMap((a, ai) => Array.from({ length: inflight }, (_, j) => loop(a, j * agentCount + ai))));
    const drainS = (performance.now() - tEnd) / 1000;
    stopped = true;
    await watcher;
    const ranOut = agents.filter((a) => a.next >= a.payments.length).length;

    // ---- the figures
    const inWindow = records.filter((r) => r.resultAt !== undefined && r.resultAt >= tWarm && r.resultAt < tEnd);
    const settled = records.filter((r) => r.resultAt !== undefined);
    const rate = inWindow.length / (seconds - warmup);
    const lat = summary(settled.filter((r) => r.submitAt >= tWarm && r.submitAt < tEnd).map((r) => r.resultAt! - r.submitAt));
    // A block's arrival: when the watcher saw it or when its first result came, whichever was first.
    const tipAt = new Map(tips.map((t) => [t.height, t.at]));
    for (const r of settled) if (!(tipAt.get(r.height!)! <= r.resultAt!)) tipAt.set(r.height!, r.resultAt!);
    tips.splice(0, tips.length, ...[...tipAt].map(([height, at]) => ({ height, at })).sort((a, b) => a.height - b.height));
    const afterBlock = summary(settled.filter((r) => r.submitAt >= tWarm && tipAt.has(r.height!)).map((r) => r.resultAt! - tipAt.get(r.height!)!));
    // The first block that arrived after the submit: did the payment make it?
    const firstBlockAfter = (at: number) => tips.find((t) => t.at > at)?.height;
    const timed = settled.filter((r) => r.submitAt >= tWarm && r.submitAt < tEnd);
    const inFirst = timed.filter((r) => r.height === firstBlockAfter(r.submitAt)).length;
    const refunds = records.filter((r) => r.refunded).length;
    const lost = records.filter((r) => r.accepted && r.resultAt === undefined).length;
    const errors = new Map<string, number>();
    for (const r of records) if (r.error) errors.set(r.error, (errors.get(r.error) ?? 0) + 1);
    const pendingAnswers = records.reduce((s, r) => s + r.pendingAnswers, 0);

    const blocks: { height: number; time: number; txCount: number; size: number }[] = [];
    if (heightEnd > heightWarm) {
      const a = await request('GET', `${url}/api/v1/blocks?from=${heightEnd}&limit=${Math.min(100, heightEnd - heightWarm)}`);
      for (const b of (a.json.blocks as { height: number; time: number; txCount: number; size: number }[] | undefined) ?? []) if (b.height > heightWarm) blocks.push(b);
    }
    const intervals = tips.filter((t) => t.height > heightWarm && t.height <= heightEnd && tipAt.has(t.height - 1)).map((t) => t.at - tipAt.get(t.height - 1)!);
    const iv = summary(intervals);

    console.log('');
    console.log(`## Native rail: ${loadText}, ${seconds - warmup} s counted after ${warmup} s warm-up; ${blockTime ? `interval mining, --block-time ${blockTime}` : 'free-running PoW miner'}`);
    console.log('');
    console.log('| metric | value |');
    console.log('|---|---|');
    console.log(`| settled paid calls/s (sustained, results in the counted window) | ${f1(rate)} |`);
    if (blockTime && heightEnd > heightWarm) {
      // Results come in one burst per block, so a window count is quantised by ± one block; whole blocks are not.
      const inBlocks = settled.filter((r) => r.height! > heightWarm && r.height! <= heightEnd).length;
      console.log(`| settled paid calls/s over whole blocks (${heightEnd - heightWarm} blocks × ${blockTime} s) | ${f1(inBlocks / ((heightEnd - heightWarm) * blockTime))} |`);
    }
    console.log(`| calls settled / payments accepted / started | ${settled.length} / ${records.filter((r) => r.accepted).length} / ${records.length} |`);
    console.log(`| submit → result ms, p50 / p99 / max (${lat.n} calls submitted in the window) | ${f0(lat.p50)} / ${f0(lat.p99)} / ${f0(lat.max)} |`);
    if (offeredRate) {
      const due = records.filter((r) => r.scheduledAt !== undefined && r.scheduledAt >= tWarm && r.scheduledAt < tEnd);
      const sched = summary(due.filter((r) => r.resultAt !== undefined).map((r) => r.resultAt! - r.scheduledAt!));
      console.log(`| offered calls/s in the window (calls due) | ${f1(due.length / (seconds - warmup))} |`);
      console.log(`| scheduled start → result ms, p50 / p99 / max | ${f0(sched.p50)} / ${f0(sched.p99)} / ${f0(sched.max)} |`);
    }
    const admission = summary(timed.filter((r) => r.acceptedAt !== undefined).map((r) => r.acceptedAt! - r.submitAt));
    console.log(`| submit → payment accepted (mempool admission, HTTP round trip) ms, p50 / p99 | ${f0(admission.p50)} / ${f0(admission.p99)} |`);
    console.log(`| block seen → result ms, p50 / p99 | ${f0(afterBlock.p50)} / ${f0(afterBlock.p99)} |`);
    console.log(`| calls in the first block found after their submit | ${timed.length ? f1((100 * inFirst) / timed.length) : 'n/a'} % |`);
    console.log(`| blocks in the window; interval ms mean / p50 / p99 / max (seen by the watcher) | ${blocks.length}; ${f0(iv.mean)} / ${f0(iv.p50)} / ${f0(iv.p99)} / ${f0(iv.max)} |`);
    const stamps = [...blocks].sort((a, b) => a.height - b.height);
    const stampGaps = stamps.slice(1).flatMap((b, i) => (b.height === stamps[i].height + 1 ? [b.time - stamps[i].time] : []));
    const stampIv = summary(stampGaps);
    console.log(`| block timestamps: interval s mean / max | ${f2(stampIv.mean)} / ${f0(stampIv.max)} |`);
    // The latency goal: p99 submit → result under one block interval + 200 ms (the paced interval, else the mean seen).
    const intervalMs = blockTime ? blockTime * 1000 : iv.mean;
    console.log(`| goal: p99 submit → result < block interval + 200 ms | ${f0(lat.p99)} ${lat.p99 < intervalMs + 200 ? '<' : '≥'} ${f0(intervalMs)} + 200: ${lat.p99 < intervalMs + 200 ? 'met' : 'not met'} |`);
    const txs = summary(blocks.map((b) => b.txCount));
    const bytes = summary(blocks.map((b) => b.size));
    console.log(`| txs per block mean / max | ${f0(txs.mean)} / ${f0(txs.max)} |`);
    console.log(`| block bytes mean / max | ${f0(bytes.mean)} / ${f0(bytes.max)} |`);
    console.log(`| refunds | ${refunds} |`);
    console.log(`| lost payments (accepted, no result) | ${lost} |`);
    console.log(`| 202 answers (long-poll ended before the block) | ${pendingAnswers} |`);
    console.log(`| errors by code | ${errors.size ? [...errors].map(([c, n]) => `${c}: ${n}`).join(', ') : 'none'} |`);
    console.log(`| drain after the end (calls in flight finishing) | ${f1(drainS)} s |`);
    if (ranOut) console.log(`| agents that ran out of signed payments (raise --presign) | ${ranOut} |`);
    const stoppedAgents = agents.filter((a) => a.stopped);
    if (stoppedAgents.length) console.log(`| agents stopped by a refused payment (first reason) | ${stoppedAgents.length} (${stoppedAgents[0].stopped}) |`);
    console.log(`| quote retries / payment resubmissions (timeouts under load) | ${records.reduce((n, r) => n + r.quoteRetries, 0)} / ${records.reduce((n, r) => n + r.submitRetries, 0)} |`);
    if (quoteRetryReasons.size) console.log(`| quote retry reasons | ${[...quoteRetryReasons].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([w, n]) => `${w}: ${n}`).join(', ')} |`);
    if (cpuWarm && cpuEnd) {
      const d = cpuDelta(cpuWarm, cpuEnd);
      const span = seconds - warmup;
      const miner = minerTid ? d.get(minerTid)?.seconds ?? 0 : 0;
      if (minerTid) d.delete(minerTid);
      const { main, busiest: pool, rest, total: notMiner } = splitCpu(d, pid, 2);
      const total = notMiner + miner;
      console.log(`| node CPU s in the window (${span} s): total | ${f1(total)} (${f2(total / span)} cores) |`);
      console.log(`| … main thread / miner thread / two busiest other threads (verify pool) / rest | ${f1(main)} / ${f1(miner)} / ${f1(pool)} / ${f1(rest)} |`);
      profWindow.mainMsPerCall = (main * 1000) / Math.max(1, inWindow.length);
      console.log(`| … main thread CPU ms per settled call | ${f2(profWindow.mainMsPerCall)} |`);
      console.log(`| … all node threads but the miner, CPU ms per settled call | ${f2(((total - miner) * 1000) / Math.max(1, inWindow.length))} |`);
    }
    if (agentsCpuEnd) {
      const agentsS = (agentsCpuEnd.user + agentsCpuEnd.system) / 1e6;
      console.log(`| agents' process (this one) CPU s in the window | ${f1(agentsS)} (${f2(agentsS / (seconds - warmup))} cores; it shares the 2 cores with the node) |`);
    }

    // ---- USDC round: authorizations signed ahead (viem from reference/), then the timed round
    let usdcSigned: string[] | undefined;
    let usdcSkip: string | undefined;
    if (usdcSeconds > 0) {
      const pay = await import('../test/helpers/facilitatorPayments.js');
      if (!pay.referenceViem.ok) usdcSkip = `reference/ not installed (npm ci --prefix reference): ${pay.referenceViem.reason}`;
      else {
        const usdcOption = ((await request('POST', endpoint, { request: 'Europe/Berlin' })).json.accepts as { scheme: string; maxAmountRequired: string; payTo: string }[]).find((o) => o.scheme === 'exact');
        if (!usdcOption) usdcSkip = 'the node offers no USDC option';
        else {
          const n = Math.max(1000, usdcSeconds * 500);
          const tU = performance.now();
          usdcSigned = [];
          for (let i = 0; i < n; i++) usdcSigned.push(await pay.paymentHeader({ payTo: usdcOption.payTo, value: usdcOption.maxAmountRequired, validBefore: Math.floor(Date.now() / 1000) + 3600 }));
          console.log(`signed ${n} USDC authorizations ahead in ${f1((performance.now() - tU) / 1000)} s`);
        }
      }
    }

    if (usdcSigned) {
      const u = await usdcRound(url, facilitator, usdcSeconds, usdcConnections, usdcSigned, pid);
      const l = summary(u.latencies);
      const v = summary(u.verifyMs);
      const s = summary(u.settleMs);
      console.log('');
      console.log(`## USDC rail (test facilitator, its own process): ${usdcConnections} connections, ${f1(u.seconds)} s`);
      console.log('');
      console.log('| metric | value |');
      console.log('|---|---|');
      console.log(`| paid calls/s | ${f1(u.ok / u.seconds)} |`);
      console.log(`| call ms p50 / p99 (${l.n} calls) | ${f1(l.p50)} / ${f1(l.p99)} |`);
      console.log(`| facilitator's own /verify ms p50 / p99 (${v.n}) | ${f2(v.p50)} / ${f2(v.p99)} |`);
      console.log(`| facilitator's own /settle ms p50 / p99 (${s.n}) | ${f2(s.p50)} / ${f2(s.p99)} |`);
      const share = (cpuS: number) => `${f1(cpuS)} s (${f2(cpuS / u.seconds)} cores)`;
      console.log(`| CPU in the round: node main thread / node all threads / facilitator process / agents (this process) | ${share(u.cpu.nodeMain)} / ${share(u.cpu.nodeTotal)} / ${share(u.cpu.facilitator)} / ${share(u.cpu.agents)} |`);
      console.log(`| errors by code | ${u.errors.size ? [...u.errors].map(([c, n]) => `${c}: ${n}`).join(', ') : 'none'} |`);
      if (u.ok + [...u.errors.values()].reduce((a, b) => a + b, 0) >= usdcSigned.length) console.log('(every authorization signed ahead was used: the round ended early; its rate stands)');
    } else if (usdcSkip) console.log(`\nUSDC round skipped: ${usdcSkip}`);
    const errs = logLines(await readFile(node.logFile, 'utf8')).filter((l) => l.level === 'error' || l.level === 'fatal');
    if (errs.length) console.log(`\nnode errors logged: ${errs.length}, first: ${JSON.stringify(errs[0]).slice(0, 300)}`);
    console.log(`\nload average after: ${load()}`);
  } finally {
    for (const p of procs.reverse()) await p.stop().catch(() => undefined);
    httpAgent.destroy();
    await rm(dir, { recursive: true, force: true });
  }
  // The node wrote its profile as it stopped: the counted window's main-thread time by part.
  if (profDir && profWindow.toUs && profWindow.mainMsPerCall !== undefined) {
    const profile = await newestProfile(profDir, profWindow.pid);
    if (profile) printProfileParts(profileParts(profile, profWindow.fromUs, profWindow.toUs), profWindow.mainMsPerCall);
  }
}

/** Monotonic µs (CLOCK_MONOTONIC, as the node's V8 profile timestamps its samples). */
const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n);

/** The native round's main-thread profile by part: share of the busy time, and that share of the measured CPU ms per settled call. */
function printProfileParts(p: ProfileParts, mainMsPerCall: number): void {
  console.log('');
  console.log(`## Node main thread in the counted window, by part (V8 CPU profile: ${f1(p.busyMs / 1000)} s busy, ${f1(p.idleMs / 1000)} s idle)`);
  console.log('');
  console.log('| part | share of busy time | ≈ ms per settled call |');
  console.log('|---|---|---|');
  for (const { part, ms } of p.parts) console.log(`| ${part} | ${f1((100 * ms) / p.busyMs)} % | ${f2((mainMsPerCall * ms) / p.busyMs)} |`);
  console.log(`| all | 100 % | ${f2(mainMsPerCall)} |`);
}
