/**
 * Block templates: the next block on top of the best tip, assembled from the mempool with the
 * consensus `assembleBlock`, plus everything a miner needs to grind it without re-assembling:
 * the 80-byte header, the coinbase bytes split around its 8-byte extranonce slot (Stratum's
 * coinb1/coinb2) and the coinbase's merkle branch.
 *
 * Rebuilding the header for another extranonce is pure and cheap (Stratum's recipe):
 * `coinbase = coinb1 ‖ extranonce ‖ coinb2`, `root = SHA256d(coinbase)`, then
 * `root = SHA256d(root ‖ branch[i])` for each branch entry.
 */
import { assembleBlock } from '../consensus/assemble.js';
import { selectApplicable, txTouchedKeys } from '../consensus/apply.js';
import {
  EXTRANONCE_SIZE,
  HEADER_SIZE,
  MAX_COINBASE_TAG,
  coinbaseMerkleBranch,
  encodeBlock,
  encodeCoinbase,
  encodeHeader,
  splitCoinbase,
  type Block,
  type BlockHeader,
} from '../consensus/block.js';
import { NodeError } from '../consensus/errors.js';
import { bytesEqual, concatBytes, fromHex, sha256d } from '../consensus/hash.js';
import { ADDRESS_SIZE } from '../consensus/keys.js';
import { bitsToTarget } from '../consensus/pow.js';
import { SUPPLY_KEY, type StateView } from '../consensus/state.js';
import type { ChainParams } from '../consensus/params.js';
import type { ChainEntry, MempoolEntry } from './types.js';

/** Error codes of template building. */
export const TemplateErrorCode = {
  BAD_MINER: 'template_bad_miner',
  BAD_TAG: 'template_bad_tag',
  BAD_EXTRANONCE: 'template_bad_extranonce',
  /** The tip kept moving while the template was being built. */
  TIP_MOVING: 'template_tip_moving',
} as const;
export type TemplateErrorCode = (typeof TemplateErrorCode)[keyof typeof TemplateErrorCode];

/** What template building reads from the chain (the `Chain` implements it). */
export interface TemplateChain {
  readonly tip: ChainEntry;
  medianTimePast(entry: ChainEntry): number;
  /** Snapshot of the given state keys at the current tip. */
  getStateView(keys: string[]): Promise<StateView>;
}

/** What template building reads from the mempool (the `Mempool` implements it). */
export interface TemplateMempool {
  /** Transactions valid on top of the current tip, in a valid block order, within the limits. */
  blockCandidates(maxBytes: number, maxCount: number): readonly MempoolEntry[];
}

/** Options of `createBlockTemplate`. */
export interface TemplateOptions {
  /** 20-byte account id paid by the coinbase. */
  readonly miner: Uint8Array;
  /** Coinbase tag (UTF-8, at most 40 bytes). */
  readonly tag?: string;
  /** Clock in Unix seconds (the same clock the chain validates against). */
  readonly now?: () => number;
  /** Take transactions from the mempool (default true); false gives a coinbase-only block. */
  readonly includeTxs?: boolean;
}

/** The next block to mine and what miners (internal, Stratum, getblocktemplate) need to grind it. */
export interface BlockTemplate {
  /** The assembled block: nonce 0, extranonce all zeros. */
  readonly block: Block;
  /** Hash hex of the parent (the tip when the template was built). */
  readonly parentHash: string;
  /** Height of the block being mined. */
  readonly height: number;
  /** Compact target of the block. */
  readonly bits: number;
  /** Target decoded from `bits`: a header hash (little-endian integer) must be ≤ it. */
  readonly target: bigint;
  /** `encodeHeader(block.header)`: 80 bytes. */
  readonly header: Uint8Array;
  /** Coinbase bytes with a zero extranonce. */
  readonly coinbase: Uint8Array;
  /** Coinbase bytes before the extranonce slot (Stratum's coinb1). */
  readonly coinb1: Uint8Array;
  /** Coinbase bytes after the extranonce slot (Stratum's coinb2). */
  readonly coinb2: Uint8Array;
  /** Merkle branch of the coinbase leaf, internal byte order (Stratum's merkle_branch). */
  readonly merkleBranch: readonly Uint8Array[];
  /** Ids of the block's transactions, in block order. */
  readonly txIds: readonly Uint8Array[];
  /** Signed bytes of the block's transactions, in block order. */
  readonly txBytes: readonly Uint8Array[];
  /** Sum of the transactions' fees in base units (before the burn). */
  readonly totalFees: bigint;
  /** Earliest valid block time: median time past + 1, Unix seconds. */
  readonly minTime: number;
  /** Block size as consensus counts it (`validateBlockBody`), bytes. */
  readonly size: number;
  /** Clock reading when built, Unix seconds. */
  readonly createdAt: number;
}

