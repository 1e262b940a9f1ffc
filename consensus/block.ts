/**
 * Headers, the coinbase record and blocks.
 *
 * Header: exactly Bitcoin's 80 bytes, `LE32 version ‖ prevHash(32) ‖ merkleRoot(32) ‖ LE32 time
 * ‖ LE32 bits ‖ LE32 nonce`; block hash = SHA-256d(header), hashes kept in internal byte order.
 *
 * Coinbase (fixed layout so the extranonce slot is at a constant offset and Stratum's
 * coinb1/coinb2 are simply the bytes around it):
 *   u8 version ‖ u32 chainId ‖ u32 height ‖ miner(20) ‖ u64 reward ‖ u64 fees ‖ extranonce(8) ‖ u8 tagLen ‖ tag
 *
 * Block: header(80) ‖ bytes coinbase ‖ varint txCount ‖ (bytes tx)*.
 */
import { Reader, Writer, decodeAll } from './codec.js';
import { CodecError, CodecErrorCode } from './errors.js';
import { sha256d, concatBytes } from './hash.js';
import { ADDRESS_SIZE } from './keys.js';
import { encodeTx, readTx, type Tx } from './tx.js';

/** Serialized header size. */
export const HEADER_SIZE = 80;
/** Coinbase format version. */
export const COINBASE_VERSION = 1;
/** Byte offset of the 8-byte extranonce slot inside the coinbase. */
export const EXTRANONCE_OFFSET = 45;
/** Size of the extranonce slot. */
export const EXTRANONCE_SIZE = 8;
/** Longest coinbase tag. */
export const MAX_COINBASE_TAG = 40;
/** Decoding caps, independent of chain parameters. */
export const MAX_BLOCK_DECODE_TXS = 100_000;
export const MAX_TX_DECODE_BYTES = 2_000_000;

/** An 80-byte block header. */
export interface BlockHeader {
  readonly version: number;
  readonly prevHash: Uint8Array;
  readonly merkleRoot: Uint8Array;
  /** Unix seconds. */
  readonly time: number;
  readonly bits: number;
  readonly nonce: number;
}

/** The coinbase record: who is paid, how much, and the miner's extranonce. */
export interface Coinbase {
  readonly version: number;
  readonly chainId: number;
  readonly height: number;
  /** 20-byte account id credited with reward + fees. */
  readonly miner: Uint8Array;
  /** Block subsidy in base units. */
  readonly reward: bigint;
  /** Miner's share of the block's fees in base units. */
  readonly fees: bigint;
  readonly extranonce: Uint8Array;
  readonly tag: Uint8Array;
}

/** A full block. */
export interface Block {
  readonly header: BlockHeader;
  readonly coinbase: Coinbase;
  readonly txs: readonly Tx[];
}

/** Bitcoin's 80-byte header encoding. */
export function encodeHeader(h: BlockHeader): Uint8Array {
  if (h.prevHash.length !== 32 || h.merkleRoot.length !== 32) throw new CodecError(CodecErrorCode.BAD_VALUE, 'header hashes must be 32 bytes');
  return new Writer(HEADER_SIZE).u32(h.version).raw(h.prevHash).raw(h.merkleRoot).u32(h.time).u32(h.bits).u32(h.nonce).finish();
}

/** Reads an 80-byte header. */
export function readHeader(r: Reader): BlockHeader {
  return { version: r.u32(), prevHash: r.raw(32).slice(), merkleRoot: r.raw(32).slice(), time: r.u32(), bits: r.u32(), nonce: r.u32() };
}

/** Decodes exactly 80 header bytes. */
export function decodeHeader(bytes: Uint8Array): BlockHeader {
  return decodeAll(bytes, readHeader);
}

/** Block hash: SHA-256d of the header, internal byte order. */
export function blockHash(h: BlockHeader): Uint8Array {
  return sha256d(encodeHeader(h));
}

/** Canonical bytes of a coinbase. */
export function encodeCoinbase(c: Coinbase): Uint8Array {
  if (c.miner.length !== ADDRESS_SIZE) throw new CodecError(CodecErrorCode.BAD_VALUE, 'coinbase miner must be 20 bytes');
  if (c.extranonce.length !== EXTRANONCE_SIZE) throw new CodecError(CodecErrorCode.BAD_VALUE, 'extranonce must be 8 bytes');
  if (c.tag.length > MAX_COINBASE_TAG) throw new CodecError(CodecErrorCode.OVERSIZED, `coinbase tag longer than ${MAX_COINBASE_TAG}`);
  return new Writer(64 + c.tag.length)
    .u8(c.version).u32(c.chainId).u32(c.height).raw(c.miner).u64(c.reward).u64(c.fees).raw(c.extranonce).u8(c.tag.length).raw(c.tag)
    .finish();
}

