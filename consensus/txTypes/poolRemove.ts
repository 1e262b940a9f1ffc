/**
 * `pool_remove`: burn LP shares for the pro-rata reserves, each rounded down. Allowed while a
 * token is frozen (an LP can always leave). Payload: assetX ‖ assetY ‖ varint shares ‖
 * varint minX ‖ varint minY.
 */
import { Writer, decodeAll } from '../codec.js';
import { EconomyErrorCode } from '../errors.js';
import { removeLiquidityAmounts } from '../amm.js';
import { poolId, setPool } from '../economyState.js';
import { credit } from '../ledger.js';
import { TxType } from '../tx.js';
import { readSymbol, refuse, requirePositive, writeSymbol } from './economyRules.js';
import { liquidityKeys, lpBalance, requirePool, setLpBalance, validatePair } from './poolRules.js';
import type { TxTypeModule } from './types.js';

/** Payload of a pool_remove. */
export interface PoolRemovePayload {
  readonly assetX: string;
  readonly assetY: string;
  readonly shares: bigint;
  /** Least of each asset accepted (`pool_slippage` below). */
  readonly minX: bigint;
  readonly minY: bigint;
}

/** The pool_remove type module. */
export const poolRemove: TxTypeModule<PoolRemovePayload> = {
  type: TxType.pool_remove,
  name: 'pool_remove',
  encodePayload(p) {
    return writeSymbol(writeSymbol(new Writer(56), p.assetX), p.assetY).varint(p.shares).varint(p.minX).varint(p.minY).finish();
  },
  decodePayload(bytes) {
    return decodeAll(bytes, (r) => ({ assetX: readSymbol(r), assetY: readSymbol(r), shares: r.varint(), minX: r.varint(), minY: r.varint() }));
  },
  validatePayload(p) {
    validatePair(p.assetX, p.assetY);
    requirePositive(p.shares, 'LP shares');
  },
  apply(state, tx, p, ctx) {
    const pool = requirePool(state, p.assetX, p.assetY);
    const id = poolId(p.assetX, p.assetY);
    const held = lpBalance(state, id, tx.from);
    if (held < p.shares) throw refuse(EconomyErrorCode.INSUFFICIENT_SHARES, `removing ${p.shares} LP shares of ${id}, only ${held} held`, { held: held.toString() });
    const { amountA, amountB } = removeLiquidityAmounts(p.shares, pool.reserveA, pool.reserveB, pool.lpSupply);
    if (amountA === 0n || amountB === 0n) throw refuse(EconomyErrorCode.INSUFFICIENT_LIQUIDITY, 'too few shares to withdraw a unit of each asset');
    const xIsA = pool.a === p.assetX;
    if ((xIsA ? amountA : amountB) < p.minX || (xIsA ? amountB : amountA) < p.minY) {
      throw refuse(EconomyErrorCode.LIQUIDITY_SLIPPAGE, `withdrawal gives ${amountA} ${pool.a} and ${amountB} ${pool.b}, below the minimums`);
    }
    setPool(state, { ...pool, reserveA: pool.reserveA - amountA, reserveB: pool.reserveB - amountB, lpSupply: pool.lpSupply - p.shares });
    setLpBalance(state, id, tx.from, held - p.shares);
    credit(state, tx.from, pool.a, amountA);
    credit(state, tx.from, pool.b, amountB);
    ctx.emit?.({ kind: 'liquidity', pool: id, owner: tx.from, add: false, amountA, amountB, shares: p.shares });
  },
  touchedKeys(tx, p) {
    return liquidityKeys(p.assetX, p.assetY, tx.from);
  },
  // LP shares have no decimals of their own: they stay a plain integer.
  amountUnits: (p) => ({ minX: { asset: p.assetX }, minY: { asset: p.assetY } }),
  toJson(p) {
    return { pool: poolId(p.assetX, p.assetY), assetX: p.assetX, assetY: p.assetY, shares: p.shares.toString(), minX: p.minX.toString(), minY: p.minY.toString() };
  },
};
