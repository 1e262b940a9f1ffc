/**
 * The node's wire protocols: identifiers, message codecs and limits.
 *
 * Every identifier carries the network tag (`<net>` = the first 8 bytes of the genesis block
 * hash, in hex), so nodes of different chains (two devnets, a devnet and mainnet) never mix:
 *
 *   /native/<net>/sync/1.0.0   request/response sync (below), one request per stream
 *   /native/<net>/tx/1         gossip topic: one signed transaction, its canonical bytes
 *   /native/<net>/block/1      gossip topic: one block, its canonical bytes
 *   /native/<net>/kad/1.0.0    the node network's own Kademlia DHT (peer discovery)
 *   /native/<net>/mempool/1.0.0  mempool exchange: announce and fetch pending transactions (`mempoolProtocol.ts`)
 *
 * Sync frames are unsigned-varint length-prefixed. The requester writes one request frame; the
 * responder answers with frames and closes its side. All integers use the consensus codec
 * (`consensus/codec.ts`: LEB128 varints, little-endian u32); hashes are 32 bytes in internal
 * byte order (as `blockHash` returns them).
 *
 *   request  0x01 STATUS                                   → 0x81 STATUS
 *   request  0x02 GET_HEADERS varint n ‖ n×hash ‖ stop ‖ varint max
 *                                                          → 0x82 HEADERS varint n ‖ n×80-byte header
 *   request  0x03 GET_BLOCKS  varint n ‖ n×hash            → per hash, in order: 0x83 BLOCK ‖ block bytes
 *                                                            or 0x84 NOT_FOUND ‖ hash; the responder
 *                                                            may stop early (byte budget)
 *   response 0x81 STATUS u32 chainId ‖ genesis(32) ‖ varint height ‖ tip(32) ‖ bytes chainWork (big-endian)
 *
 * GET_HEADERS follows Bitcoin's locator rule: the responder finds the first locator hash on its
 * best chain and returns up to `max` headers after it (stopping after `stop` if it is reached;
 * all-zero `stop` means none); with no match it starts after genesis.
 */
import { HEADER_SIZE, decodeHeader, encodeHeader, type BlockHeader } from '../consensus/block.js';
import { Uint8ArrayList } from 'uint8arraylist';
import { Reader, Writer, decodeAll } from '../consensus/codec.js';
import { CodecError, CodecErrorCode } from '../consensus/errors.js';
import { toHex } from '../consensus/hash.js';
import { MEMPOOL_PROTOCOL_VERSION } from './mempoolProtocol.js';

/** Protocol version suffix of the sync protocol. */
export const SYNC_PROTOCOL_VERSION = '1.0.0';
/** Most locator hashes in one GET_HEADERS. */
export const MAX_LOCATOR_HASHES = 64;
/** Most headers in one HEADERS answer (160 kB). */
export const MAX_HEADERS = 2000;
/** Most hashes in one GET_BLOCKS. */
export const MAX_BLOCKS_PER_REQUEST = 128;
/** Largest request frame, bytes (a full GET_BLOCKS is 4.1 kB). */
export const MAX_REQUEST_BYTES = 8 * 1024;
/** Bytes of blocks a responder sends for one GET_BLOCKS before it stops early (the requester buffers up to this plus one block). */
export const BLOCK_RESPONSE_BUDGET = 8 * 1024 * 1024;

/** Message type bytes. */
export const MsgType = {
  STATUS: 0x01,
  GET_HEADERS: 0x02,
  GET_BLOCKS: 0x03,
  STATUS_REPLY: 0x81,
  HEADERS: 0x82,
  BLOCK: 0x83,
  NOT_FOUND: 0x84,
} as const;

/** The protocol identifiers of one network. */
export interface ProtocolIds {
  /** `<net>`: hex of the first 8 bytes of the genesis hash. */
  readonly net: string;
  readonly sync: string;
  readonly txTopic: string;
  readonly blockTopic: string;
  readonly kad: string;
  /** The mempool exchange (`mempoolProtocol.ts`); a peer without it is not asked. */
  readonly mempool: string;
}

