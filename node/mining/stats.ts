/**
 * Mining statistics of the node: per-worker share counts (accepted / rejected / stale), hashrate
 * estimated from accepted shares, current difficulty, and the blocks found by each way of mining
 * (Stratum, getblocktemplate, the built-in miner). Kept in memory only; a restart starts over.
 *
 * Hashrate from shares: a share of difficulty `d` stands for `d · 2^48 / 0xFFFF` hashes on
 * average, so a worker's hashrate is the sum of its accepted shares' difficulties over a sliding
 * window (`hashrateWindowMs`) times that factor, divided by the time covered. It is an estimate:
 * with a share every few seconds it is within ±20 % after a couple of minutes.
 *
 * No koa here: the CLI formats the same snapshot (`formatMiningLines`) without loading the server.
 */
import { HASHES_PER_DIFF1 } from './work.js';

/** Outcome of one submitted share. */
export type ShareResult = 'accepted' | 'rejected' | 'stale';

/** Where a found block came from. */
export type BlockSource = 'stratum' | 'rpc' | 'builtin';

/** Options of the statistics. */
export interface MiningStatsOptions {
  /** Window of the share-based hashrate, ms. */
  readonly hashrateWindowMs: number;
  /** Workers remembered (disconnected ones are forgotten first, oldest activity first). */
  readonly maxWorkers: number;
  /** Found blocks listed. */
  readonly maxBlocks: number;
  /** Clock in Unix ms (tests pin it). */
  readonly now: () => number;
}

/** Defaults of MiningStatsOptions. */
export const defaultMiningStatsOptions: MiningStatsOptions = { hashrateWindowMs: 10 * 60_000, maxWorkers: 1_000, maxBlocks: 50, now: Date.now };

/** One worker as `GET /api/v1/mining` shows it. */
export interface WorkerSnapshot {
  /** The username: `address` or `address.worker`. */
  readonly name: string;
  readonly address: string;
  readonly worker: string;
  /** Open Stratum connections authorised as this worker. */
  readonly connections: number;
  readonly connected: boolean;
  /** Current share difficulty (the last one sent to it). */
  readonly difficulty: number;
  /** Hashes per second estimated from accepted shares. */
  readonly hashrate: number;
  readonly accepted: number;
  readonly rejected: number;
  readonly stale: number;
  /** Sum of the difficulties of accepted shares. */
  readonly acceptedDifficulty: number;
  readonly blocksFound: number;
  /** Unix ms of the last share, accepted or not (null before the first). */
  readonly lastShareAt: number | null;
  /** Reason of the last rejected share. */
  readonly lastRejectReason: string | null;
  readonly firstSeenAt: number;
}

/** A block found by this node's miners. */
export interface FoundBlock {
  readonly height: number;
  readonly hash: string;
  readonly source: BlockSource;
  /** Worker name for Stratum, the payout address otherwise. */
  readonly worker: string | null;
  readonly address: string | null;
  /** Unix ms. */
  readonly at: number;
}

/** Totals over every worker. */
export interface MiningTotals {
  readonly workers: number;
  readonly connectedWorkers: number;
  readonly hashrate: number;
  readonly accepted: number;
  readonly rejected: number;
  readonly stale: number;
  readonly blocksFound: number;
}

/** Everything the statistics know, JSON-ready. */
export interface MiningStatsSnapshot {
  readonly totals: MiningTotals;
  readonly workers: readonly WorkerSnapshot[];
  readonly blocks: readonly FoundBlock[];
  /** Blocks found per source since start. */
  readonly blocksBySource: Readonly<Record<BlockSource, number>>;
}

interface WorkerState {
  name: string;
  address: string;
  worker: string;
  connections: number;
  difficulty: number;
  accepted: number;
  rejected: number;
  stale: number;
  acceptedDifficulty: number;
  blocksFound: number;
  lastShareAt: number | null;
  lastRejectReason: string | null;
  firstSeenAt: number;
  lastActiveAt: number;
  /** Accepted difficulty per time bucket: [bucket start ms, sum]. */
  buckets: [number, number][];
}

/** Width of a hashrate bucket, ms. */
const BUCKET_MS = 5_000;

