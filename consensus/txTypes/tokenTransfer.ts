/** `token_transfer`: move units of a token; refused while the token is frozen. Payload: symbol ‖ to(20) ‖ varint amount. */
import { move } from '../ledger.js';
import { TxType } from '../tx.js';
import { assetKeys, requireMovable, type SymbolToAmount, symbolToAmountPayload } from './economyRules.js';
import type { TxTypeModule } from './types.js';

/** Payload of a token_transfer. */
export type TokenTransferPayload = SymbolToAmount;

/** The token_transfer type module. */
export const tokenTransfer: TxTypeModule<TokenTransferPayload> = {
  type: TxType.token_transfer,
  name: 'token_transfer',
  ...symbolToAmountPayload('transfer amount'),
  amountUnits: (p) => ({ amount: { asset: p.symbol } }),
  apply(state, tx, p, ctx) {
    requireMovable(state, p.symbol);
    move(state, tx.from, p.to, p.symbol, p.amount);
    ctx.emit?.({ kind: 'transfer', asset: p.symbol, from: tx.from, to: p.to, amount: p.amount });
  },
  touchedKeys(tx, p) {
    return assetKeys(p.symbol, tx.from, p.to);
  },
};
