/**
 * `token_back`: lock NATIVE in a token's reserve (its collateral). Anyone may add to it; it
 * leaves only through `token_redeem`. Payload: symbol ‖ varint amount (NATIVE base units).
 */
import { Writer, decodeAll } from '../codec.js';
import { setToken, tokenKey } from '../economyState.js';
import { checkedAdd, debit, NATIVE } from '../ledger.js';
import { TxType } from '../tx.js';
import { readSymbol, requirePositive, requireToken, validateSymbol, writeSymbol } from './economyRules.js';
import type { TxTypeModule } from './types.js';

/** Payload of a token_back. */
export interface TokenBackPayload {
  readonly symbol: string;
  /** NATIVE base units, > 0. */
  readonly amount: bigint;
}

/** The token_back type module. */
export const tokenBack: TxTypeModule<TokenBackPayload> = {
  type: TxType.token_back,
  name: 'token_back',
  encodePayload(p) {
    return writeSymbol(new Writer(24), p.symbol).varint(p.amount).finish();
  },
  decodePayload(bytes) {
    return decodeAll(bytes, (r) => ({ symbol: readSymbol(r), amount: r.varint() }));
  },
  validatePayload(p) {
    validateSymbol(p.symbol);
    requirePositive(p.amount, 'backing amount');
  },
  apply(state, tx, p, ctx) {
    const t = requireToken(state, p.symbol);
    debit(state, tx.from, NATIVE, p.amount, 'backing amount');
    setToken(state, p.symbol, { ...t, reserve: checkedAdd(t.reserve, p.amount, `reserve of ${p.symbol}`) });
    ctx.emit?.({ kind: 'token', symbol: p.symbol, action: 'back', account: tx.from, amount: 0n, native: p.amount });
  },
  touchedKeys(_tx, p) {
    return [tokenKey(p.symbol)];
  },
  toJson(p) {
    return { symbol: p.symbol, amount: p.amount.toString() };
  },
};
