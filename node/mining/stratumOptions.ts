/**
 * The Stratum server's vocabulary (stratum.ts): its error codes, wire constants, options with
 * their defaults, modules, events and the `info()` shape.
 */
import type { ChainParams } from '../../consensus/params.js';
import type { JobFeed } from '../../chain/jobFeed.js';
import type { MinerChain, MinerMempool } from '../../chain/miner.js';
import type { Logger } from '../../chain/types.js';
import { DEFAULT_LOG_SUMMARY_MS } from '../logSummary.js';
import type { MiningStats } from './stats.js';
import type { StratumBan, StratumRefusals } from './stratumGate.js';

/** Error codes of the server's lifecycle. */
export const StratumErrorCode = {
  LISTEN_FAILED: 'stratum_listen_failed',
} as const;

/** Stratum's numeric error codes (the first element of an `error` array). */
export const StratumError = {
  OTHER: 20,
  JOB_NOT_FOUND: 21,
  DUPLICATE: 22,
  LOW_DIFFICULTY: 23,
  UNAUTHORIZED: 24,
  NOT_SUBSCRIBED: 25,
} as const;

/** Version bits miners may roll (BIP 310 / BIP 320's general-purpose bits). */
export const VERSION_ROLLING_MASK = 0x1fffe000;
/** Bytes of extranonce2 the miner fills (the other 4 of the slot are extranonce1). */
export const EXTRANONCE2_SIZE = 4;
/** Tolerance on the share target: miners compute it in floating point. */
export const SHARE_TOLERANCE = 0.99;

/** Options of the Stratum server. */
export interface StratumOptions {
  readonly host: string;
  /** TCP port; 0 picks a free one (logged in the "stratum listening" line). */
  readonly port: number;
  /** Fail `start()` when the port cannot be bound; false logs a warning and runs without Stratum. */
  readonly required: boolean;
  /** Share difficulty of a new connection (a 2-core CPU miner, ~12 MH/s, finds one every ~4 s at 0.01). */
  readonly initialDifficulty: number;
  readonly minDifficulty: number;
  readonly maxDifficulty: number;
  /** Seconds between shares that variable difficulty aims at. */
  readonly targetShareSeconds: number;
  /** Retarget after this many accepted shares… */
  readonly retargetShares: number;
  /** …or after this long, ms. */
  readonly retargetMs: number;
  /** Longest time without a new job, ms (at most 30 s). */
  readonly keepAliveMs: number;
  /** Shortest interval between jobs caused by mempool changes, ms. */
  readonly mempoolRefreshMs: number;
  /** Templates whose jobs are still accepted (while they build on the tip). */
  readonly jobHistory: number;
  /** Connections at most, every address together. */
  readonly maxConnections: number;
  /** Connections one client address may hold at most (further ones are closed at once). */
  readonly maxConnectionsPerAddress: number;
  /**
   * Slots only an address holding no connection yet may take: one address (or a few) filling the
   * server leaves room for a new miner. When the server is full, a newcomer evicts a connection
   * that has not finished its handshake, taken from the address holding the most.
   */
  readonly reservedConnections: number;
  /** Longest request line, bytes (a longer one closes the connection). */
  readonly maxLineBytes: number;
  /** A connection that has not subscribed and authorised within this time is closed, ms. */
  readonly handshakeTimeoutMs: number;
  /** Shares one connection may submit per second, on average (more are refused without being checked). */
  readonly submitsPerSecond: number;
  /** Shares one connection may submit in a burst. */
  readonly submitBurst: number;
  /**
   * Ban: after `banMinShares` judged shares, a connection of which at least `banInvalidPercent` %
   * were invalid (low difficulty, duplicate, unknown job, malformed, over the rate limit; stale
   * shares do not count) is closed and its address refused for `banSeconds` (0: closed, not banned).
   */
  readonly banSeconds: number;
  readonly banInvalidPercent: number;
  readonly banMinShares: number;
  /** Interval of the summary lines of repeated per-client log events, ms. */
  readonly logSummaryMs: number;
  /** A connection that sends nothing for this long is closed, ms. */
  readonly idleTimeoutMs: number;
  /** Coinbase tag (UTF-8, at most 40 bytes). */
  readonly tag: string;
  /** Clock in Unix seconds (the chain's clock: block times and the ntime window). */
  readonly now?: () => number;
}

