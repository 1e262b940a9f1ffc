/**
 * `pool_create`: open the constant-product pool of two assets with its first deposit. The
 * creator receives √(x·y) − minLiquidity LP shares; `minLiquidity` shares are locked forever
 * (Uniswap v2), so the pool can never be emptied. Payload: assetX ‖ assetY ‖ varint amountX ‖
 * varint amountY (either order; the pool keeps its assets sorted).
 */
import { Writer, decodeAll } from '../codec.js';
import { EconomyErrorCode } from '../errors.js';
import { initialShares } from '../amm.js';
import { getPool, poolId, setPool } from '../economyState.js';
import { debit } from '../ledger.js';
import { TxType } from '../tx.js';
import { readSymbol, refuse, requireMovable, requirePositive, writeSymbol } from './economyRules.js';
import { liquidityKeys, setLpBalance, validatePair } from './poolRules.js';
import type { TxTypeModule } from './types.js';

/** Payload of a pool_create. */
export interface PoolCreatePayload {
  readonly assetX: string;
  readonly assetY: string;
  readonly amountX: bigint;
  readonly amountY: bigint;
}

/** The pool_create type module. */
export const poolCreate: TxTypeModule<PoolCreatePayload> = {
  type: TxType.pool_create,
  name: 'pool_create',
  encodePayload(p) {
    return writeSymbol(writeSymbol(new Writer(48), p.assetX), p.assetY).varint(p.amountX).varint(p.amountY).finish();
  },
  decodePayload(bytes) {
    return decodeAll(bytes, (r) => ({ assetX: readSymbol(r), assetY: readSymbol(r), amountX: r.varint(), amountY: r.varint() }));
  },
  validatePayload(p) {
    validatePair(p.assetX, p.assetY);
    requirePositive(p.amountX, `${p.assetX} amount`);
    requirePositive(p.amountY, `${p.assetY} amount`);
  },
  apply(state, tx, p, ctx) {
    const id = poolId(p.assetX, p.assetY);
    if (getPool(state, id)) throw refuse(EconomyErrorCode.POOL_EXISTS, `pool ${id} exists: add liquidity to it`, { pool: id });
    requireMovable(state, p.assetX);
    requireMovable(state, p.assetY);
    const shares = initialShares(p.amountX, p.amountY);
    const locked = ctx.params.economy.minLiquidity;
    if (shares <= locked) throw refuse(EconomyErrorCode.INSUFFICIENT_LIQUIDITY, `first deposit gives ${shares} LP shares; more than the ${locked} locked are needed`);
    debit(state, tx.from, p.assetX, p.amountX, `${p.assetX} deposit`);
    debit(state, tx.from, p.assetY, p.amountY, `${p.assetY} deposit`);
    const xIsA = p.assetX < p.assetY;
    const [a, b] = xIsA ? [p.assetX, p.assetY] : [p.assetY, p.assetX];
    const [ra, rb] = xIsA ? [p.amountX, p.amountY] : [p.amountY, p.amountX];
    setPool(state, { a, b, reserveA: ra, reserveB: rb, lpSupply: shares, creator: tx.from, createdHeight: ctx.height });
    setLpBalance(state, id, tx.from, shares - locked);
    ctx.emit?.({ kind: 'liquidity', pool: id, owner: tx.from, add: true, amountA: ra, amountB: rb, shares: shares - locked });
  },
  touchedKeys(tx, p) {
    return liquidityKeys(p.assetX, p.assetY, tx.from);
  },
  amountUnits: (p) => ({ amountX: { asset: p.assetX }, amountY: { asset: p.assetY } }),
  toJson(p) {
    return { pool: poolId(p.assetX, p.assetY), assetX: p.assetX, assetY: p.assetY, amountX: p.amountX.toString(), amountY: p.amountY.toString() };
  },
};
