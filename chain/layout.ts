/**
 * LevelDB key layout of the chain store. One database, string keys, binary values; every
 * connected or disconnected block is one atomic batch, so a crash leaves the last committed tip.
 *
 *   m:tip              → 32-byte hash of the best block whose state is committed
 *   m:schema           → u32 schema version
 *   h:<hash hex>       → entry: header(80) ‖ u32 height ‖ varint chainWork ‖ varint txCount ‖ varint size
 *                        (every block with a stored body, best chain and side branches)
 *   b:<hash hex>       → full block bytes
 *   u:<hash hex>       → undo record of a block on the best chain (consensus/state encodeChanges)
 *   n:<height, 10 digits> → hash of the best-chain block at that height
 *   t:<txid hex>       → location of a best-chain transaction: blockHash(32) ‖ u32 height ‖ varint index
 *                        ‖ varint offset ‖ varint length (its bytes inside b:<blockHash>)
 *   s:<state key>      → consensus state at m:tip (see consensus/state.ts: `a<id>` accounts, `supply`;
 *                        consensus/registryState.ts: `A` agents, `N` agent names, `S` provider services,
 *                        `M` address labels, `O` provider payouts — scanned by prefix with `scanState`)
 *   x:…                → reserved for the x402 settlement ledger (x402/)
 */
import { Reader, Writer, decodeAll } from '../consensus/codec.js';
import { decodeHeader, encodeHeader, type BlockHeader } from '../consensus/block.js';

/** Schema version written in `m:schema`. */
export const SCHEMA_VERSION = 1;

/** Key builders, one per prefix. */
export const layout = {
  tip: 'm:tip',
  schema: 'm:schema',
  entry: (hashHex: string) => `h:${hashHex}`,
  entryPrefix: 'h:',
  block: (hashHex: string) => `b:${hashHex}`,
  undo: (hashHex: string) => `u:${hashHex}`,
  height: (height: number) => `n:${height.toString().padStart(10, '0')}`,
  tx: (txIdHex: string) => `t:${txIdHex}`,
  state: (key: string) => `s:${key}`,
} as const;

/** The stored part of a chain entry. */
export interface EntryRecord {
  readonly header: BlockHeader;
  readonly height: number;
  readonly chainWork: bigint;
  readonly txCount: number;
  readonly size: number;
}

/** Encodes an `h:` record. Chain work can outgrow 64 bits, so it is stored as big-endian bytes. */
export function encodeEntryRecord(e: EntryRecord): Uint8Array {
  let hex = e.chainWork.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  const work = Uint8Array.from(Buffer.from(hex === '00' ? '' : hex, 'hex'));
  return new Writer(128).raw(encodeHeader(e.header)).u32(e.height).bytes(work).varint(e.txCount).varint(e.size).finish();
}

/** Decodes an `h:` record. */
export function decodeEntryRecord(bytes: Uint8Array): EntryRecord {
  return decodeAll(bytes, (r: Reader) => {
    const header = decodeHeader(r.raw(80));
    const height = r.u32();
    const work = r.bytes(64, 'chain work');
    const chainWork = work.length ? BigInt(`0x${Buffer.from(work).toString('hex')}`) : 0n;
    return { header, height, chainWork, txCount: r.varnum(1_000_000, 'tx count'), size: r.varnum(1 << 30, 'size') };
  });
}

/** A `t:` record. */
export interface TxLocationRecord {
  readonly blockHash: Uint8Array;
  readonly height: number;
  readonly index: number;
  readonly offset: number;
  readonly length: number;
}

/** Encodes a `t:` record. */
export function encodeTxLocation(t: TxLocationRecord): Uint8Array {
  return new Writer(48).raw(t.blockHash).u32(t.height).varint(t.index).varint(t.offset).varint(t.length).finish();
}

/** Decodes a `t:` record. */
export function decodeTxLocation(bytes: Uint8Array): TxLocationRecord {
  return decodeAll(bytes, (r) => ({
    blockHash: r.raw(32).slice(),
    height: r.u32(),
    index: r.varnum(1_000_000, 'index'),
    offset: r.varnum(1 << 30, 'offset'),
    length: r.varnum(1 << 30, 'length'),
  }));
}