/** Protocol identifiers for the chain whose genesis hash is `genesisHash`. */
export function protocolIds(genesisHash: Uint8Array): ProtocolIds {
  const net = toHex(genesisHash.subarray(0, 8));
  return {
    net,
    sync: `/native/${net}/sync/${SYNC_PROTOCOL_VERSION}`,
    txTopic: `/native/${net}/tx/1`,
    blockTopic: `/native/${net}/block/1`,
    kad: `/native/${net}/kad/1.0.0`,
    mempool: `/native/${net}/mempool/${MEMPOOL_PROTOCOL_VERSION}`,
  };
}

/** Largest sync response frame for a chain whose blocks are at most `maxBlockBytes`. */
export function maxResponseFrame(maxBlockBytes: number): number {
  return Math.max(maxBlockBytes + 1, 1 + 10 + MAX_HEADERS * HEADER_SIZE);
}

/** A peer's view of its chain (STATUS reply). */
export interface PeerStatus {
  readonly chainId: number;
  readonly genesis: Uint8Array;
  readonly height: number;
  readonly tip: Uint8Array;
  readonly chainWork: bigint;
}

/** A decoded sync request. */
export type SyncRequest =
  | { readonly type: 'status' }
  | { readonly type: 'getHeaders'; readonly locator: readonly Uint8Array[]; readonly stop: Uint8Array; readonly max: number }
  | { readonly type: 'getBlocks'; readonly hashes: readonly Uint8Array[] };

/** One frame of a GET_BLOCKS answer. */
export type BlockFrame = { readonly type: 'block'; readonly bytes: Uint8Array } | { readonly type: 'notFound'; readonly hash: Uint8Array };

const ZERO_HASH = new Uint8Array(32);

function badValue(message: string): CodecError {
  return new CodecError(CodecErrorCode.BAD_VALUE, message);
}

/** Encodes a sync request frame. */
export function encodeRequest(req: SyncRequest): Uint8Array {
  switch (req.type) {
    case 'status':
      return Uint8Array.of(MsgType.STATUS);
    case 'getHeaders': {
      if (req.locator.length < 1 || req.locator.length > MAX_LOCATOR_HASHES) throw badValue(`locator of ${req.locator.length} hashes`);
      const w = new Writer(64 + req.locator.length * 32).u8(MsgType.GET_HEADERS).varint(req.locator.length);
      for (const h of req.locator) w.raw(h32(h));
      return w.raw(h32(req.stop)).varint(req.max).finish();
    }
    case 'getBlocks': {
      if (req.hashes.length < 1 || req.hashes.length > MAX_BLOCKS_PER_REQUEST) throw badValue(`GET_BLOCKS of ${req.hashes.length} hashes`);
      const w = new Writer(8 + req.hashes.length * 32).u8(MsgType.GET_BLOCKS).varint(req.hashes.length);
      for (const h of req.hashes) w.raw(h32(h));
      return w.finish();
    }
  }
}

function h32(h: Uint8Array): Uint8Array {
  if (h.length !== 32) throw badValue(`hash of ${h.length} bytes`);
  return h;
}

/** Decodes a sync request frame strictly; throws CodecError for anything malformed or out of limits. */
export function decodeRequest(frame: Uint8Array): SyncRequest {
  if (frame.length > MAX_REQUEST_BYTES) throw new CodecError(CodecErrorCode.OVERSIZED, `request of ${frame.length} bytes`);
  return decodeAll(frame, (r) => {
    const type = r.u8();
    switch (type) {
      case MsgType.STATUS:
        return { type: 'status' };
      case MsgType.GET_HEADERS: {
        const n = r.varnum(MAX_LOCATOR_HASHES, 'locator');
        if (n === 0) throw badValue('empty locator');
        const locator: Uint8Array[] = [];
        for (let i = 0; i < n; i++) locator.push(r.raw(32).slice());
        const stop = r.raw(32).slice();
        const max = r.varnum(MAX_HEADERS, 'max headers');
        if (max === 0) throw badValue('max headers 0');
        return { type: 'getHeaders', locator, stop, max };
      }
      case MsgType.GET_BLOCKS: {
        const n = r.varnum(MAX_BLOCKS_PER_REQUEST, 'block count');
        if (n === 0) throw badValue('empty GET_BLOCKS');
        const hashes: Uint8Array[] = [];
        for (let i = 0; i < n; i++) hashes.push(r.raw(32).slice());
        return { type: 'getBlocks', hashes };
      }
      default:
        throw badValue(`unknown request type 0x${type.toString(16)}`);
    }
  });
}

