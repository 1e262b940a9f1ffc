/**
 * `token_back`: lock NATIVE in a token's reserve (its collateral). Anyone may add to it; it
 * leaves only through `token_redeem`. Payload: symbol ‖ varint amount (NATIVE base units).
 */
import { setToken, tokenKey } from '../economyState.js';
import { checkedAdd, debit, NATIVE } from '../ledger.js';
import { TxType } from '../tx.js';
import { requireToken, type SymbolAmount, symbolAmountPayload } from './economyRules.js';
import type { TxTypeModule } from './types.js';

/** Payload of a token_back. */
export type TokenBackPayload = SymbolAmount;

/** The token_back type module. */
export const tokenBack: TxTypeModule<TokenBackPayload> = {
  type: TxType.token_back,
  name: 'token_back',
  ...symbolAmountPayload('backing amount'),
  apply(state, tx, p, ctx) {
    const t = requireToken(state, p.symbol);
    debit(state, tx.from, NATIVE, p.amount, 'backing amount');
    setToken(state, p.symbol, { ...t, reserve: checkedAdd(t.reserve, p.amount, `reserve of ${p.symbol}`) });
    ctx.emit?.({ kind: 'token', symbol: p.symbol, action: 'back', account: tx.from, amount: 0n, native: p.amount });
  },
  touchedKeys(_tx, p) {
    return [tokenKey(p.symbol)];
  },
};
