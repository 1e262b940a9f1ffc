/**
 * `refund`: a provider returns an invoke's payment. Valid only when sent by the invoke's `payTo`,
 * for exactly its amount, back to its sender, and once per invoke (the invoke record keeps a
 * refunded flag). Payload: invokeId(32) ‖ to(20) ‖ varint amount — `to` and `amount` repeat
 * what the invoke record holds, so the transaction says what it does and the keys it touches
 * are known before reading state.
 */
import { Writer, decodeAll } from '../codec.js';
import { TxErrorCode, ValidationError } from '../errors.js';
import { encodeAddress } from '../address.js';
import { bytesEqual, toHex } from '../hash.js';
import { ADDRESS_SIZE } from '../keys.js';
import { accountKey } from '../state.js';
import { TxType } from '../tx.js';
import { move, NATIVE } from '../ledger.js';
import { encodeInvokeRecord, getInvoke, invokeKey } from './agentInvoke.js';
import type { TxTypeModule } from './types.js';

/** Payload of a refund. */
export interface RefundPayload {
  /** Tx id of the agent_invoke being refunded. */
  readonly invokeId: Uint8Array;
  /** The invoke's sender. */
  readonly to: Uint8Array;
  /** The invoke's amount, base units. */
  readonly amount: bigint;
}

/** The refund type module. */
export const refund: TxTypeModule<RefundPayload> = {
  type: TxType.refund,
  name: 'refund',
  encodePayload(p) {
    return new Writer(64).raw(p.invokeId).raw(p.to).varint(p.amount).finish();
  },
  decodePayload(bytes) {
    return decodeAll(bytes, (r) => ({ invokeId: r.raw(32).slice(), to: r.raw(ADDRESS_SIZE).slice(), amount: r.varint() }));
  },
  validatePayload(p) {
    if (p.amount <= 0n) throw new ValidationError(TxErrorCode.BAD_PAYLOAD, 'refund amount must be positive');
  },
  apply(state, tx, p) {
    const inv = getInvoke(state, p.invokeId);
    if (!inv) throw new ValidationError(TxErrorCode.INVOKE_NOT_FOUND, `no agent_invoke ${toHex(p.invokeId)} on this chain`, { action: 'ignore' });
    if (!bytesEqual(inv.payTo, tx.from)) throw new ValidationError(TxErrorCode.REFUND_NOT_PAYEE, 'only the invoke\'s payTo can refund it');
    if (!bytesEqual(inv.sender, p.to) || inv.amount !== p.amount) {
      throw new ValidationError(TxErrorCode.REFUND_MISMATCH, 'a refund returns exactly the invoke\'s amount to its sender');
    }
    if (inv.refunded) throw new ValidationError(TxErrorCode.ALREADY_REFUNDED, `invoke ${toHex(p.invokeId)} was already refunded`, { action: 'ignore' });
    move(state, tx.from, p.to, NATIVE, p.amount, 'refund');
    state.set(invokeKey(p.invokeId), encodeInvokeRecord({ ...inv, refunded: true }));
  },
  touchedKeys(_tx, p) {
    return [invokeKey(p.invokeId), accountKey(p.to)];
  },
  toJson(p, params) {
    return { invokeId: toHex(p.invokeId), to: encodeAddress(p.to, params.hrp), amount: p.amount.toString() };
  },
};
