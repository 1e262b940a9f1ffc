/**
 * `swap`: trade `amountIn` of `path[0]` through the pools of consecutive path assets (1–3 hops)
 * for at least `minOut` of the last asset, valid up to block `expiryHeight`. Each hop pays
 * out ⌊in·(10000−fee)·rOut / (rIn·10000 + in·(10000−fee))⌋ (consensus/amm.ts); the fee stays
 * in the pool, so k = rA·rB never decreases. Refused while any token of the path is frozen.
 * Payload: u8 hops+1 ‖ symbols ‖ varint amountIn ‖ varint minOut ‖ varint expiryHeight.
 */
import { Writer, decodeAll } from '../codec.js';
import { CodecError, CodecErrorCode, EconomyErrorCode, TxErrorCode } from '../errors.js';
import { getAmountOut, swapFee } from '../amm.js';
import { poolId, poolKey, setPool, type PoolRecord } from '../economyState.js';
import { checkedAdd, credit, debit } from '../ledger.js';
import { TxType } from '../tx.js';
import { assetKeys, readSymbol, refuse, reject, requireMovable, requirePositive, validateAsset, writeSymbol } from './economyRules.js';
import { requirePool } from './poolRules.js';
import type { TxTypeModule } from './types.js';

/** Most assets in a swap path (three hops). */
export const MAX_SWAP_PATH = 4;

/** Payload of a swap. */
export interface SwapPayload {
  /** Assets from the one paid to the one received, 2–4, consecutive ones different. */
  readonly path: readonly string[];
  readonly amountIn: bigint;
  /** Least of the last asset accepted (`swap_slippage` below). */
  readonly minOut: bigint;
  /** Last block height at which the swap may be mined (`swap_expired` after). */
  readonly expiryHeight: number;
}

/** One hop's result. */
export interface SwapHop {
  readonly pool: PoolRecord;
  readonly assetIn: string;
  readonly assetOut: string;
  readonly amountIn: bigint;
  readonly amountOut: bigint;
  readonly fee: bigint;
  /** The pool after the hop. */
  readonly after: PoolRecord;
}

/** Runs a path over the pools in `state` without writing (also the reference for quotes). */
export function simulateSwap(pools: (x: string, y: string) => PoolRecord, path: readonly string[], amountIn: bigint, feeBps: number): SwapHop[] {
  const hops: SwapHop[] = [];
  let amount = amountIn;
  const seen = new Map<string, PoolRecord>();
  for (let i = 0; i + 1 < path.length; i++) {
    const [x, y] = [path[i], path[i + 1]];
    const id = poolId(x, y);
    const pool = seen.get(id) ?? pools(x, y);
    const xIsA = pool.a === x;
    const [rIn, rOut] = xIsA ? [pool.reserveA, pool.reserveB] : [pool.reserveB, pool.reserveA];
    const out = getAmountOut(amount, rIn, rOut, feeBps);
    if (out === 0n || out >= rOut) throw refuse(EconomyErrorCode.INSUFFICIENT_LIQUIDITY, `pool ${id} cannot pay out for ${amount} ${x}`);
    const newIn = checkedAdd(rIn, amount, `reserve of ${id}`);
    const after = xIsA ? { ...pool, reserveA: newIn, reserveB: rOut - out } : { ...pool, reserveA: rOut - out, reserveB: newIn };
    hops.push({ pool, assetIn: x, assetOut: y, amountIn: amount, amountOut: out, fee: swapFee(amount, feeBps), after });
    seen.set(id, after);
    amount = out;
  }
  return hops;
}

/** The swap type module. */
export const swap: TxTypeModule<SwapPayload> = {
  type: TxType.swap,
  name: 'swap',
  encodePayload(p) {
    const w = new Writer(64).u8(p.path.length);
    for (const s of p.path) writeSymbol(w, s);
    return w.varint(p.amountIn).varint(p.minOut).varint(p.expiryHeight).finish();
  },
  decodePayload(bytes) {
    return decodeAll(bytes, (r) => {
      const n = r.u8();
      if (n > 16) throw new CodecError(CodecErrorCode.OVERSIZED, `swap path of ${n} assets`, r.offset);
      const path: string[] = [];
      for (let i = 0; i < n; i++) path.push(readSymbol(r));
      return { path, amountIn: r.varint(), minOut: r.varint(), expiryHeight: r.varnum(2 ** 32 - 1, 'expiry height') };
    });
  },
  validatePayload(p) {
    if (p.path.length < 2 || p.path.length > MAX_SWAP_PATH) throw reject(EconomyErrorCode.BAD_PATH, `a swap path has 2-${MAX_SWAP_PATH} assets, got ${p.path.length}`);
    p.path.forEach(validateAsset);
    for (let i = 0; i + 1 < p.path.length; i++) {
      if (p.path[i] === p.path[i + 1]) throw reject(EconomyErrorCode.IDENTICAL_ASSETS, `swap hop ${i} trades ${p.path[i]} for itself`);
    }
    requirePositive(p.amountIn, 'swap amount');
    if (p.expiryHeight === 0) throw reject(TxErrorCode.BAD_PAYLOAD, 'a swap needs an expiry height');
  },
  apply(state, tx, p, ctx) {
    if (ctx.height > p.expiryHeight) throw refuse(EconomyErrorCode.EXPIRED, `swap expired at height ${p.expiryHeight}, block is ${ctx.height}`);
    p.path.forEach((a) => requireMovable(state, a));
    const hops = simulateSwap((x, y) => requirePool(state, x, y), p.path, p.amountIn, ctx.params.economy.swapFeeBps);
    const out = hops[hops.length - 1].amountOut;
    if (out < p.minOut) throw refuse(EconomyErrorCode.SLIPPAGE, `swap pays ${out} ${p.path[p.path.length - 1]}, below minOut ${p.minOut}`, { amountOut: out.toString() });
    debit(state, tx.from, p.path[0], p.amountIn, 'swap amount');
    for (const h of hops) {
      setPool(state, h.after);
      ctx.emit?.({
        kind: 'swap',
        pool: `${h.after.a}-${h.after.b}`,
        sender: tx.from,
        assetIn: h.assetIn,
        assetOut: h.assetOut,
        amountIn: h.amountIn,
        amountOut: h.amountOut,
        fee: h.fee,
        reserveA: h.after.reserveA,
        reserveB: h.after.reserveB,
      });
    }
    credit(state, tx.from, p.path[p.path.length - 1], out);
  },
  touchedKeys(tx, p) {
    const keys = p.path.flatMap((a) => assetKeys(a, tx.from));
    for (let i = 0; i + 1 < p.path.length; i++) keys.push(poolKey(poolId(p.path[i], p.path[i + 1])));
    return keys;
  },
  amountUnits: (p) => ({ amountIn: { asset: p.path[0] }, minOut: { asset: p.path[p.path.length - 1] } }),
  toJson(p) {
    return { path: [...p.path], amountIn: p.amountIn.toString(), minOut: p.minOut.toString(), expiryHeight: p.expiryHeight };
  },
};

