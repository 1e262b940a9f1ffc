/**
 * Figures the chain-reading services share: exact transaction sizes, per-block fee and burn
 * facts, the transaction-type mix, recent blocks, the hashrate estimate and running totals.
 * Reads only through `ChainReader`; no writes.
 */
import type { Block } from '../consensus/block.js';
import { ED25519_PUBLIC_KEY_SIZE, ED25519_SIGNATURE_SIZE, MLDSA_PUBLIC_KEY_SIZE, MLDSA_SIGNATURE_SIZE } from '../consensus/keys.js';
import type { ChainParams } from '../consensus/params.js';
import { splitFees } from '../consensus/reward.js';
import type { Tx } from '../consensus/tx.js';
import type { ChainEntry, ChainReader } from '../chain/types.js';
import { txTypeName } from './format.js';


function varintLength(v: bigint | number): number {
  let x = BigInt(v);
  let n = 1;
  while (x >= 0x80n) {
    x >>= 7n;
    n++;
  }
  return n;
}

/** Signed size of a transaction in bytes, computed from its fields (equals `encodeTx(tx).length`). */
export function txSize(tx: Tx): number {
  // version, chainId, type, from, nonce, fee, payload (length-prefixed), key flag, optional key, signatures.
  return (
    1 + 4 + 1 + 20 + varintLength(tx.nonce) + varintLength(tx.fee) + varintLength(tx.payload.length) + tx.payload.length + 1 +
    (tx.publicKey ? MLDSA_PUBLIC_KEY_SIZE + ED25519_PUBLIC_KEY_SIZE : 0) + MLDSA_SIGNATURE_SIZE + ED25519_SIGNATURE_SIZE
  );
}

/** Count and fees of one transaction type. */
export interface TypeMix {
  count: number;
  fees: bigint;
}

/** What a block did to fees and supply. */
export interface BlockFacts {
  readonly entry: ChainEntry;
  readonly block: Block;
  /** Sum of the transactions' fees, base units. */
  readonly fees: bigint;
  /** Part of `fees` destroyed by the burn. */
  readonly burned: bigint;
  /** Part of `fees` paid to the miner (equals `coinbase.fees` in a valid block). */
  readonly minerFees: bigint;
  /** Block subsidy minted. */
  readonly subsidy: bigint;
  /** Signed bytes of the transactions (coinbase and header excluded). */
  readonly txBytes: number;
  /** By type name. */
  readonly mix: Map<string, TypeMix>;
}

/** Adds `txs` to a type mix. */
export function addToMix(mix: Map<string, TypeMix>, txs: readonly Tx[]): Map<string, TypeMix> {
  for (const tx of txs) {
    const name = txTypeName(tx.type);
    const m = mix.get(name) ?? { count: 0, fees: 0n };
    m.count++;
    m.fees += tx.fee;
    mix.set(name, m);
  }
  return mix;
}

/** Fees, burn, subsidy, bytes and type mix of a block. */
export function blockFacts(entry: ChainEntry, block: Block, params: ChainParams): BlockFacts {
  let fees = 0n;
  let txBytes = 0;
  for (const tx of block.txs) {
    fees += tx.fee;
    txBytes += txSize(tx);
  }
  const split = splitFees(fees, params);
  return { entry, block, fees, burned: split.burned, minerFees: split.miner, subsidy: block.coinbase.reward, txBytes, mix: addToMix(new Map(), block.txs) };
}

/** The last `count` blocks of the best chain, newest first (fewer near genesis). */
export async function recentBlocks(chain: ChainReader, count: number, params: ChainParams): Promise<BlockFacts[]> {
  const tip = chain.tip;
  const out: BlockFacts[] = [];
  for (let h = tip.height; h >= 0 && out.length < count; h--) {
    const entry = h === tip.height ? tip : chain.getEntryByHeight(h);
    if (!entry) break;
    const block = await chain.getBlock(entry.hashHex);
    if (!block) break;
    out.push(blockFacts(entry, block, params));
  }
  return out;
}


/** Running totals of the best chain. */
export interface ChainTotals {
  /** Blocks including genesis. */
  readonly blocks: number;
  /** Transactions, coinbases excluded. */
  readonly transactions: number;
  /** Serialized block bytes. */
  readonly bytes: number;
}

interface TotalsCache extends ChainTotals {
  readonly height: number;
  readonly hashHex: string;
}

const totalsCache = new WeakMap<ChainReader, TotalsCache>();

/**
 * Totals over the best chain from the in-memory index (no block reads). Cached per chain and
 * extended from the last counted block; recounted from genesis after a reorganisation.
 */
export function chainTotals(chain: ChainReader): ChainTotals {
  const tip = chain.tip;
  let c = totalsCache.get(chain);
  if (c && chain.getEntryByHeight(c.height)?.hashHex !== c.hashHex) c = undefined;
  let transactions = c?.transactions ?? 0;
  let bytes = c?.bytes ?? 0;
  let last = c ? { height: c.height, hashHex: c.hashHex } : undefined;
  for (let h = c ? c.height + 1 : 0; h <= tip.height; h++) {
    const e = h === tip.height ? tip : chain.getEntryByHeight(h);
    if (!e) break;
    transactions += e.txCount;
    bytes += e.size;
    last = { height: e.height, hashHex: e.hashHex };
  }
  if (!last) return { blocks: 0, transactions: 0, bytes: 0 };
  const next: TotalsCache = { blocks: last.height + 1, transactions, bytes, ...last };
  totalsCache.set(chain, next);
  return { blocks: next.blocks, transactions, bytes };
}

/** JSON of a type mix: `{ [type]: { count, share, fees, feesBase } }`, largest first. */
export function mixJson(mix: Map<string, TypeMix>, formatFees: (b: bigint) => Record<string, string>): Record<string, unknown> {
  const total = [...mix.values()].reduce((s, m) => s + m.count, 0);
  const out: Record<string, unknown> = {};
  for (const [name, m] of [...mix.entries()].sort((a, b) => b[1].count - a[1].count || a[0].localeCompare(b[0]))) {
    out[name] = { count: m.count, share: total ? m.count / total : 0, ...formatFees(m.fees) };
  }
  return out;
}

