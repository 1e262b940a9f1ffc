/** Assembling an unmined block from a parent, transactions and the parent's state; and a tiny header grinder. */
import { COINBASE_VERSION, EXTRANONCE_SIZE, blockHash, coinbaseId, encodeCoinbase, merkleRoot, type Block, type BlockHeader } from './block.js';
import { checkProofOfWork } from './pow.js';
import { blockSubsidy, splitFees } from './reward.js';
import { decodeSupply, SUPPLY_KEY, type StateView } from './state.js';
import { txId as computeTxId, encodeTx, type Tx } from './tx.js';
import { nextBits } from './validate.js';
import type { ChainParams } from './params.js';

/** Inputs of `assembleBlock`. */
export interface AssembleOptions {
  readonly parent: { readonly hash: Uint8Array; readonly height: number; readonly time: number };
  /** Median time past at the parent. */
  readonly medianTimePast: number;
  /** Local clock, Unix seconds. */
  readonly now: number;
  /** Transactions in block order, already valid on top of `state`. */
  readonly txs: readonly Tx[];
  readonly txIds?: readonly Uint8Array[];
  /** 20-byte account id paid by the coinbase. */
  readonly miner: Uint8Array;
  /** The parent's state (for the supply figure that caps the subsidy). */
  readonly state: StateView;
  readonly extranonce?: Uint8Array;
  readonly tag?: Uint8Array;
}

/** Builds the block on top of `parent` with nonce 0: coinbase with subsidy and miner fee share, merkle root, ASERT bits, a valid time. */
export function assembleBlock(opts: AssembleOptions, params: ChainParams): Block {
  const height = opts.parent.height + 1;
  const rawSupply = opts.state.get(SUPPLY_KEY);
  const minted = rawSupply ? decodeSupply(rawSupply).minted : 0n;
  const fees = opts.txs.reduce((s, t) => s + t.fee, 0n);
  const coinbase = {
    version: COINBASE_VERSION,
    chainId: params.chainId,
    height,
    miner: opts.miner,
    reward: blockSubsidy(height, minted, params),
    fees: splitFees(fees, params).miner,
    extranonce: opts.extranonce ?? new Uint8Array(EXTRANONCE_SIZE),
    tag: opts.tag ?? new Uint8Array(0),
  };
  const ids = opts.txIds ?? opts.txs.map((t) => computeTxId(encodeTx(t)));
  const header: BlockHeader = {
    version: 1,
    prevHash: opts.parent.hash,
    merkleRoot: merkleRoot([coinbaseId(encodeCoinbase(coinbase)), ...ids]),
    time: Math.max(opts.now, opts.medianTimePast + 1),
    bits: nextBits(opts.parent.height, opts.parent.time, params),
    nonce: 0,
  };
  return { header, coinbase, txs: opts.txs };
}

/** Searches nonces from `start` for at most `maxTries`; returns the solved header or undefined. For trivial difficulties (tests, tools). */
export function grindHeader(h: BlockHeader, powLimit: bigint, maxTries = 0x1_0000_0000, start = 0): BlockHeader | undefined {
  for (let i = 0; i < maxTries && start + i <= 0xffffffff; i++) {
    const cand = { ...h, nonce: start + i };
    if (checkProofOfWork(blockHash(cand), cand.bits, powLimit)) return cand;
  }
  return undefined;
}
