/**
 * The getblocktemplate/submitblock wire (rpc.ts): the BIP 22/23 template object miners read, the
 * decoding of a submitted block (our canonical encoding or Bitcoin's layout), and the BIP 22
 * reason of each chain refusal.
 */
import { encodeAddress } from '../../consensus/address.js';
import { MAX_BLOCK_DECODE_TXS, coinbaseId, decodeBlock, encodeBlock, readCoinbase, readHeader, type Block } from '../../consensus/block.js';
import { Reader } from '../../consensus/codec.js';
import { CodecError, CodecErrorCode } from '../../consensus/errors.js';
import { toHex } from '../../consensus/hash.js';
import { readTx, type Tx } from '../../consensus/tx.js';
import type { BlockTemplate } from '../../chain/template.js';
import type { Logger } from '../../chain/types.js';
import { hex32, reversedHex, targetHex } from './work.js';

/** Shortest coinbase cpuminer accepts in `coinbasetxn`. */
export const MIN_COINBASETXN_BYTES = 60;


/** The getblocktemplate result for `tpl` (BIP 22/23 fields; see rpc.ts for the conventions). */
export function templateJson(tpl: BlockTemplate, o: { readonly longPollId: string; readonly sizeLimit: number; readonly hrp: string; readonly log: Logger }): Record<string, unknown> {
  const h = tpl.block.header;
  const cb = tpl.block.coinbase;
  if (tpl.coinbase.length < MIN_COINBASETXN_BYTES) {
    // Unreachable with the default tag; a shorter one would make cpuminer refuse the template.
    o.log.warn({ bytes: tpl.coinbase.length }, `coinbase shorter than ${MIN_COINBASETXN_BYTES} bytes: lengthen the coinbase tag`);
  }
  const cbId = reversedHex(coinbaseId(tpl.coinbase));
  return {
    capabilities: [],
    version: h.version,
    rules: [],
    vbavailable: {},
    vbrequired: 0,
    previousblockhash: reversedHex(h.prevHash),
    transactions: tpl.txBytes.map((bytes, i) => {
      const txid = reversedHex(tpl.txIds[i]);
      return { data: toHex(bytes), txid, hash: txid, depends: [], fee: Number(tpl.block.txs[i].fee), sigops: 0, weight: bytes.length * 4 };
    }),
    coinbaseaux: {},
    coinbasetxn: { data: toHex(tpl.coinbase), txid: cbId, hash: cbId, depends: [], fee: 0, sigops: 0, required: true },
    coinbasevalue: Number(cb.reward + cb.fees),
    longpollid: o.longPollId,
    target: targetHex(tpl.target),
    mintime: tpl.minTime,
    mutable: ['time'],
    noncerange: '00000000ffffffff',
    sigoplimit: 0,
    sizelimit: o.sizeLimit,
    curtime: h.time,
    bits: hex32(h.bits),
    height: tpl.height,
    payoutaddress: encodeAddress(cb.miner, o.hrp),
  };
}

/** Bitcoin's BIP 22 reason for each chain refusal code. */
const REASONS: Record<string, string> = {
  block_high_hash: 'high-hash',
  block_bad_prev: 'bad-prevblk',
  block_bad_bits: 'bad-diffbits',
  block_bad_version: 'bad-version',
  block_time_too_old: 'time-too-old',
  block_time_too_new: 'time-too-new',
  block_bad_merkle_root: 'bad-txnmrklroot',
  block_too_large: 'bad-blk-length',
  block_too_many_txs: 'bad-blk-length',
  block_duplicate_tx: 'bad-txns-duplicate',
  block_bad_coinbase: 'bad-cb',
  block_bad_tx: 'bad-txns',
  block_known_invalid: 'duplicate-invalid',
};

/** The BIP 22 reason string of a chain refusal. */
export function submitReason(code: string): string {
  return REASONS[code] ?? (code.startsWith('tx_') ? 'bad-txns' : 'rejected');
}

/** Reads Bitcoin's CompactSize integer. */
function readCompactSize(r: Reader): number {
  const first = r.u8();
  if (first < 0xfd) return first;
  const width = first === 0xfd ? 2 : first === 0xfe ? 4 : 8;
  const b = r.raw(width);
  let v = 0;
  for (let i = width - 1; i >= 0; i--) v = v * 256 + b[i];
  const min = first === 0xfd ? 0xfd : first === 0xfe ? 0x10000 : 0x100000000;
  if (v < min) throw new CodecError(CodecErrorCode.NON_CANONICAL_INT, 'non-canonical CompactSize');
  return v;
}

/**
 * Decodes a submitted block: our canonical encoding, or Bitcoin's layout (`header ‖
 * CompactSize(1 + n) ‖ coinbase ‖ transactions`, each record self-delimiting). Returns the block
 * and its canonical bytes; throws the canonical decoder's error when neither fits.
 */
export function decodeSubmittedBlock(bytes: Uint8Array): { block: Block; bytes: Uint8Array } {
  try {
    return { block: decodeBlock(bytes).block, bytes };
  } catch (canonicalError) {
    try {
      const r = new Reader(bytes);
      const header = readHeader(r);
      const count = readCompactSize(r);
      if (count < 1 || count > MAX_BLOCK_DECODE_TXS + 1) throw new CodecError(CodecErrorCode.OVERSIZED, `transaction count ${count}`);
      const coinbase = readCoinbase(r);
      const txs: Tx[] = [];
      const txBytes: Uint8Array[] = [];
      for (let i = 1; i < count; i++) {
        const start = r.offset;
        txs.push(readTx(r));
        txBytes.push(bytes.slice(start, r.offset));
      }
      r.end();
      const block: Block = { header, coinbase, txs };
      return { block, bytes: encodeBlock(block, txBytes) };
    } catch {
      throw canonicalError;
    }
  }
}
