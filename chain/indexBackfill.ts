/**
 * Rebuilding a read index from the stored blocks, for a data directory written before the index
 * existed (or under an older version of it). Today one index: the payments side of account
 * histories (`ey:`, economyIndex.ts `paymentRows`: paid calls, refunds, provider payouts, block
 * rewards), a function of each block alone, so any best-chain block can be indexed again.
 *
 * `m:index:payments` holds the version the rows were written under (a new chain writes the current
 * one with its genesis). When it is missing or older, the chain rebuilds the rows at start, in the
 * background, from height 1 to the tip it opened at (blocks connected meanwhile index themselves):
 * a bounded batch at a time (`maxBlocks` blocks or `maxRows` rows), each batch one atomic write
 * in the chain's write lane (so blocks connect in between), with the next height to do
 * (`m:index:payments:next`). Interrupted (stopped, crashed), it resumes from that height at the
 * next start; the version is written when the tip is reached. The rows are put, never deleted:
 * writing a block's rows again writes the same bytes.
 *
 * Each rebuilt block's index undo record (`v:<hash>`) gains its rows with no prior value, so a
 * reorganisation that disconnects the block removes them as it removes the rows written when a
 * block connects. Logged: the start (from, to, resumed or not), progress every 5 s, the end.
 */
import type { Level } from 'level';
import { decodeBlock } from '../consensus/block.js';
import { Reader, Writer } from '../consensus/codec.js';
import { decodeChanges, encodeChanges } from '../consensus/state.js';
import { txId as computeTxId } from '../consensus/tx.js';
import { paymentRows } from './economyIndex.js';
import { layout } from './layout.js';
import type { Logger } from './logger.js';

/** Name of the payments index in `m:index:<name>`. */
export const PAYMENTS_INDEX = 'payments';
/** Version of the `ey:` rows this code writes; raise it when their keys or values change. */
export const PAYMENTS_INDEX_VERSION = 1;

/** What the rebuild needs of the chain. */
export interface BackfillHost {
  readonly db: Level<string, Uint8Array>;
  /** A stored block's body (block files or LevelDB), not cached. */
  blockBytes(hashHex: string): Promise<Uint8Array | undefined>;
  /** Hash hex of the best-chain block at a height (undefined above the tip). */
  hashAt(height: number): string | undefined;
  tipHeight(): number;
  /** Runs `fn` in the chain's write lane, after the block work queued before it. */
  inLane<T>(fn: () => Promise<T>): Promise<T>;
  isClosed(): boolean;
  readonly log: Logger;
}

/** Bounds of one batch. */
export interface BackfillOptions {
  /** Blocks per batch (default 200). */
  readonly maxBlocks?: number;
  /** Rows per batch: the batch ends after the block that reaches it (default 20,000). */
  readonly maxRows?: number;
}

/** How a rebuild ended: `current` (nothing to do), `done`, or `stopped` (the chain closed; resumes at the next start). */
export interface BackfillResult {
  readonly status: 'current' | 'done' | 'stopped';
  readonly blocks: number;
  readonly rows: number;
}

/** The 4 bytes of a version or height mark. */
export function u32Bytes(v: number): Uint8Array {
  return new Writer(4).u32(v).finish();
}

function readU32(b: Uint8Array | undefined): number | undefined {
  return b && b.length === 4 ? new Reader(b).u32() : undefined;
}

const te = new TextEncoder();
type Batch = ({ type: 'put'; key: string; value: Uint8Array } | { type: 'del'; key: string })[];

