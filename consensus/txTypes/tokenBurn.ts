/** `token_burn`: destroy units of a token the sender holds. Payload: symbol ‖ varint amount. */
import { Writer, decodeAll } from '../codec.js';
import { setToken } from '../economyState.js';
import { debit } from '../ledger.js';
import { TxType } from '../tx.js';
import { assetKeys, readSymbol, requirePositive, requireToken, validateSymbol, writeSymbol } from './economyRules.js';
import type { TxTypeModule } from './types.js';

/** Payload of a token_burn. */
export interface TokenBurnPayload {
  readonly symbol: string;
  /** Smallest units, > 0. */
  readonly amount: bigint;
}

/** The token_burn type module. */
export const tokenBurn: TxTypeModule<TokenBurnPayload> = {
  type: TxType.token_burn,
  name: 'token_burn',
  encodePayload(p) {
    return writeSymbol(new Writer(24), p.symbol).varint(p.amount).finish();
  },
  decodePayload(bytes) {
    return decodeAll(bytes, (r) => ({ symbol: readSymbol(r), amount: r.varint() }));
  },
  validatePayload(p) {
    validateSymbol(p.symbol);
    requirePositive(p.amount, 'burn amount');
  },
  apply(state, tx, p, ctx) {
    requireToken(state, p.symbol);
    debit(state, tx.from, p.symbol, p.amount, 'burn amount');
    // Read after the debit: it may have changed the holder count.
    const t = requireToken(state, p.symbol);
    setToken(state, p.symbol, { ...t, supply: t.supply - p.amount, burned: t.burned + p.amount });
    ctx.emit?.({ kind: 'token', symbol: p.symbol, action: 'burn', account: tx.from, amount: p.amount, native: 0n });
  },
  touchedKeys(tx, p) {
    return assetKeys(p.symbol, tx.from);
  },
  toJson(p) {
    return { symbol: p.symbol, amount: p.amount.toString() };
  },
};
