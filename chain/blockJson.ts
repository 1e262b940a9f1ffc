/**
 * The header fields of a stored block as the API and the block-inspect service show them:
 * identity, position on the best chain, and the 80-byte header with its derived difficulty.
 */
import { toHex } from '../consensus/hash.js';
import type { Block } from '../consensus/block.js';
import { difficultyOfBits } from '../consensus/pow.js';
import type { ChainEntry, ChainReader } from './types.js';

/** Header fields of `block` (stored at `entry`) in JSON: hashes in internal order, `bits` as 8 hex digits, chain work in hex. */
export function blockHeaderJson(chain: Pick<ChainReader, 'tip' | 'getEntryByHeight'>, entry: ChainEntry, block: Block) {
  const main = chain.getEntryByHeight(entry.height)?.hashHex === entry.hashHex;
  const h = block.header;
  return {
    hash: entry.hashHex,
    height: entry.height,
    mainChain: main,
    confirmations: main ? Math.max(0, chain.tip.height - entry.height + 1) : 0,
    prevHash: toHex(h.prevHash),
    nextHash: main ? (chain.getEntryByHeight(entry.height + 1)?.hashHex ?? null) : null,
    version: h.version,
    merkleRoot: toHex(h.merkleRoot),
    time: h.time,
    bits: h.bits.toString(16).padStart(8, '0'),
    nonce: h.nonce,
    difficulty: difficultyOfBits(h.bits),
    chainWork: entry.chainWork.toString(16),
    size: entry.size,
    txCount: block.txs.length,
  };
}
