/** `token_burn`: destroy units of a token the sender holds. Payload: symbol ‖ varint amount. */
import { setToken } from '../economyState.js';
import { debit } from '../ledger.js';
import { TxType } from '../tx.js';
import { assetKeys, requireToken, type SymbolAmount, symbolAmountPayload } from './economyRules.js';
import type { TxTypeModule } from './types.js';

/** Payload of a token_burn. */
export type TokenBurnPayload = SymbolAmount;

/** The token_burn type module. */
export const tokenBurn: TxTypeModule<TokenBurnPayload> = {
  type: TxType.token_burn,
  name: 'token_burn',
  ...symbolAmountPayload('burn amount'),
  amountUnits: (p) => ({ amount: { asset: p.symbol } }),
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
};
