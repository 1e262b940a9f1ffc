/** `transfer`: move `amount` base units from the sender to `to`. Payload: to(20) ‖ varint amount. */
import { Writer, decodeAll } from '../codec.js';
import { TxErrorCode, ValidationError } from '../errors.js';
import { encodeAddress } from '../address.js';
import { ADDRESS_SIZE } from '../keys.js';
import { accountKey } from '../state.js';
import { TxType } from '../tx.js';
import { move, NATIVE } from '../ledger.js';
import type { TxTypeModule } from './types.js';

/** Payload of a transfer. */
export interface TransferPayload {
  /** 20-byte account id of the recipient. */
  readonly to: Uint8Array;
  /** Base units, > 0. */
  readonly amount: bigint;
}

/** The transfer type module. */
export const transfer: TxTypeModule<TransferPayload> = {
  type: TxType.transfer,
  name: 'transfer',
  encodePayload(p) {
    return new Writer(32).raw(p.to).varint(p.amount).finish();
  },
  decodePayload(bytes) {
    return decodeAll(bytes, (r) => ({ to: r.raw(ADDRESS_SIZE).slice(), amount: r.varint() }));
  },
  validatePayload(p) {
    if (p.amount <= 0n) throw new ValidationError(TxErrorCode.BAD_PAYLOAD, 'transfer amount must be positive');
  },
  apply(state, tx, p, ctx) {
    move(state, tx.from, p.to, NATIVE, p.amount);
    ctx.emit?.({ kind: 'transfer', asset: NATIVE, from: tx.from, to: p.to, amount: p.amount });
  },
  touchedKeys(_tx, p) {
    return [accountKey(p.to)];
  },
  toJson(p, params) {
    return { to: encodeAddress(p.to, params.hrp), amount: p.amount.toString() };
  },
};