/** The node's mining statistics (see module comment). */
export class MiningStats {
  private readonly opts: MiningStatsOptions;
  private readonly workers = new Map<string, WorkerState>();
  private readonly blocks: FoundBlock[] = [];
  private readonly bySource: Record<BlockSource, number> = { stratum: 0, rpc: 0, builtin: 0 };

  constructor(opts: Partial<MiningStatsOptions> = {}) {
    this.opts = { ...defaultMiningStatsOptions, ...opts };
  }

  private get(name: string, address: string, worker: string): WorkerState {
    let w = this.workers.get(name);
    if (!w) {
      const now = this.opts.now();
      w = { name, address, worker, connections: 0, difficulty: 0, accepted: 0, rejected: 0, stale: 0, acceptedDifficulty: 0, blocksFound: 0, lastShareAt: null, lastRejectReason: null, firstSeenAt: now, lastActiveAt: now, buckets: [] };
      this.workers.set(name, w);
      this.evict();
    }
    return w;
  }

  private evict(): void {
    if (this.workers.size <= this.opts.maxWorkers) return;
    const idle = [...this.workers.values()].filter((w) => w.connections === 0).sort((a, b) => a.lastActiveAt - b.lastActiveAt);
    for (const w of idle) {
      if (this.workers.size <= this.opts.maxWorkers) break;
      this.workers.delete(w.name);
    }
  }

  /** A connection authorised as `name`. */
  workerConnected(name: string, address: string, worker: string): void {
    const w = this.get(name, address, worker);
    w.connections++;
    w.lastActiveAt = this.opts.now();
  }

  /** A connection of `name` closed. */
  workerDisconnected(name: string): void {
    const w = this.workers.get(name);
    if (!w) return;
    w.connections = Math.max(0, w.connections - 1);
    w.lastActiveAt = this.opts.now();
  }

  /** The share difficulty now asked of `name`. */
  setDifficulty(name: string, difficulty: number): void {
    const w = this.workers.get(name);
    if (w) w.difficulty = difficulty;
  }

  /** One submitted share; `difficulty` is what an accepted share is credited with. */
  recordShare(name: string, result: ShareResult, difficulty: number, reason?: string): void {
    const w = this.workers.get(name);
    if (!w) return;
    const now = this.opts.now();
    w.lastShareAt = now;
    w.lastActiveAt = now;
    if (result === 'accepted') {
      w.accepted++;
      w.acceptedDifficulty += difficulty;
      const start = now - (now % BUCKET_MS);
      const last = w.buckets[w.buckets.length - 1];
      if (last && last[0] === start) last[1] += difficulty;
      else w.buckets.push([start, difficulty]);
      this.prune(w, now);
    } else {
      if (result === 'stale') w.stale++;
      else w.rejected++;
      w.lastRejectReason = reason ?? result;
    }
  }

  /** A block found by one of the node's miners joined the chain. */
  recordBlock(block: Omit<FoundBlock, 'at'> & { at?: number }): void {
    const entry: FoundBlock = { ...block, at: block.at ?? this.opts.now() };
    this.blocks.unshift(entry);
    if (this.blocks.length > this.opts.maxBlocks) this.blocks.length = this.opts.maxBlocks;
    this.bySource[block.source]++;
    if (block.source === 'stratum' && block.worker) {
      const w = this.workers.get(block.worker);
      if (w) w.blocksFound++;
    }
  }

  private prune(w: WorkerState, now: number): void {
    const from = now - this.opts.hashrateWindowMs;
    while (w.buckets.length > 0 && w.buckets[0][0] + BUCKET_MS <= from) w.buckets.shift();
  }

  /** Hashes per second of a worker from its accepted shares in the window. */
  private hashrate(w: WorkerState, now: number): number {
    this.prune(w, now);
    if (w.buckets.length === 0) return 0;
    let sum = 0;
    for (const [, d] of w.buckets) sum += d;
    // The time covered: the window, or less while the worker is younger than it.
    const span = Math.max(1_000, Math.min(this.opts.hashrateWindowMs, now - w.firstSeenAt));
    return (sum * HASHES_PER_DIFF1 * 1000) / span;
  }

