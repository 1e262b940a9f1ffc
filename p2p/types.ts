/**
 * What the peer-to-peer layer needs from the rest of the node, declared here by the consumer
 * (STYLE: siblings talk through narrow interfaces). `chain/chain.ts`'s `Chain` and
 * `chain/mempool.ts`'s `Mempool` satisfy them; tests and benchmarks supply their own.
 */
import type { Block } from '../consensus/block.js';
import type { ChainParams } from '../consensus/params.js';
import type { StateView } from '../consensus/state.js';
import type { PreparedBlock } from '../chain/blockQueue.js';
import type { AddBlockResult, ChainEntry, Logger, MempoolEntry, SignatureVerifier } from '../chain/types.js';

/** The chain as sync and gossip use it: read the best chain, serve stored blocks, add new ones. */
export interface P2PChain {
  readonly params: ChainParams;
  readonly tip: ChainEntry;
  getEntryByHeight(height: number): ChainEntry | undefined;
  getEntryByHash(hashHex: string): ChainEntry | undefined;
  getBlockBytes(hashHex: string): Promise<Uint8Array | undefined>;
  /** Median time of the last `medianTimeSpan` blocks ending at `entry`. */
  medianTimePast(entry: ChainEntry): number;
  /** Validates and stores a block (bytes, or bytes decoded by `prepareBlock`); throws coded ValidationError / CodecError for invalid ones. */
  addBlock(block: Uint8Array | PreparedBlock): Promise<AddBlockResult>;
  /** A snapshot of the given state keys at the tip (the sync reads published public keys from it). */
  getStateView(keys: readonly string[]): Promise<StateView>;
  on(event: 'connect' | 'disconnect', listener: (entry: ChainEntry, block: Block) => void): unknown;
  off(event: 'connect' | 'disconnect', listener: (entry: ChainEntry, block: Block) => void): unknown;
}

/** The mempool as gossip and the mempool exchange use it: admit relayed transactions, learn of new ones to relay, list and serve the pending ones. */
export interface P2PMempool {
  has(idHex: string): boolean;
  /** A pending transaction (ready or queued). */
  get(idHex: string): Pick<MempoolEntry, 'bytes'> | undefined;
  /** Whether a pending transaction waits beyond a nonce gap (not relayed). */
  isQueued(idHex: string): boolean;
  /** Ready transactions, highest fee rate first. */
  list(limit?: number): readonly MempoolEntry[];
  /** Admits a signed transaction; throws coded errors (ValidationError, CodecError, NodeError). */
  /** Admits a transaction; `queued`: it waits beyond a nonce gap (kept, not relayed). */
  add(bytes: Uint8Array, opts?: { abandon?: () => boolean }): Promise<{ readonly queued?: boolean } | void>;
  on(event: 'added', listener: (entry: MempoolEntry) => void): unknown;
  off(event: 'added', listener: (entry: MempoolEntry) => void): unknown;
}

/** The modules the p2p layer is built over. */
export interface P2PModules {
  readonly chain: P2PChain;
  readonly mempool: P2PMempool;
  /**
   * The node's signature verifier (the worker pool, whose cache remembers verified tx ids). When
   * given, the sync checks the signatures of downloaded blocks ahead of connecting them, so the
   * pool works while the chain writes the previous block.
   */
  readonly verifier?: SignatureVerifier;
  readonly logger?: Logger;
}

/** Where the sync is, for `/api/v1/status`, the progress bar and the paid routes. */
export interface SyncState {
  /** Whether the node is far enough behind its peers that its state should not be trusted for payments. */
  readonly syncing: boolean;
  /** Height of the local best chain. */
  readonly height: number;
  /** Best height known from peers (or the header chain being downloaded); at least `height`. */
  readonly targetHeight: number;
  /** Blocks connected per second over the last seconds of sync (0 when idle). */
  readonly rate: number;
  /** Seconds left at the current rate; null when unknown or idle. */
  readonly eta: number | null;
  /** Whether a header-first download is running (even a short one). */
  readonly downloading: boolean;
}

/** Read access to the sync state (what `x402/` and `node/` may depend on). */
export interface SyncStatusReader {
  /** True while the node is far behind the network (paid calls answer 503 `node_syncing`). */
  isSyncing(): boolean;
  syncState(): SyncState;
}

/**
 * How many blocks behind its best peer (or its fleet) a node counts as syncing: it stops selling
 * (503 node_syncing) until it is within this many. Here, not in sync.ts, so that the HTTP side
 * reads it without importing libp2p.
 */
export const FAR_BEHIND_BLOCKS = 10;
