/**
 * The operator's dashboard history: a small, bounded record of the node's figures.
 *
 * Every `intervalMs` (5 s) the node is sampled — tip, difficulty, hashrate, block interval,
 * mempool, peers and sync, Stratum workers and shares, paid calls (by service and rail, from the
 * paid-call observer), refunds, settle latency — into a ring of the last hour held in memory.
 * Each minute's samples are folded into one minute record (gauges: last value; counts: sums;
 * latency: mean weighted by calls), kept for a day in memory and appended to
 * `<dataDir>/dashboard-history.jsonl`, which is rewritten with the last day only once it holds
 * twice that. Stopping writes the minute in progress too. A restart reloads the day from the file
 * and starts the hour's series with the minute records of the last hour, so no chart starts empty
 * after a restart; nothing else reads the file.
 */
import { appendFile, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { difficultyOfBits } from '../consensus/pow.js';
import { estimateHashrate } from '../chain/hashrate.js';
import type { ChainReader, Logger, MempoolReader } from '../chain/types.js';
import { silentLogger } from '../chain/types.js';

/** Name of the history file inside the data directory. */
export const HISTORY_FILE = 'dashboard-history.jsonl';

/** One sample (or one minute record). Counts are per sample period; `t` is Unix seconds at its end. */
export interface HistorySample {
  readonly t: number;
  /** Seconds the sample covers (5 for samples, 60 for minute records). */
  readonly span: number;
  readonly height: number;
  readonly difficulty: number;
  /** Network hashrate estimated from the chain's work, H/s. */
  readonly hashrate: number;
  /** Mean seconds between the last 10 blocks. */
  readonly blockInterval: number;
  readonly mempool: number;
  readonly peers: number;
  readonly syncing: number;
  readonly workers: number;
  /** Hashrate of the Stratum/RPC miners from their shares, H/s. */
  readonly poolHashrate: number;
  readonly sharesAccepted: number;
  readonly sharesRejected: number;
  /** Paid calls answered in the period, by rail, then by `rail service`. */
  readonly callsNative: number;
  readonly callsUsdc: number;
  readonly calls: Readonly<Record<string, number>>;
  /** Paid calls refunded in the period (the service failed after the payment). */
  readonly refunded: number;
  /** Refunds signed and not mined yet, at the end of the period. */
  readonly refundsPending: number;
  /** Refunds in the ledger (sent), cumulative, at the end of the period. */
  readonly refundsSent: number;
  /** Mean time to answer a paid call in the period, ms (null without calls). */
  readonly settleMs: number | null;
}

/** What the history samples. */
export interface HistorySources {
  readonly chain: ChainReader;
  readonly mempool: Pick<MempoolReader, 'count'>;
  readonly peers?: () => number;
  readonly syncing?: () => boolean;
  readonly mining?: () => { connections: number; accepted: number; rejected: number; hashrate: number };
  readonly refundsPending?: () => number;
  readonly refundsSent?: () => number;
}

/** Options of the history. */
export interface HistoryOptions {
  /** Data directory (the file goes there); undefined keeps the history in memory only. */
  readonly dataDir?: string;
  readonly intervalMs: number;
  readonly logger?: Logger;
  /** Unix ms (tests). */
  readonly now?: () => number;
}

/** Defaults of HistoryOptions. */
export const defaultHistoryOptions: HistoryOptions = { intervalMs: 5_000 };

/** Minute records kept (a day). */
const DAY_MINUTES = 1440;

/** A paid call as the history counts it. */
export interface HistoryCall {
  readonly serviceId: string;
  readonly rail: string;
  /** Answered with a payment (quotes are not counted). */
  readonly paid: boolean;
  readonly refunded: boolean;
  readonly seconds: number;
}

/** The running history. */
export interface NodeHistory {
  /** Counts one answered call (the paid-call observer). */
  recordCall(c: HistoryCall): void;
  /** Samples of the last hour (5 s) or minute records of the last day, oldest first. */
  series(range: 'hour' | 'day'): readonly HistorySample[];
  /** Takes a sample now (tests; the timer calls it). */
  sample(): HistorySample;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Builds the history (call `start()`). */
export function createNodeHistory(src: HistorySources, opts: Partial<HistoryOptions> = {}): NodeHistory {
  const o = { ...defaultHistoryOptions, ...opts };
  const log = o.logger ?? silentLogger;
  const now = o.now ?? Date.now;
  const file = o.dataDir ? join(o.dataDir, HISTORY_FILE) : undefined;
  const hourCap = Math.ceil(3_600_000 / o.intervalMs);
  const hour: HistorySample[] = [];
  let day: HistorySample[] = [];
  let fileLines = 0;
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();
  // Accumulated since the last sample.
  let acc = { native: 0, usdc: 0, refunded: 0, seconds: 0, n: 0, calls: new Map<string, number>() };
  let lastShares: { accepted: number; rejected: number } | undefined;
  let minute: HistorySample[] = [];

  const blockInterval = (): number => {
    const tip = src.chain.tip;
    const n = Math.min(10, tip.height);
    const start = n > 0 ? src.chain.getEntryByHeight(tip.height - n) : undefined;
    return start ? (tip.header.time - start.header.time) / n : 0;
  };

  const fold = (rows: readonly HistorySample[]): HistorySample => {
    const last = rows[rows.length - 1];
    const calls: Record<string, number> = {};
    let settleSum = 0;
    let settleN = 0;
    for (const r of rows) {
      for (const [k, v] of Object.entries(r.calls)) calls[k] = (calls[k] ?? 0) + v;
      const n = r.callsNative + r.callsUsdc;
      if (r.settleMs !== null && n > 0) {
        settleSum += r.settleMs * n;
        settleN += n;
      }
    }
    const sum = (k: 'sharesAccepted' | 'sharesRejected' | 'callsNative' | 'callsUsdc' | 'refunded') => rows.reduce((s, r) => s + r[k], 0);
    return {
      ...last,
      span: rows.reduce((s, r) => s + r.span, 0),
      sharesAccepted: sum('sharesAccepted'),
      sharesRejected: sum('sharesRejected'),
      callsNative: sum('callsNative'),
      callsUsdc: sum('callsUsdc'),
      calls,
      refunded: sum('refunded'),
      settleMs: settleN > 0 ? settleSum / settleN : null,
    };
  };

  const persist = (rec: HistorySample) => {
    if (!file) return;
    writing = writing
      .then(async () => {
        if (fileLines >= 2 * DAY_MINUTES) {
          const tmp = `${file}.tmp`;
          await writeFile(tmp, day.map((r) => JSON.stringify(r)).join('\n') + '\n');
          await rename(tmp, file);
          fileLines = day.length;
        } else {
          await appendFile(file, JSON.stringify(rec) + '\n');
          fileLines++;
        }
      })
      .catch((e: unknown) => log.warn({ err: (e as Error).message, file }, 'dashboard history not written'));
  };

  const sample = (): HistorySample => {
    const tip = src.chain.tip;
    const m = src.mining?.();
    const shares = m ? { accepted: m.accepted, rejected: m.rejected } : { accepted: 0, rejected: 0 };
    const prev = lastShares ?? shares;
    lastShares = shares;
    const t = Math.floor(now() / 1000);
    const s: HistorySample = {
      t,
      span: o.intervalMs / 1000,
      height: tip.height,
      difficulty: difficultyOfBits(tip.header.bits),
      hashrate: estimateHashrate(src.chain),
      blockInterval: blockInterval(),
      mempool: src.mempool.count,
      peers: src.peers?.() ?? 0,
      syncing: src.syncing?.() ? 1 : 0,
      workers: m?.connections ?? 0,
      poolHashrate: m?.hashrate ?? 0,
      sharesAccepted: Math.max(0, shares.accepted - prev.accepted),
      sharesRejected: Math.max(0, shares.rejected - prev.rejected),
      callsNative: acc.native,
      callsUsdc: acc.usdc,
      calls: Object.fromEntries(acc.calls),
      refunded: acc.refunded,
      refundsPending: src.refundsPending?.() ?? 0,
      refundsSent: src.refundsSent?.() ?? 0,
      settleMs: acc.n > 0 ? (acc.seconds / acc.n) * 1000 : null,
    };
    acc = { native: 0, usdc: 0, refunded: 0, seconds: 0, n: 0, calls: new Map() };
    hour.push(s);
    if (hour.length > hourCap) hour.splice(0, hour.length - hourCap);
    // Minute records: fold the samples of each wall-clock minute once it has passed.
    if (minute.length > 0 && Math.floor(minute[0].t / 60) !== Math.floor(t / 60)) {
      const rec = fold(minute);
      day.push(rec);
      if (day.length > DAY_MINUTES) day.splice(0, day.length - DAY_MINUTES);
      persist(rec);
      minute = [];
    }
    minute.push(s);
    return s;
  };

  return {
    recordCall(c) {
      if (!c.paid) return;
      if (c.rail === 'usdc') acc.usdc++;
      else acc.native++;
      if (c.refunded) acc.refunded++;
      acc.seconds += c.seconds;
      acc.n++;
      const key = `${c.rail} ${c.serviceId}`;
      acc.calls.set(key, (acc.calls.get(key) ?? 0) + 1);
    },
    series(range) {
      if (range === 'hour') return hour;
      // The current minute, folded so far, ends the day's series.
      return minute.length > 0 ? [...day, fold(minute)] : day;
    },
    sample,
    async start() {
      if (file) {
        try {
          const lines = (await readFile(file, 'utf8')).split('\n').filter(Boolean);
          fileLines = lines.length;
          const since = Math.floor(now() / 1000) - 86_400;
          day = lines
            .slice(-DAY_MINUTES)
            .map((l) => {
              try {
                return JSON.parse(l) as HistorySample;
              } catch {
                return undefined;
              }
            })
            .filter((r): r is HistorySample => r !== undefined && typeof r.t === 'number' && r.t >= since);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'ENOENT') log.warn({ err: (e as Error).message, file }, 'dashboard history not read');
        }
        const hourAgo = Math.floor(now() / 1000) - 3600;
        hour.push(...day.filter((r) => r.t > hourAgo));
      }
      sample();
      timer = setInterval(sample, o.intervalMs);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      timer = undefined;
      if (minute.length > 0) {
        const rec = fold(minute);
        minute = [];
        day.push(rec);
        persist(rec);
      }
      await writing;
    },
  };
}