/** Writes the rows of the blocks from `from` up to `to` (bounded by `opts`); returns the next height and what it wrote. */
async function step(host: BackfillHost, from: number, to: number, maxBlocks: number, maxRows: number): Promise<{ next: number; blocks: number; rows: number }> {
  const batch: Batch = [];
  let rows = 0;
  let h = from;
  for (; h <= to && h - from < maxBlocks && rows < maxRows; h++) {
    const hex = host.hashAt(h);
    if (hex === undefined) break;
    const bytes = await host.blockBytes(hex);
    if (!bytes) throw new Error(`block ${hex} at height ${h} has no stored body`);
    const { block, txBytes } = decodeBlock(bytes);
    const written = new Map<string, Uint8Array>();
    paymentRows(block, h, txBytes.map((raw) => computeTxId(raw)), (k, v) => written.set(k, te.encode(JSON.stringify(v))));
    const undoRaw = await host.db.get(layout.indexUndo(hex));
    const priors = undoRaw ? decodeChanges(undoRaw) : new Map<string, Uint8Array | null>();
    let added = false;
    for (const [k, v] of written) {
      batch.push({ type: 'put', key: k, value: v });
      if (!priors.has(k)) {
        priors.set(k, null);
        added = true;
      }
    }
    if (added) batch.push({ type: 'put', key: layout.indexUndo(hex), value: encodeChanges(priors) });
    rows += written.size;
  }
  batch.push({ type: 'put', key: layout.indexNext(PAYMENTS_INDEX), value: u32Bytes(h) });
  await host.db.batch(batch);
  return { next: h, blocks: h - from, rows };
}

/** Rebuilds the payments index when its version mark is behind (see module comment). */
export async function backfillPaymentsIndex(host: BackfillHost, opts: BackfillOptions = {}): Promise<BackfillResult> {
  const maxBlocks = opts.maxBlocks ?? 200;
  const maxRows = opts.maxRows ?? 20_000;
  const started = Date.now();
  const marks = await host.inLane(async () => (host.isClosed() ? undefined : host.db.getMany([layout.indexVersion(PAYMENTS_INDEX), layout.indexNext(PAYMENTS_INDEX)])));
  if (!marks) return { status: 'stopped', blocks: 0, rows: 0 };
  const [version, nextMark] = marks;
  if (readU32(version) === PAYMENTS_INDEX_VERSION) return { status: 'current', blocks: 0, rows: 0 };
  const target = host.tipHeight();
  let next = readU32(nextMark) ?? 1;
  host.log.info({ index: PAYMENTS_INDEX, version: PAYMENTS_INDEX_VERSION, from: next, to: target, resumed: nextMark !== undefined }, 'rebuilding the payments index of account histories from the stored blocks');
  let blocks = 0;
  let rows = 0;
  let lastLog = Date.now();
  const stopped = (): BackfillResult => {
    host.log.info({ index: PAYMENTS_INDEX, next, blocks, rows }, 'payments index rebuild stopped; it resumes at the next start');
    return { status: 'stopped', blocks, rows };
  };
  while (next <= Math.min(target, host.tipHeight())) {
    const from = next;
    const r = await host.inLane(async () => (host.isClosed() ? undefined : step(host, from, Math.min(target, host.tipHeight()), maxBlocks, maxRows)));
    if (!r) return stopped();
    next = r.next;
    blocks += r.blocks;
    rows += r.rows;
    if (r.blocks === 0) break; // the tip moved below `next` (a reorganisation): nothing more of the old tip to index
    if (Date.now() - lastLog >= 5_000) {
      lastLog = Date.now();
      host.log.info({ index: PAYMENTS_INDEX, height: next - 1, to: target, blocks, rows }, 'payments index rebuild progress');
    }
    // Let the node's other work in between batches.
    await new Promise((res) => setImmediate(res));
  }
  const finished = await host.inLane(async () => {
    if (host.isClosed()) return false;
    await host.db.batch([
      { type: 'put', key: layout.indexVersion(PAYMENTS_INDEX), value: u32Bytes(PAYMENTS_INDEX_VERSION) },
      { type: 'del', key: layout.indexNext(PAYMENTS_INDEX) },
    ]);
    return true;
  });
  if (!finished) return stopped();
  host.log.info({ index: PAYMENTS_INDEX, version: PAYMENTS_INDEX_VERSION, blocks, rows, ms: Date.now() - started }, 'payments index rebuilt');
  return { status: 'done', blocks, rows };
}
