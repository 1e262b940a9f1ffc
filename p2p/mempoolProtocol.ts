/**
 * The mempool exchange protocol, `/native/<net>/mempool/1.0.0`: codecs and limits.
 *
 * As the sync protocol (`protocol.ts`): one request per stream, frames unsigned-varint
 * length-prefixed, integers in the consensus codec, ids 32 bytes (`txId`, internal order).
 *
 *   request 0x01 ANNOUNCE varint n ‖ n×txid      no answer: "I hold these ready transactions"
 *                                                (the receiver fetches those it lacks)
 *   request 0x02 GET_TXS  varint n ‖ n×txid      → per id, in order: 0x81 TX ‖ tx bytes or
 *                                                  0x82 NOT_FOUND ‖ txid; the responder may stop
 *                                                  early (byte budget), the rest is asked again
 *
 * An ANNOUNCE carries at most `MAX_INVENTORY` ids (geth's eth/68 announces at most 4,096 hashes
 * in one NewPooledTransactionHashes), a GET_TXS at most `MAX_TXS_PER_REQUEST` (geth's
 * GetPooledTransactions: 256). Anything beyond is malformed: a CodecError with a stable code.
 */
import { Uint8ArrayList } from 'uint8arraylist';
import { Writer, decodeAll } from '../consensus/codec.js';
import { CodecError, CodecErrorCode } from '../consensus/errors.js';

/** Protocol version suffix of the mempool exchange (peers without it are not asked). */
export const MEMPOOL_PROTOCOL_VERSION = '1.0.0';
/** Most transaction ids in one ANNOUNCE. */
export const MAX_INVENTORY = 4096;
/** Most transaction ids in one GET_TXS. */
export const MAX_TXS_PER_REQUEST = 256;
/** Largest request frame, bytes (a full ANNOUNCE is 131,075 bytes). */
export const MAX_MEMPOOL_REQUEST_BYTES = 1 + 3 + MAX_INVENTORY * 32;
/** Bytes of transactions a responder sends for one GET_TXS before it stops early. */
export const TX_RESPONSE_BUDGET = 2 * 1024 * 1024;

/** Message type bytes of the mempool exchange. */
export const MempoolMsgType = {
  ANNOUNCE: 0x01,
  GET_TXS: 0x02,
  TX: 0x81,
  NOT_FOUND: 0x82,
} as const;

/** A decoded mempool exchange request. */
export type MempoolRequest = { readonly type: 'announce'; readonly ids: readonly Uint8Array[] } | { readonly type: 'getTxs'; readonly ids: readonly Uint8Array[] };

/** One frame of a GET_TXS answer. */
export type TxFrame = { readonly type: 'tx'; readonly bytes: Uint8Array } | { readonly type: 'notFound'; readonly id: Uint8Array };

function badValue(message: string): CodecError {
  return new CodecError(CodecErrorCode.BAD_VALUE, message);
}

function limitOf(type: MempoolRequest['type']): number {
  return type === 'announce' ? MAX_INVENTORY : MAX_TXS_PER_REQUEST;
}

/** Encodes a request frame; throws CodecError (`codec_oversized`, `codec_bad_value`) beyond the limits. */
export function encodeMempoolRequest(req: MempoolRequest): Uint8Array {
  const max = limitOf(req.type);
  if (req.ids.length > max) throw new CodecError(CodecErrorCode.OVERSIZED, `${req.type} of ${req.ids.length} ids, limit ${max}`);
  if (req.type === 'getTxs' && req.ids.length === 0) throw badValue('empty GET_TXS');
  const w = new Writer(4 + req.ids.length * 32).u8(req.type === 'announce' ? MempoolMsgType.ANNOUNCE : MempoolMsgType.GET_TXS).varint(req.ids.length);
  for (const id of req.ids) {
    if (id.length !== 32) throw badValue(`tx id of ${id.length} bytes`);
    w.raw(id);
  }
  return w.finish();
}

/** Decodes a request frame strictly; throws CodecError for anything malformed or out of limits. */
export function decodeMempoolRequest(frame: Uint8Array): MempoolRequest {
  if (frame.length > MAX_MEMPOOL_REQUEST_BYTES) throw new CodecError(CodecErrorCode.OVERSIZED, `request of ${frame.length} bytes`);
  return decodeAll(frame, (r) => {
    const t = r.u8();
    const type = t === MempoolMsgType.ANNOUNCE ? 'announce' : t === MempoolMsgType.GET_TXS ? 'getTxs' : undefined;
    if (!type) throw badValue(`unknown request type 0x${t.toString(16)}`);
    const n = r.varnum(limitOf(type), type === 'announce' ? 'inventory' : 'GET_TXS count');
    if (type === 'getTxs' && n === 0) throw badValue('empty GET_TXS');
    const ids: Uint8Array[] = [];
    for (let i = 0; i < n; i++) ids.push(r.raw(32).slice());
    return { type, ids };
  });
}

const TX_FRAME_TYPE = Uint8Array.of(MempoolMsgType.TX);

/** Encodes a TX answer frame (the bytes are not copied). */
export function encodeTxFrame(bytes: Uint8Array): Uint8ArrayList {
  return new Uint8ArrayList(TX_FRAME_TYPE, bytes);
}

/** Encodes a NOT_FOUND answer frame. */
export function encodeTxNotFound(id: Uint8Array): Uint8Array {
  if (id.length !== 32) throw badValue(`tx id of ${id.length} bytes`);
  return new Writer(33).u8(MempoolMsgType.NOT_FOUND).raw(id).finish();
}

/** Decodes a GET_TXS answer frame (the tx bytes are a view into `frame`). */
export function decodeTxFrame(frame: Uint8Array): TxFrame {
  if (frame.length === 0) throw new CodecError(CodecErrorCode.TRUNCATED, 'empty frame');
  if (frame[0] === MempoolMsgType.TX) {
    if (frame.length < 2) throw new CodecError(CodecErrorCode.TRUNCATED, 'empty tx frame');
    return { type: 'tx', bytes: frame.subarray(1) };
  }
  return decodeAll(frame, (r) => {
    const t = r.u8();
    if (t !== MempoolMsgType.NOT_FOUND) throw badValue(`message type 0x${t.toString(16)}, expected 0x${MempoolMsgType.NOT_FOUND.toString(16)}`);
    return { type: 'notFound', id: r.raw(32).slice() };
  });
}
