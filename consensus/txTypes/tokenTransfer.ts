/** `token_transfer`: move units of a token; refused while the token is frozen. Payload: symbol ‖ to(20) ‖ varint amount. */
import { Writer, decodeAll } from '../codec.js';
import { encodeAddress } from '../address.js';
import { ADDRESS_SIZE } from '../keys.js';
import { move } from '../ledger.js';
import { TxType } from '../tx.js';
import { assetKeys, readSymbol, requireMovable, requirePositive, validateSymbol, writeSymbol } from './economyRules.js';
import type { TxTypeModule } from './types.js';

/** Payload of a token_transfer. */
export interface TokenTransferPayload {
  readonly symbol: string;
  readonly to: Uint8Array;
  /** Smallest units, > 0. */
  readonly amount: bigint;
}

/** The token_transfer type module. */
export const tokenTransfer: TxTypeModule<TokenTransferPayload> = {
  type: TxType.token_transfer,
  name: 'token_transfer',
  encodePayload(p) {
    return writeSymbol(new Writer(48), p.symbol).raw(p.to).varint(p.amount).finish();
  },
  decodePayload(bytes) {
    return decodeAll(bytes, (r) => ({ symbol: readSymbol(r), to: r.raw(ADDRESS_SIZE).slice(), amount: r.varint() }));
  },
  validatePayload(p) {
    validateSymbol(p.symbol);
    requirePositive(p.amount, 'transfer amount');
  },
  apply(state, tx, p, ctx) {
    requireMovable(state, p.symbol);
    move(state, tx.from, p.to, p.symbol, p.amount);
    ctx.emit?.({ kind: 'transfer', asset: p.symbol, from: tx.from, to: p.to, amount: p.amount });
  },
  touchedKeys(tx, p) {
    return assetKeys(p.symbol, tx.from, p.to);
  },
  toJson(p, params) {
    return { symbol: p.symbol, to: encodeAddress(p.to, params.hrp), amount: p.amount.toString() };
  },
};
