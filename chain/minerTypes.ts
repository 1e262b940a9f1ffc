/**
 * The CPU miner's vocabulary (miner.ts; the paced miner, pacedMiner.ts, shares it): error codes, what it needs from the chain and the
 * mempool, options with defaults, statistics and events, and the `Miner` interface.
 */
import type { EventEmitter } from 'node:events';
import type { Block } from '../consensus/block.js';
import type { BlockTemplate } from './template.js';
import type { JobFeed, JobFeedChain, JobFeedMempool } from './jobFeed.js';
import type { HasherKind } from './minerWorker.js';
import type { AddBlockResult, Logger } from './types.js';

/** Error codes of the miner. */
export const MinerErrorCode = {
  BAD_ADDRESS: 'miner_bad_address',
  BAD_OPTIONS: 'miner_bad_options',
} as const;
export type MinerErrorCode = (typeof MinerErrorCode)[keyof typeof MinerErrorCode];

/** What the miner needs from the chain (the `Chain` implements it). */
export interface MinerChain extends JobFeedChain {
  addBlock(block: Block | Uint8Array): Promise<AddBlockResult>;
}

/** What the miner needs from the mempool (the `Mempool` implements it): what its job feed reads. */
export type MinerMempool = JobFeedMempool;

/** Options of `createMiner`. */
export interface MinerOptions {
  /** Worker threads (≥ 1). */
  readonly threads: number;
  /** Address (bech32m, the chain's hrp) or 20-byte account id paid by the coinbase. */
  readonly address: string | Uint8Array;
  /** Coinbase tag, UTF-8, at most 40 bytes. */
  readonly tag?: string;
  readonly logger?: Logger;
  /** Clock in Unix seconds (the chain's clock). */
  readonly now?: () => number;
  /** The job feed to follow (the node's shared one); default: a feed of the miner's own. */
  readonly feed?: JobFeed;
  /** Own feed only: minimum interval between template rebuilds caused by mempool changes, ms. */
  readonly mempoolRefreshMs?: number;
  /** Own feed only: rebuild a template older than this, ms (keeps the block time fresh). */
  readonly templateMaxAgeMs?: number;
  /** Window of the hashrate moving average, ms. */
  readonly hashrateWindowMs?: number;
  /** Nonces per work unit (default: 2^32 / threads); small values exercise extranonce rolling. */
  readonly nonceRange?: number;
  /** Force a hasher in the workers (default: the midstate hasher after its self-test). */
  readonly hasher?: HasherKind;
}

/** Defaults of MinerOptions. */
export const defaultMinerOptions = {
  threads: 1,
  mempoolRefreshMs: 500,
  templateMaxAgeMs: 30_000,
  hashrateWindowMs: 10_000,
} as const;

/** A snapshot of the miner's state. */
export interface MinerStats {
  readonly running: boolean;
  readonly threads: number;
  /** Hashes per second over the moving-average window. */
  readonly hashrate: number;
  /** Blocks this miner found that joined the best chain. */
  readonly blocksFound: number;
  /** Height of the block being mined (0 before the first template). */
  readonly height: number;
  /** Hashes done since the miner was created. */
  readonly hashes: number;
  /** Current job generation. */
  readonly generation: number;
  /** Hasher each worker reported (`midstate` or `node`). */
  readonly hashers: readonly (HasherKind | undefined)[];
  /** Interval mining (chain/pacedMiner.ts): seconds between blocks; absent for the free-running miner. */
  readonly blockTime?: number;
}

/** A worker acknowledged a job. */
export interface MinerJobEvent {
  readonly generation: number;
  readonly worker: number;
  readonly jobId: number;
  readonly height: number;
  readonly parentHash: string;
  /** Hex of the unit's extranonce. */
  readonly extranonce: string;
  /** When the main thread posted the job (performance.timeOrigin + performance.now(), ms). */
  readonly postedAt: number;
  /** When the worker took the job (same clock). */
  readonly at: number;
  /** ms from the chain's 'tip' event for this parent to the worker's acknowledgement, when a tip change caused the job. */
  readonly sinceTipMs?: number;
}

/** A block this miner found was submitted. */
export interface MinerBlockEvent {
  readonly hash: string;
  readonly height: number;
  readonly status: AddBlockResult['status'];
  readonly txCount: number;
}

/** A block this miner found was rejected by the chain. */
export interface MinerRejectEvent {
  readonly hash: string;
  readonly height: number;
  readonly code?: string;
  readonly message: string;
}

/** Events of the miner. */
export interface MinerEvents {
  /** A worker acknowledged a job (the measure of job-switch latency). */
  job: [event: MinerJobEvent];
  /** A new template is being mined. */
  template: [template: BlockTemplate];
  /** A found block was submitted and accepted (any status but a thrown rejection). */
  block: [event: MinerBlockEvent];
  /** A found block was rejected. */
  rejected: [event: MinerRejectEvent];
}

/** The built-in miner's lifecycle and statistics. */
export interface Miner extends EventEmitter<MinerEvents> {
  /** Starts the workers and mining; resolves once the workers are up and the first template is out. Never rejects. */
  start(): Promise<void>;
  /** Stops mining, terminates the workers and waits for in-flight submissions. */
  stop(): Promise<void>;
  stats(): MinerStats;
}
