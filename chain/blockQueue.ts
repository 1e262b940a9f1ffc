/**
 * The blocks handed to `Chain.addBlock` that wait for their turn (the chain adds one block at a
 * time), and the work done on them ahead of it: while the chain waits for the signature checks
 * of the block it connects, the next `depth` waiting blocks are decoded, their transaction ids
 * computed, and their signatures sent to the pool as background checks
 * (`signatureLookahead.ts`). When a block's turn comes the chain takes the decoded block and
 * ids from here instead of computing them again, and runs every check on it as for any block:
 * the ids are the same function of the same bytes, and the signature checks answer from the
 * pool's cache. A caller that hands blocks over one at a time (awaiting each) gets none of this.
 */
import { decodeBlock, HEADER_SIZE, type Block } from '../consensus/block.js';
import { Reader } from '../consensus/codec.js';
import { txId as computeTxId, txSighash, type Tx } from '../consensus/tx.js';
import type { SignatureLookahead } from './signatureLookahead.js';

/** A decoded block with the ids (SHA-256d of each transaction's bytes in `bytes`) and sighashes of its transactions. */
export interface PreparedBlock {
  readonly block: Block;
  readonly bytes: Uint8Array;
  readonly txIds: Uint8Array[];
  readonly sighashes: Uint8Array[];
}

/** Blocks made by `prepareBlock`: the chain trusts their ids and sighashes only then. */
const genuine = new WeakSet<PreparedBlock>();

/**
 * Prepared blocks whose transaction ids were found distinct and committed to by their header's
 * merkle root (`p2p/verdict.ts` checkBlockIntegrity, run on every block from a peer before the
 * chain sees it): the chain's body check takes that result instead of hashing the tree again.
 */
const idsCommitted = new WeakSet<PreparedBlock>();

/** Records that `p`'s ids are distinct and match its header's merkle root (only for genuine prepared blocks). */
export function noteIdsCommitted(p: PreparedBlock): void {
  if (genuine.has(p)) idsCommitted.add(p);
}

/** Whether `noteIdsCommitted` recorded `p`. */
export function areIdsCommitted(p: PreparedBlock | undefined): boolean {
  return p !== undefined && idsCommitted.has(p);
}

/** Whether `x` was made by `prepareBlock` (so its ids and sighashes are those of its bytes). */
export function isPreparedBlock(x: unknown): x is PreparedBlock {
  return typeof x === 'object' && x !== null && genuine.has(x as PreparedBlock);
}

/** What `Chain.addBlock` takes: a block, its bytes, or its bytes decoded by `prepareBlock`. */
export type BlockInput = Block | Uint8Array | PreparedBlock;

/** A block waiting in the chain's queue. */
export interface QueuedBlock {
  readonly input: BlockInput;
  /** Set once prepared (by the caller or the look-ahead); undefined when it could not be decoded (the chain will say why). */
  prepared?: Promise<PreparedBlock | undefined>;
  /** Its signatures went to the pool ahead. */
  lookedAhead: boolean;
}

/** Offsets and lengths of each transaction's bytes inside encoded block bytes. */
export function txOffsets(bytes: Uint8Array): { offset: number; length: number }[] {
  const r = new Reader(bytes);
  r.raw(HEADER_SIZE);
  r.bytes(256, 'coinbase');
  const n = r.varnum(1_000_000, 'tx count');
  const out: { offset: number; length: number }[] = [];
  for (let i = 0; i < n; i++) {
    const length = r.varnum(1 << 30, 'tx');
    out.push({ offset: r.offset, length });
    r.raw(length);
  }
  return out;
}

/** Each transaction's bytes inside encoded block bytes (views, no copies). */
export function txSlices(bytes: Uint8Array): Uint8Array[] {
  return txOffsets(bytes).map((o) => bytes.subarray(o.offset, o.offset + o.length));
}

/**
 * Decodes block bytes and computes its transactions' ids and sighashes; throws CodecError on
 * malformed bytes. A caller that decodes a block before handing it to the chain (the sync) hands
 * over this instead of the bytes, and nothing is decoded or hashed twice. Frozen.
 */
export function prepareBlock(bytes: Uint8Array): PreparedBlock {
  const { block, txBytes } = decodeBlock(bytes);
  const p: PreparedBlock = Object.freeze({ block, bytes, txIds: txBytes.map((raw) => computeTxId(raw)), sighashes: block.txs.map(txSighash) });
  genuine.add(p);
  return p;
}

/** See module comment. */
export class BlockQueue {
  private readonly waiting: QueuedBlock[] = [];
  /** The look-ahead sends blocks' checks one after another, in queue order (keys of earlier blocks first). */
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly lookahead: SignatureLookahead,
    /** Waiting blocks prepared ahead at most (0: none). */
    private readonly depth: number,
  ) {}

  /** A block was handed over: it waits until `take`. */
  push(input: BlockInput): QueuedBlock {
    const q: QueuedBlock = { input, lookedAhead: false };
    if (isPreparedBlock(input)) q.prepared = Promise.resolve(input);
    this.waiting.push(q);
    return q;
  }

  /** Its turn came (or it is dropped): it no longer waits. */
  take(q: QueuedBlock): void {
    const i = this.waiting.indexOf(q);
    if (i >= 0) this.waiting.splice(i, 1);
  }

  /**
   * The chain is about to wait for the signature checks of a block (whose transactions are
   * `connecting`): prepares the next waiting blocks and sends their checks to the pool.
   */
  lookAhead(connecting: readonly Tx[]): void {
    if (this.depth === 0 || this.waiting.length === 0) return;
    this.lookahead.noteKeys(connecting);
    for (const q of this.waiting.slice(0, this.depth)) {
      if (q.lookedAhead) continue;
      const input = q.input;
      if (!(input instanceof Uint8Array) && !isPreparedBlock(input)) continue;
      q.lookedAhead = true;
      // The block's turn waits for its decoding only, never for the look-ahead's state reads.
      const prepared = Promise.resolve().then(() => {
        try {
          return input instanceof Uint8Array ? prepareBlock(input) : input;
        } catch {
          return undefined; // malformed: the chain's own decoding reports it
        }
      });
      q.prepared = prepared;
      this.tail = Promise.all([prepared, this.tail]).then(async ([p]) => {
        if (!p) return;
        try {
          void this.lookahead.submit(await this.lookahead.jobs(p.block.txs, p.txIds, p.sighashes));
        } catch {
          // The state could not be read (closing): the chain's own checks remain.
        }
      });
    }
  }
}
