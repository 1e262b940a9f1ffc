/**
 * `pool_add`: deposit into an existing pool at its current ratio (Uniswap v2's optimal pair:
 * never more than desired of either asset) for shares min(a·S/rA, b·S/rB), rounded down.
 * Payload: assetX ‖ assetY ‖ varint desiredX ‖ varint desiredY ‖ varint minShares.
 */
import { Writer, decodeAll } from '../codec.js';
import { EconomyErrorCode } from '../errors.js';
import { addLiquidityAmounts } from '../amm.js';
import { poolId, setPool } from '../economyState.js';
import { checkedAdd, debit } from '../ledger.js';
import { TxType } from '../tx.js';
import { readSymbol, refuse, requireMovable, requirePositive, writeSymbol } from './economyRules.js';
import { liquidityKeys, lpBalance, requirePool, setLpBalance, validatePair } from './poolRules.js';
import type { TxTypeModule } from './types.js';

/** Payload of a pool_add. */
export interface PoolAddPayload {
  readonly assetX: string;
  readonly assetY: string;
  readonly desiredX: bigint;
  readonly desiredY: bigint;
  /** Fewest LP shares accepted (`pool_slippage` below). */
  readonly minShares: bigint;
}

/** The pool_add type module. */
export const poolAdd: TxTypeModule<PoolAddPayload> = {
  type: TxType.pool_add,
  name: 'pool_add',
  encodePayload(p) {
    return writeSymbol(writeSymbol(new Writer(56), p.assetX), p.assetY).varint(p.desiredX).varint(p.desiredY).varint(p.minShares).finish();
  },
  decodePayload(bytes) {
    return decodeAll(bytes, (r) => ({ assetX: readSymbol(r), assetY: readSymbol(r), desiredX: r.varint(), desiredY: r.varint(), minShares: r.varint() }));
  },
  validatePayload(p) {
    validatePair(p.assetX, p.assetY);
    requirePositive(p.desiredX, `${p.assetX} amount`);
    requirePositive(p.desiredY, `${p.assetY} amount`);
  },
  apply(state, tx, p, ctx) {
    const pool = requirePool(state, p.assetX, p.assetY);
    requireMovable(state, p.assetX);
    requireMovable(state, p.assetY);
    const id = poolId(p.assetX, p.assetY);
    const xIsA = pool.a === p.assetX;
    const { amountA, amountB, shares } = addLiquidityAmounts(xIsA ? p.desiredX : p.desiredY, xIsA ? p.desiredY : p.desiredX, pool.reserveA, pool.reserveB, pool.lpSupply);
    if (shares === 0n || amountA === 0n || amountB === 0n) throw refuse(EconomyErrorCode.INSUFFICIENT_LIQUIDITY, 'deposit too small for one LP share');
    if (shares < p.minShares) throw refuse(EconomyErrorCode.LIQUIDITY_SLIPPAGE, `deposit gives ${shares} LP shares, below the minimum ${p.minShares}`, { shares: shares.toString() });
    debit(state, tx.from, pool.a, amountA, `${pool.a} deposit`);
    debit(state, tx.from, pool.b, amountB, `${pool.b} deposit`);
    setPool(state, {
      ...pool,
      reserveA: checkedAdd(pool.reserveA, amountA, 'pool reserve'),
      reserveB: checkedAdd(pool.reserveB, amountB, 'pool reserve'),
      lpSupply: checkedAdd(pool.lpSupply, shares, 'LP supply'),
    });
    setLpBalance(state, id, tx.from, lpBalance(state, id, tx.from) + shares);
    ctx.emit?.({ kind: 'liquidity', pool: id, owner: tx.from, add: true, amountA, amountB, shares });
  },
  touchedKeys(tx, p) {
    return liquidityKeys(p.assetX, p.assetY, tx.from);
  },
  amountUnits: (p) => ({ desiredX: { asset: p.assetX }, desiredY: { asset: p.assetY }, minX: { asset: p.assetX }, minY: { asset: p.assetY } }),
  toJson(p) {
    return { pool: poolId(p.assetX, p.assetY), assetX: p.assetX, assetY: p.assetY, desiredX: p.desiredX.toString(), desiredY: p.desiredY.toString(), minShares: p.minShares.toString() };
  },
};
