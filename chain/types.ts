/**
 * The interfaces the rest of the node uses to read the chain and the mempool, declared once so
 * `p2p/`, `x402/`, `services/` and `node/` depend on narrow contracts, not on implementations.
 */
import type { Block, BlockHeader } from '../consensus/block.js';
import type { Account, Supply } from '../consensus/state.js';
import type { Tx } from '../consensus/tx.js';
import type { EconomyReader } from './economyReader.js';

/** A block on the best chain or a side branch, as the chain index knows it. */
export interface ChainEntry {
  readonly hash: Uint8Array;
  /** Lowercase hex of `hash` (block ids in JSON and logs). */
  readonly hashHex: string;
  readonly height: number;
  readonly header: BlockHeader;
  /** Cumulative work from genesis up to and including this block. */
  readonly chainWork: bigint;
  /** Number of transactions (coinbase excluded). */
  readonly txCount: number;
  /** Serialized block size in bytes. */
  readonly size: number;
}

/** Where a mined transaction is. */
export interface TxLocation {
  readonly blockHash: string;
  readonly height: number;
  /** Index in the block's transaction list (0 = first after the coinbase). */
  readonly index: number;
}

/** A stored transaction and where it was mined. */
export interface StoredTx extends TxLocation {
  readonly tx: Tx;
  readonly bytes: Uint8Array;
  readonly id: string;
}

/** What happened to a block handed to the chain. */
export type AddBlockStatus = 'connected' | 'reorganized' | 'side' | 'orphan' | 'duplicate';

/** Result of `addBlock`. */
export interface AddBlockResult {
  readonly status: AddBlockStatus;
  readonly hash: string;
  /** Height of the block when known (not for orphans). */
  readonly height?: number;
}

/** Read access to the chain, for the API, services and x402 settlement. */
export interface ChainReader {
  readonly tip: ChainEntry;
  getEntryByHeight(height: number): ChainEntry | undefined;
  getEntryByHash(hashHex: string): ChainEntry | undefined;
  getBlock(hashHex: string): Promise<Block | undefined>;
  getTx(idHex: string): Promise<StoredTx | undefined>;
  getAccount(id: Uint8Array): Promise<Account>;
  getSupply(): Promise<Supply>;
  /** Median time of the last `medianTimeSpan` blocks ending at `entry`. */
  medianTimePast(entry: ChainEntry): number;
  /** The economy's reads (tokens, pools, swaps, stakes, bridge; chain/economyReader.ts); absent in stubs. */
  readonly economy?: EconomyReader;
}

/** Chain events (node-style EventEmitter names and arguments). */
export interface ChainEvents {
  /** A block joined the best chain, with its transaction ids (in the order of `block.txs`). */
  connect: [entry: ChainEntry, block: Block, txIds: readonly Uint8Array[]];
  /** A block left the best chain (reorganisation). */
  disconnect: [entry: ChainEntry, block: Block];
  /** The best tip changed (after a connect or a whole reorganisation). */
  tip: [entry: ChainEntry];
}

/** A transaction waiting in the mempool. */
export interface MempoolEntry {
  readonly tx: Tx;
  readonly id: string;
  readonly bytes: Uint8Array;
  readonly size: number;
  /** Fee per byte, base units (fee / size). */
  readonly feeRate: number;
  /** Unix ms when it entered. */
  readonly addedAt: number;
}

/** Read access to the mempool. */
export interface MempoolReader {
  readonly count: number;
  readonly bytes: number;
  has(idHex: string): boolean;
  get(idHex: string): MempoolEntry | undefined;
  /** Next nonce an account should use, counting its pending transactions. */
  pendingNonce(id: Uint8Array, confirmedNonce: bigint): bigint;
  /** Entries ordered by fee rate, highest first. */
  list(limit?: number): MempoolEntry[];
  /** Sizes and limits for `/api/v1/status` (absent in stubs). */
  stats?(): MempoolStats;
}

/** The mempool's sizes and limits, as `/api/v1/status` shows them. */
export interface MempoolStats {
  /** Ready transactions (mineable now) and their bytes. */
  readonly count: number;
  readonly bytes: number;
  readonly maxBytes: number;
  /** Fee rate (base units per byte) a transaction must exceed to enter while the pool is full: the lowest package's; null when empty. */
  readonly evictionFeeRate: number | null;
  readonly queued: { readonly count: number; readonly bytes: number; readonly maxCount: number; readonly maxBytes: number; readonly maxPerSender: number; readonly expirySeconds: number };
}


/** The logging interface (chain/logger.ts, shared with the agent SDK), re-exported for the node's modules. */
export { silentLogger, type Logger } from './logger.js';

/** Verifies hybrid signatures off the caller's thread; caches successes by tx id. */
export interface SignatureVerifier {
  /** `background`: checks made ahead of need, run only while nothing else waits (the pool's priorities). */
  verifyBatch(jobs: readonly { id?: string; pub: { mldsa: Uint8Array; ed25519: Uint8Array }; msg: Uint8Array; sig: { mldsa: Uint8Array; ed25519: Uint8Array } }[], opts?: { readonly background?: boolean }): Promise<boolean[]>;
}
