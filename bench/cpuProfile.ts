/**
 * Where the node's main thread spends its time, from a V8 CPU profile (`node --cpu-prof`): the
 * samples of a time window (the bench's counted window, in CLOCK_MONOTONIC µs as
 * `process.hrtime.bigint()` and V8's TimeTicks both read it on Linux) grouped by part of a paid
 * call. A sample belongs to the part of the innermost frame on its stack that names one (a LevelDB
 * read under the ledger is the ledger's, JSON under the receipts is the receipts'); samples in
 * no named frame are "other". The V8 profiler samples wall-clock ticks of the thread, so time the
 * thread spent descheduled lands on whatever it was doing: read the shares on a quiet machine.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string };
  readonly children?: readonly number[];
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** The parts, in the order they are printed; a frame is matched against each pattern in turn. */
const PARTS: readonly (readonly [part: string, test: (url: string, fn: string) => boolean])[] = [
  ['garbage collection', (_u, fn) => fn === '(garbage collector)'],
  ['receipts and offers (signing)', (u) => /\/x402\/core\/(receipts|receiptBatch|offers)\.|\/consensus\/fastSign\.|liboqs|^wasm:/.test(u)],
  ['service run', (u) => /\/services\//.test(u)],
  ['settlement ledger (reads, writes, witness)', (u) => /\/x402\/ledger\//.test(u)],
  ['mempool admission and signature checks', (u) => /\/chain\/(mempool|mempoolPolicy|verifyPool|sigCache)\.|\/node\/payments\.js/.test(u)],
  // The chain's reads (accounts, state views, transactions) count for whoever reads.
  ['blocks: template, connect, payment watcher', (u, fn) => (/\/chain\/chain\./.test(u) && !/^(get|has|scan)/.test(fn)) || /\/chain\/(pacedMiner|template|jobFeed|economyIndex|miner)\.|\/consensus\/(apply|validate)\.|\/x402\/native\/unhonored\./.test(u)],
  ['402 answers (quotes)', (u) => /\/node\/api\/(quoteAnswers|paymentDialects)\.|\/x402\/core\/quote/.test(u)],
  ['settle and the paid-call core', (u) => /\/x402\/(native|core|usdc)\//.test(u)],
  ['logging', (u) => /pino|sonic-boom/.test(u)],
  ['HTTP: parsing, koa, routing, writing', (u, fn) => /node:_http|node:net|node:internal\/streams|node:internal\/stream_base|\/koa|@koa|co-body|raw-body|\/node\/api\//.test(u) || fn === 'writev' || fn === 'writeUtf8String' || fn === 'writeBuffer'],
];

/** Busy milliseconds of the main thread in the window, by part, and the idle milliseconds. */
export interface ProfileParts {
  readonly busyMs: number;
  readonly idleMs: number;
  readonly parts: readonly { readonly part: string; readonly ms: number }[];
}

/** Reads the newest profile of process `pid`'s main thread in `dir` (Node names them `CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile`, thread 0 the main one). */
export async function newestProfile(dir: string, pid: number): Promise<Profile | undefined> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile') && f.includes(`.${pid}.0.`)).sort();
  const last = files.at(-1);
  return last ? (JSON.parse(await readFile(join(dir, last), 'utf8')) as Profile) : undefined;
}

/** The samples of `profile` between `fromUs` and `toUs` (monotonic µs), by part. */
export function profileParts(profile: Profile, fromUs: number, toUs: number): ProfileParts {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const partOf = new Map<number, string>();
  const classify = (id: number): string => {
    const known = partOf.get(id);
    if (known !== undefined) return known;
    let part = 'other';
    for (let c: number | undefined = id; c !== undefined; c = parent.get(c)) {
      const { url, functionName } = byId.get(c)!.callFrame;
      const hit = PARTS.find(([, test]) => test(url, functionName));
      if (hit) {
        part = hit[0];
        break;
      }
    }
    partOf.set(id, part);
    return part;
  };
  const ms = new Map<string, number>();
  let idle = 0;
  let busy = 0;
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    const dt = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    if (t < fromUs || t > toUs) continue;
    const id = profile.samples[i];
    const fn = byId.get(id)!.callFrame.functionName;
    if (fn === '(idle)') {
      idle += dt;
      continue;
    }
    busy += dt;
    const part = fn === '(program)' ? 'other' : classify(id);
    ms.set(part, (ms.get(part) ?? 0) + dt);
  }
  const order = [...PARTS.map(([p]) => p), 'other'];
  return { busyMs: busy, idleMs: idle, parts: order.filter((p) => ms.has(p)).map((part) => ({ part, ms: ms.get(part)! })) };
}