/** Per-transaction overhead consensus adds to a block's size (`validateBlockBody`). */
const TX_SIZE_OVERHEAD = 3;

/** UTF-8 bytes of a coinbase tag; throws `template_bad_tag` when longer than 40 bytes. */
export function encodeCoinbaseTag(tag: string | undefined): Uint8Array {
  const bytes = new TextEncoder().encode(tag ?? '');
  if (bytes.length > MAX_COINBASE_TAG) throw new NodeError(TemplateErrorCode.BAD_TAG, `coinbase tag is ${bytes.length} bytes, limit ${MAX_COINBASE_TAG}`);
  return bytes;
}

/**
 * Builds the next block on top of the chain's tip: subsidy and miner fee share, the mempool's
 * block candidates (within `maxBlockBytes` less the header and coinbase, and `maxBlockTxs`),
 * ASERT bits and time = max(now, MTP + 1). The tip is read before and after the state snapshot,
 * so the parent, the state and the candidates belong to the same tip.
 */
export async function createBlockTemplate(chain: TemplateChain, mempool: TemplateMempool, params: ChainParams, opts: TemplateOptions): Promise<BlockTemplate> {
  if (opts.miner.length !== ADDRESS_SIZE) throw new NodeError(TemplateErrorCode.BAD_MINER, `miner must be a ${ADDRESS_SIZE}-byte account id`);
  const tag = encodeCoinbaseTag(opts.tag);
  const now = opts.now ?? (() => Math.floor(Date.now() / 1000));
  for (let attempt = 0; attempt < 5; attempt++) {
    const tip = chain.tip;
    const picked = opts.includeTxs === false ? [] : candidates(mempool, params, tag.length);
    const state = await chain.getStateView([SUPPLY_KEY, ...picked.flatMap((e) => txTouchedKeys(e.tx))]);
    // A block connected while we read the state: start over so the state matches the parent.
    if (chain.tip.hashHex !== tip.hashHex) continue;
    // Transactions of different senders can invalidate each other (pools, symbols): keep those that apply.
    const kept = selectApplicable(state, picked.map((e) => e.tx), picked.map((e) => fromHex(e.id)), tip.height + 1, params);
    const entries = kept.length === picked.length ? picked : kept.map((i) => picked[i]);
    return buildTemplate(tip, chain.medianTimePast(tip), state, entries, params, {
      miner: opts.miner,
      tag,
      now: now(),
    });
  }
  throw new NodeError(TemplateErrorCode.TIP_MOVING, 'the tip changed during every attempt to build a template');
}

/** The mempool's candidates, trimmed (defensively) so the block respects the consensus size rule. */
function candidates(mempool: TemplateMempool, params: ChainParams, tagLength: number): readonly MempoolEntry[] {
  const coinbaseSize = 54 + tagLength;
  const { maxBlockBytes, maxBlockTxs } = params.limits;
  // Header, coinbase, tx count, and the per-transaction overhead consensus counts.
  const reserve = HEADER_SIZE + coinbaseSize + 1 + TX_SIZE_OVERHEAD * maxBlockTxs;
  const entries = mempool.blockCandidates(Math.max(0, maxBlockBytes - reserve), maxBlockTxs);
  let size = HEADER_SIZE + coinbaseSize + 1;
  let n = 0;
  // The candidates are in a valid order, so any prefix is valid too.
  while (n < entries.length && n < maxBlockTxs && size + entries[n].bytes.length + TX_SIZE_OVERHEAD <= maxBlockBytes) {
    size += entries[n].bytes.length + TX_SIZE_OVERHEAD;
    n++;
  }
  return n === entries.length ? entries : entries.slice(0, n);
}

/** Pure part of `createBlockTemplate`: assembles the block on `tip` and derives the mining data. */
export function buildTemplate(
  tip: ChainEntry,
  medianTimePast: number,
  state: StateView,
  entries: readonly MempoolEntry[],
  params: ChainParams,
  opts: { miner: Uint8Array; tag: Uint8Array; now: number },
): BlockTemplate {
  const txIds = entries.map((e) => fromHex(e.id));
  const txBytes = entries.map((e) => e.bytes);
  const block = assembleBlock(
    {
      parent: { hash: tip.hash, height: tip.height, time: tip.header.time },
      medianTimePast,
      now: opts.now,
      txs: entries.map((e) => e.tx),
      txIds,
      miner: opts.miner,
      state,
      tag: opts.tag,
    },
    params,
  );
  const coinbase = encodeCoinbase(block.coinbase);
  const { coinb1, coinb2 } = splitCoinbase(coinbase);
  let size = HEADER_SIZE + coinbase.length + 1;
  for (const t of txBytes) size += t.length + TX_SIZE_OVERHEAD;
  return {
    block,
    parentHash: tip.hashHex,
    height: tip.height + 1,
    bits: block.header.bits,
    target: bitsToTarget(block.header.bits),
    header: encodeHeader(block.header),
    coinbase,
    coinb1,
    coinb2,
    merkleBranch: coinbaseMerkleBranch(txIds),
    txIds,
    txBytes,
    totalFees: entries.reduce((s, e) => s + e.tx.fee, 0n),
    minTime: medianTimePast + 1,
    size,
    createdAt: opts.now,
  };
}