/** Defaults of StratumOptions. */
export const defaultStratumOptions: StratumOptions = {
  host: '127.0.0.1',
  port: 3333,
  required: true,
  initialDifficulty: 0.01,
  minDifficulty: 2 ** -32,
  maxDifficulty: 2 ** 40,
  targetShareSeconds: 5,
  retargetShares: 12,
  retargetMs: 30_000,
  keepAliveMs: 25_000,
  mempoolRefreshMs: 3_000,
  jobHistory: 16,
  maxConnections: 1_000,
  maxConnectionsPerAddress: 32,
  reservedConnections: 100,
  maxLineBytes: 16 * 1024,
  handshakeTimeoutMs: 10_000,
  submitsPerSecond: 50,
  submitBurst: 200,
  banSeconds: 600,
  banInvalidPercent: 90,
  banMinShares: 100,
  logSummaryMs: DEFAULT_LOG_SUMMARY_MS,
  idleTimeoutMs: 15 * 60_000,
  tag: 'native-node',
};

/** What the server needs from the chain and the mempool (the node's `Chain` and `Mempool`). */
export interface StratumModules {
  readonly chain: MinerChain;
  readonly mempool: MinerMempool;
  readonly params: ChainParams;
  readonly stats: MiningStats;
  readonly logger?: Logger;
  /** A job feed shared with other consumers (started and stopped by its owner); default: one of the server's own. */
  readonly feed?: JobFeed;
}

/** A job went out. */
export interface StratumJobEvent {
  readonly jobId: string;
  readonly height: number;
  readonly parentHash: string;
  readonly clean: boolean;
  /** Connections it was sent to. */
  readonly connections: number;
  /** ms from the chain's 'tip' event to the last socket write, for the first job of a new tip. */
  readonly sinceTipMs?: number;
}

/** A share was judged. */
export interface StratumShareEvent {
  readonly worker: string;
  readonly result: 'accepted' | 'rejected' | 'stale';
  readonly difficulty: number;
  readonly code?: number;
  readonly reason?: string;
  readonly block: boolean;
}

/** A share became a block. */
export interface StratumBlockEvent {
  readonly hash: string;
  readonly height: number;
  readonly worker: string;
  readonly status: string;
}

/** Events of the server. */
export interface StratumEvents {
  job: [event: StratumJobEvent];
  share: [event: StratumShareEvent];
  block: [event: StratumBlockEvent];
}

/** The options `info().limits` shows. */
export const LIMIT_KEYS = ['maxConnections', 'maxConnectionsPerAddress', 'reservedConnections', 'handshakeTimeoutMs', 'submitsPerSecond', 'submitBurst', 'banSeconds', 'banInvalidPercent', 'banMinShares'] as const;

/** The server's state for `GET /api/v1/mining`. */
export interface StratumInfo {
  readonly enabled: boolean;
  readonly listening: boolean;
  /** Why Stratum could not listen (its port taken, and no --stratum-port asked for it): then it stays off. */
  readonly listenError?: string;
  readonly host: string;
  readonly port: number | null;
  readonly url: string | null;
  readonly connections: number;
  readonly job: { readonly id: string; readonly height: number; readonly parentHash: string; readonly transactions: number; readonly sentAt: number } | null;
  readonly difficulty: { readonly initial: number; readonly min: number; readonly max: number; readonly targetShareSeconds: number; readonly network: number | null };
  /** Last measured delay from a new tip to its job on every socket, ms. */
  readonly lastNotifyLatencyMs: number | null;
  /** The last measurements, newest last. */
  readonly notifyLatencyMs: readonly number[];
  /** The abuse limits in force (see StratumOptions). */
  readonly limits: Pick<StratumOptions, (typeof LIMIT_KEYS)[number]>;
  /** What the limits refused since the start. */
  readonly refused: StratumRefusals;
  /** Client addresses banned now (their shares were overwhelmingly invalid). */
  readonly bans: readonly StratumBan[];
}
