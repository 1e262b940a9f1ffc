/**
 * State transition: `applyTx` and `applyBlock(view, block, params) → { changes, undo }`.
 * Pure: reads a StateView, returns the key writes and the writes that undo them. Signatures are
 * checked separately (see `validate.ts`), because they are verified off-thread in a pool.
 */
import { BlockErrorCode, ValidationError, isNodeError } from './errors.js';
import { StateOverlay, type StateChanges, type StateView, accountKey, SUPPLY_KEY } from './state.js';
import { encodeTx, txId as computeTxId, type Tx } from './tx.js';
import { getTxType } from './txTypes/index.js';
import { chargeEnvelope } from './ledger.js';
import { toHex } from './hash.js';
import type { BlockEvent, EconomyEvent } from './events.js';
import { blockSubsidy, splitFees } from './reward.js';
import type { Block } from './block.js';
import type { ChainParams } from './params.js';

/** Result of applying a block. */
export interface BlockApplication {
  /** Key writes that take the state from the parent to this block. */
  readonly changes: StateChanges;
  /** Key writes that take the state back to the parent. */
  readonly undo: StateChanges;
  /** Sum of transaction fees, base units. */
  readonly fees: bigint;
  /** Burned part of the fees. */
  readonly burned: bigint;
  /** Subsidy minted by this block. */
  readonly subsidy: bigint;
  /** What the economy's transactions did (for the chain's indexes). */
  readonly events: BlockEvent[];
}

/**
 * Applies one transaction to an overlay: nonce, key publication, fee, then the type's effect.
 * Assumes the envelope and payload passed `validateTx` and the signatures were verified.
 */
export function applyTx(state: StateOverlay, tx: Tx, id: Uint8Array, height: number, params: ChainParams, emit?: (e: EconomyEvent) => void): void {
  const mod = getTxType(tx.type);
  const payload = mod.decodePayload(tx.payload);
  chargeEnvelope(state, tx);
  mod.apply(state, tx, payload, emit ? { params, height, txId: id, emit } : { params, height, txId: id });
}

/** State keys a transaction touches (sender, type-specific keys): what the chain prefetches. */
export function txTouchedKeys(tx: Tx): string[] {
  const mod = getTxType(tx.type);
  return [accountKey(tx.from), ...mod.touchedKeys(tx, mod.decodePayload(tx.payload))];
}

/** State keys a block touches besides its transactions'. */
export function blockTouchedKeys(block: Block): string[] {
  return [SUPPLY_KEY, accountKey(block.coinbase.miner), ...block.txs.flatMap(txTouchedKeys)];
}

/**
 * Applies a block on top of `view` (the parent's state): every transaction in order, then the
 * coinbase (subsidy from the schedule under the max-supply cap, miner share of fees), the burn,
 * and the supply figures. Throws ValidationError naming the failing rule.
 */
export function applyBlock(view: StateView, block: Block, params: ChainParams, txIds?: readonly Uint8Array[]): BlockApplication {
  const state = new StateOverlay(view);
  const height = block.coinbase.height;
  let fees = 0n;
  const events: BlockEvent[] = [];
  block.txs.forEach((tx, i) => {
    try {
      applyTx(state, tx, txIds?.[i] ?? computeTxId(encodeTx(tx)), height, params, (e) => events.push({ ...e, txIndex: i }));
    } catch (e) {
      if (isNodeError(e)) {
        throw new ValidationError(BlockErrorCode.BAD_TX, `tx ${i}: ${e.message}`, { payload: { index: i, txCode: e.code } });
      }
      throw e;
    }
    fees += tx.fee;
  });
  const supply = state.getSupply();
  const subsidy = blockSubsidy(height, supply.minted, params);
  const { burned, miner } = splitFees(fees, params);
  if (block.coinbase.reward !== subsidy) {
    throw new ValidationError(BlockErrorCode.BAD_COINBASE, `coinbase reward ${block.coinbase.reward}, expected ${subsidy}`);
  }
  if (block.coinbase.fees !== miner) {
    throw new ValidationError(BlockErrorCode.BAD_COINBASE, `coinbase fees ${block.coinbase.fees}, expected ${miner}`);
  }
  const minerAcc = state.getAccount(block.coinbase.miner);
  if (subsidy + miner > 0n) state.setAccount(block.coinbase.miner, { ...minerAcc, balance: minerAcc.balance + subsidy + miner });
  state.setSupply({ minted: supply.minted + subsidy, burned: supply.burned + burned });
  return { changes: state.changes(), undo: state.undo(), fees, burned, subsidy, events };
}

/**
 * Picks, in order, the transactions that apply on top of `view` at `height`, each on the state
 * the earlier picks left; a transaction that fails is skipped with every later nonce of its
 * sender. Block templates use it: with pools and symbols, one sender's transaction can make
 * another's fail (a swap's minOut, a taken symbol), which the mempool's per-sender check cannot
 * see. Returns the indexes kept.
 */
export function selectApplicable(view: StateView, txs: readonly Tx[], txIds: readonly Uint8Array[], height: number, params: ChainParams): number[] {
  const state = new StateOverlay(view);
  const blocked = new Set<string>();
  const kept: number[] = [];
  txs.forEach((tx, i) => {
    const sender = toHex(tx.from);
    if (blocked.has(sender)) return;
    const trial = new StateOverlay(state);
    try {
      applyTx(trial, tx, txIds[i], height, params);
    } catch (e) {
      if (!isNodeError(e)) throw e;
      blocked.add(sender);
      return;
    }
    for (const [k, v] of trial.changes()) state.set(k, v);
    kept.push(i);
  });
  return kept;
}

/** Writes a set of changes into a mutable map-backed state (helper for in-memory states). */
export function writeChanges(target: Map<string, Uint8Array>, changes: StateChanges): void {
  for (const [k, v] of changes) {
    if (v === null) target.delete(k);
    else target.set(k, v);
  }
}