function checkExtranonce(extranonce: Uint8Array): void {
  if (extranonce.length !== EXTRANONCE_SIZE) {
    throw new NodeError(TemplateErrorCode.BAD_EXTRANONCE, `extranonce must be ${EXTRANONCE_SIZE} bytes, got ${extranonce.length}`);
  }
}

/** Coinbase bytes with the given 8-byte extranonce: `coinb1 ‖ extranonce ‖ coinb2`. */
export function coinbaseWithExtranonce(tpl: Pick<BlockTemplate, 'coinb1' | 'coinb2'>, extranonce: Uint8Array): Uint8Array {
  checkExtranonce(extranonce);
  return concatBytes(tpl.coinb1, extranonce, tpl.coinb2);
}

/** Merkle root from the coinbase bytes and its branch: `root = SHA256d(coinbase)`, then `SHA256d(root ‖ b)` per branch entry. */
export function merkleRootFromBranch(coinbase: Uint8Array, branch: readonly Uint8Array[]): Uint8Array {
  let root = sha256d(coinbase);
  for (const b of branch) root = sha256d(concatBytes(root, b));
  return root;
}

/** Where a template is ground: the extranonce, and optionally another time and a nonce. */
export interface WorkPoint {
  /** 8 bytes for the coinbase's extranonce slot. */
  readonly extranonce: Uint8Array;
  /** Block time, Unix seconds (default: the template's). */
  readonly time?: number;
  /** Header nonce (default 0). */
  readonly nonce?: number;
}

/** The header of the template at a work point (pure: hashes only the coinbase and the branch). */
export function templateHeader(tpl: BlockTemplate, at: WorkPoint): BlockHeader {
  const root = merkleRootFromBranch(coinbaseWithExtranonce(tpl, at.extranonce), tpl.merkleBranch);
  return { ...tpl.block.header, merkleRoot: root, time: at.time ?? tpl.block.header.time, nonce: (at.nonce ?? 0) >>> 0 };
}

/** The 80 header bytes of the template at a work point. */
export function templateHeaderBytes(tpl: BlockTemplate, at: WorkPoint): Uint8Array {
  return encodeHeader(templateHeader(tpl, at));
}

/** The full block of the template at a work point (for submission). */
export function templateBlock(tpl: BlockTemplate, at: WorkPoint): Block {
  checkExtranonce(at.extranonce);
  return { header: templateHeader(tpl, at), coinbase: { ...tpl.block.coinbase, extranonce: at.extranonce.slice() }, txs: tpl.block.txs };
}

/** Canonical bytes of the template's block at a work point, reusing the transactions' bytes. */
export function encodeTemplateBlock(tpl: BlockTemplate, at: WorkPoint): Uint8Array {
  return encodeBlock(templateBlock(tpl, at), tpl.txBytes);
}

/** Whether two templates build on the same parent with the same transactions (a refresh that changes nothing but time). */
export function sameTemplateWork(a: BlockTemplate, b: BlockTemplate): boolean {
  return a.parentHash === b.parentHash && a.txIds.length === b.txIds.length && a.txIds.every((id, i) => bytesEqual(id, b.txIds[i]));
}

/**
 * The template paying another account: the same block with `miner` in the coinbase. Only the
 * coinbase (Stratum's coinb1) changes; the merkle branch and the transactions are shared.
 */
export function templateForMiner(tpl: BlockTemplate, miner: Uint8Array): BlockTemplate {
  const coinbase = { ...tpl.block.coinbase, miner: miner.slice() };
  const bytes = encodeCoinbase(coinbase);
  const { coinb1, coinb2 } = splitCoinbase(bytes);
  const derived: BlockTemplate = { ...tpl, block: { ...tpl.block, coinbase }, coinbase: bytes, coinb1, coinb2 };
  const header = templateHeaderBytes(derived, { extranonce: coinbase.extranonce });
  return { ...derived, header, block: { ...derived.block, header: { ...derived.block.header, merkleRoot: header.slice(36, 68) } } };
}