/** Reads a coinbase record. */
export function readCoinbase(r: Reader): Coinbase {
  const version = r.u8();
  const chainId = r.u32();
  const height = r.u32();
  const miner = r.raw(ADDRESS_SIZE).slice();
  const reward = r.u64();
  const fees = r.u64();
  const extranonce = r.raw(EXTRANONCE_SIZE).slice();
  const at = r.offset;
  const tagLen = r.u8();
  if (tagLen > MAX_COINBASE_TAG) throw new CodecError(CodecErrorCode.OVERSIZED, `coinbase tag length ${tagLen}`, at);
  const tag = r.raw(tagLen).slice();
  return { version, chainId, height, miner, reward, fees, extranonce, tag };
}

/** Decodes a coinbase record from its exact bytes. */
export function decodeCoinbase(bytes: Uint8Array): Coinbase {
  return decodeAll(bytes, readCoinbase);
}

/** Coinbase id: SHA-256d of its bytes (the first merkle leaf). */
export function coinbaseId(c: Coinbase | Uint8Array): Uint8Array {
  return sha256d(c instanceof Uint8Array ? c : encodeCoinbase(c));
}

/** Splits coinbase bytes around the extranonce slot: Stratum's coinb1 and coinb2. */
export function splitCoinbase(bytes: Uint8Array): { coinb1: Uint8Array; coinb2: Uint8Array } {
  return { coinb1: bytes.slice(0, EXTRANONCE_OFFSET), coinb2: bytes.slice(EXTRANONCE_OFFSET + EXTRANONCE_SIZE) };
}

/** Bitcoin's merkle root: pairwise SHA-256d, the last node duplicated on odd levels. */
export function merkleRoot(leaves: readonly Uint8Array[]): Uint8Array {
  if (leaves.length === 0) return new Uint8Array(32);
  let level = leaves.slice();
  while (level.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i < level.length; i += 2) {
      const right = level[i + 1] ?? level[i];
      next.push(sha256d(concatBytes(level[i], right)));
    }
    level = next;
  }
  return level[0];
}

/** The merkle branch of leaf 0 (the coinbase): what Stratum sends as `merkle_branch`. */
export function coinbaseMerkleBranch(txIds: readonly Uint8Array[]): Uint8Array[] {
  // Leaves are [coinbase, ...txIds]; the branch is the sibling of the running leaf-0 node at each level.
  const branch: Uint8Array[] = [];
  let level: Uint8Array[] = [new Uint8Array(32), ...txIds];
  while (level.length > 1) {
    branch.push(level[1] ?? level[0]);
    const next: Uint8Array[] = [new Uint8Array(32)];
    for (let i = 2; i < level.length; i += 2) next.push(sha256d(concatBytes(level[i], level[i + 1] ?? level[i])));
    level = next;
  }
  return branch;
}

/** Canonical block bytes. */
export function encodeBlock(b: Block, encodedTxs?: readonly Uint8Array[]): Uint8Array {
  const cb = encodeCoinbase(b.coinbase);
  const txBytes = encodedTxs ?? b.txs.map(encodeTx);
  let size = HEADER_SIZE + cb.length + 16;
  for (const t of txBytes) size += t.length + 4;
  const w = new Writer(size).raw(encodeHeader(b.header)).bytes(cb).varint(txBytes.length);
  for (const t of txBytes) w.bytes(t);
  return w.finish();
}

/** A decoded block together with each transaction's exact bytes (views into the block's bytes; for ids and sizes). */
export interface DecodedBlock {
  readonly block: Block;
  readonly txBytes: readonly Uint8Array[];
}

/** Decodes a block strictly; each transaction must consume exactly its length-prefixed bytes. */
export function decodeBlock(bytes: Uint8Array): DecodedBlock {
  return decodeAll(bytes, (r) => {
    const header = readHeader(r);
    const coinbase = decodeCoinbase(r.bytes(256, 'coinbase'));
    const n = r.varnum(MAX_BLOCK_DECODE_TXS, 'tx count');
    const txs: Tx[] = [];
    const txBytes: Uint8Array[] = [];
    for (let i = 0; i < n; i++) {
      // A view: readTx copies every field it keeps.
      const raw = r.bytes(MAX_TX_DECODE_BYTES, 'tx');
      txs.push(decodeAll(raw, readTx));
      txBytes.push(raw);
    }
    return { block: { header, coinbase, txs }, txBytes };
  });
}