  /** One worker's figures (undefined when unknown). */
  worker(name: string): WorkerSnapshot | undefined {
    const w = this.workers.get(name);
    return w ? this.workerSnapshot(w, this.opts.now()) : undefined;
  }

  private workerSnapshot(w: WorkerState, now: number): WorkerSnapshot {
    return {
      name: w.name,
      address: w.address,
      worker: w.worker,
      connections: w.connections,
      connected: w.connections > 0,
      difficulty: w.difficulty,
      hashrate: this.hashrate(w, now),
      accepted: w.accepted,
      rejected: w.rejected,
      stale: w.stale,
      acceptedDifficulty: w.acceptedDifficulty,
      blocksFound: w.blocksFound,
      lastShareAt: w.lastShareAt,
      lastRejectReason: w.lastRejectReason,
      firstSeenAt: w.firstSeenAt,
    };
  }

  /** Totals, workers (connected first, then by hashrate) and the latest found blocks. */
  snapshot(): MiningStatsSnapshot {
    const now = this.opts.now();
    const workers = [...this.workers.values()].map((w) => this.workerSnapshot(w, now));
    workers.sort((a, b) => Number(b.connected) - Number(a.connected) || b.hashrate - a.hashrate || a.name.localeCompare(b.name));
    const totals: MiningTotals = {
      workers: workers.length,
      connectedWorkers: workers.filter((w) => w.connected).length,
      hashrate: workers.reduce((s, w) => s + w.hashrate, 0),
      accepted: workers.reduce((s, w) => s + w.accepted, 0),
      rejected: workers.reduce((s, w) => s + w.rejected, 0),
      stale: workers.reduce((s, w) => s + w.stale, 0),
      blocksFound: this.bySource.stratum + this.bySource.rpc + this.bySource.builtin,
    };
    return { totals, workers, blocks: this.blocks.slice(), blocksBySource: { ...this.bySource } };
  }
}

/** Creates the node's mining statistics. */
export function createMiningStats(opts: Partial<MiningStatsOptions> = {}): MiningStats {
  return new MiningStats(opts);
}

/** Hashrate for people: `12.4 MH/s`. */
export function formatHashrate(hps: number): string {
  const units = ['H/s', 'kH/s', 'MH/s', 'GH/s', 'TH/s', 'PH/s', 'EH/s'];
  let v = hps;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${v >= 100 || i === 0 ? Math.round(v) : v.toPrecision(3)} ${units[i]}`;
}

/** `GET /api/v1/mining` as the CLI reads it (the parts it prints). */
export interface MiningResponse {
  readonly stratum: { readonly enabled: boolean; readonly url: string | null; readonly connections: number; readonly lastNotifyLatencyMs?: number | null; readonly listenError?: string };
  readonly rpc: { readonly enabled: boolean };
  readonly totals: MiningTotals;
  readonly workers: readonly WorkerSnapshot[];
  readonly blocks: readonly FoundBlock[];
}

/** The lines `native-node status` prints about Stratum, GBT and the workers. */
export function formatMiningLines(m: MiningResponse): string[] {
  const t = m.totals;
  const lines = [
    `stratum    ${m.stratum.enabled ? `${m.stratum.url ?? 'starting'}, ${m.stratum.connections} connection(s), ${t.connectedWorkers} worker(s) online, ${formatHashrate(t.hashrate)}` : m.stratum.listenError ? `off (${m.stratum.listenError}; set --stratum-port)` : 'off'}`,
    `shares     ${t.accepted} accepted, ${t.rejected} rejected, ${t.stale} stale; ${t.blocksFound} block(s) found by this node`,
    `rpc        ${m.rpc.enabled ? 'getblocktemplate/submitblock at POST /rpc' : 'off (set --rpc-user and --rpc-password)'}`,
  ];
  for (const w of m.workers.slice(0, 20)) {
    lines.push(
      `  ${w.connected ? '●' : '○'} ${w.name}  ${formatHashrate(w.hashrate)}  diff ${Number(w.difficulty.toPrecision(4))}  ${w.accepted}/${w.rejected}/${w.stale} (acc/rej/stale)  ${w.blocksFound} block(s)`,
    );
  }
  if (m.workers.length > 20) lines.push(`  … and ${m.workers.length - 20} more (GET /api/v1/mining)`);
  return lines;
}