/** Whether a GET_HEADERS stop hash means "no stop". */
export function isZeroHash(h: Uint8Array): boolean {
  return h.every((b) => b === 0);
}

/** The all-zero hash (no stop). */
export function zeroHash(): Uint8Array {
  return ZERO_HASH.slice();
}

/** Encodes a STATUS reply. */
export function encodeStatus(s: PeerStatus): Uint8Array {
  return new Writer(128).u8(MsgType.STATUS_REPLY).u32(s.chainId).raw(h32(s.genesis)).varint(s.height).raw(h32(s.tip)).bytes(bigIntToBytes(s.chainWork)).finish();
}

/** Decodes a STATUS reply. */
export function decodeStatus(frame: Uint8Array): PeerStatus {
  return decodeAll(frame, (r) => {
    expectType(r, MsgType.STATUS_REPLY);
    const chainId = r.u32();
    const genesis = r.raw(32).slice();
    const height = r.varnum(0xffffffff, 'height');
    const tip = r.raw(32).slice();
    const work = r.bytes(32, 'chain work');
    if (work.length > 0 && work[0] === 0) throw new CodecError(CodecErrorCode.NON_CANONICAL_INT, 'chain work has a leading zero byte');
    return { chainId, genesis, height, tip, chainWork: bytesToBigInt(work) };
  });
}

/** Encodes a HEADERS reply. */
export function encodeHeaders(headers: readonly BlockHeader[]): Uint8Array {
  if (headers.length > MAX_HEADERS) throw badValue(`${headers.length} headers`);
  const w = new Writer(8 + headers.length * HEADER_SIZE).u8(MsgType.HEADERS).varint(headers.length);
  for (const h of headers) w.raw(encodeHeader(h));
  return w.finish();
}

/** Decodes a HEADERS reply (at most `max` headers). */
export function decodeHeaders(frame: Uint8Array, max = MAX_HEADERS): BlockHeader[] {
  return decodeAll(frame, (r) => {
    expectType(r, MsgType.HEADERS);
    const n = r.varnum(max, 'header count');
    const out: BlockHeader[] = [];
    for (let i = 0; i < n; i++) out.push(decodeHeader(r.raw(HEADER_SIZE)));
    return out;
  });
}

/**
 * Encodes a BLOCK frame around block bytes, as a list of the type byte and the block: a served
 * block (megabytes) is written as it was read, not copied into a frame of its own first.
 */
export function encodeBlockFrame(bytes: Uint8Array): Uint8ArrayList {
  return new Uint8ArrayList(BLOCK_FRAME_TYPE, bytes);
}

const BLOCK_FRAME_TYPE = Uint8Array.of(MsgType.BLOCK);

/** Encodes a NOT_FOUND frame. */
export function encodeNotFound(hash: Uint8Array): Uint8Array {
  return new Writer(33).u8(MsgType.NOT_FOUND).raw(h32(hash)).finish();
}

/** Decodes a GET_BLOCKS answer frame (the block bytes are a view into `frame`). */
export function decodeBlockFrame(frame: Uint8Array): BlockFrame {
  if (frame.length === 0) throw new CodecError(CodecErrorCode.TRUNCATED, 'empty frame');
  if (frame[0] === MsgType.BLOCK) {
    if (frame.length < 1 + HEADER_SIZE) throw new CodecError(CodecErrorCode.TRUNCATED, 'block frame shorter than a header');
    return { type: 'block', bytes: frame.subarray(1) };
  }
  return decodeAll(frame, (r) => {
    expectType(r, MsgType.NOT_FOUND);
    return { type: 'notFound', hash: r.raw(32).slice() };
  });
}

function expectType(r: Reader, type: number): void {
  const t = r.u8();
  if (t !== type) throw badValue(`message type 0x${t.toString(16)}, expected 0x${type.toString(16)}`);
}

/** Big-endian minimal bytes of a non-negative bigint (0 → empty). */
export function bigIntToBytes(v: bigint): Uint8Array {
  if (v < 0n) throw badValue('negative chain work');
  let hex = v === 0n ? '' : v.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  if (hex.length > 64) throw badValue('chain work above 256 bits');
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

function bytesToBigInt(b: Uint8Array): bigint {
  return b.length === 0 ? 0n : BigInt(`0x${Buffer.from(b).toString('hex')}`);
}
