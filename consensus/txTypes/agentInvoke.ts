/**
 * `agent_invoke`: pay a service. Moves `amount` from the sender to `payTo` and records the
 * invoke under its tx id, so a later `refund` can be checked and applied at most once.
 * Payload: bytes serviceId ‖ payTo(20) ‖ varint amount ‖ u8 hasRequestHash [‖ requestHash(32)].
 */
import { Reader, Writer, decodeAll } from '../codec.js';
import { CodecError, CodecErrorCode, TxErrorCode, ValidationError } from '../errors.js';
import { encodeAddress } from '../address.js';
import { toHex } from '../hash.js';
import { ADDRESS_SIZE } from '../keys.js';
import { accountKey } from '../state.js';
import { TxType } from '../tx.js';
import { move, NATIVE } from '../ledger.js';
import type { StateOverlay } from '../state.js';
import type { TxTypeModule } from './types.js';

/** Longest service id. */
export const MAX_SERVICE_ID = 64;
const SERVICE_ID_RE = /^[a-z0-9][a-z0-9-]*$/;

/** Payload of an agent_invoke. */
export interface AgentInvokePayload {
  readonly serviceId: string;
  /** 20-byte account id of the provider. */
  readonly payTo: Uint8Array;
  /** Exact quoted price, base units, > 0. */
  readonly amount: bigint;
  /** sha256 of the request string, binding the payment to one request. */
  readonly requestHash?: Uint8Array;
}

/** What consensus remembers of an invoke (for refunds). */
export interface InvokeRecord {
  readonly sender: Uint8Array;
  readonly payTo: Uint8Array;
  readonly amount: bigint;
  readonly refunded: boolean;
}

/** State key of an invoke record. */
export function invokeKey(txId: Uint8Array): string {
  return `i${toHex(txId)}`;
}

/** Canonical bytes of an invoke record. */
export function encodeInvokeRecord(r: InvokeRecord): Uint8Array {
  return new Writer(56).raw(r.sender).raw(r.payTo).varint(r.amount).u8(r.refunded ? 1 : 0).finish();
}

/** Decodes an invoke record. */
export function decodeInvokeRecord(bytes: Uint8Array): InvokeRecord {
  return decodeAll(bytes, (r: Reader) => {
    const sender = r.raw(ADDRESS_SIZE).slice();
    const payTo = r.raw(ADDRESS_SIZE).slice();
    const amount = r.varint();
    const flag = r.u8();
    if (flag > 1) throw new CodecError(CodecErrorCode.BAD_VALUE, 'bad refunded flag', r.offset - 1);
    return { sender, payTo, amount, refunded: flag === 1 };
  });
}

/** Reads an invoke record from state. */
export function getInvoke(state: StateOverlay, txId: Uint8Array): InvokeRecord | undefined {
  const raw = state.get(invokeKey(txId));
  return raw ? decodeInvokeRecord(raw) : undefined;
}

/** The agent_invoke type module. */
export const agentInvoke: TxTypeModule<AgentInvokePayload> = {
  type: TxType.agent_invoke,
  name: 'agent_invoke',
  encodePayload(p) {
    const w = new Writer(96).bytes(new TextEncoder().encode(p.serviceId)).raw(p.payTo).varint(p.amount);
    if (p.requestHash) w.u8(1).raw(p.requestHash);
    else w.u8(0);
    return w.finish();
  },
  decodePayload(bytes) {
    return decodeAll(bytes, (r) => {
      const idBytes = r.bytes(MAX_SERVICE_ID, 'service id');
      const serviceId = new TextDecoder('utf-8', { fatal: true }).decode(idBytes);
      const payTo = r.raw(ADDRESS_SIZE).slice();
      const amount = r.varint();
      const flag = r.u8();
      if (flag > 1) throw new CodecError(CodecErrorCode.BAD_VALUE, 'bad request-hash flag', r.offset - 1);
      const p: AgentInvokePayload = { serviceId, payTo, amount };
      return flag ? { ...p, requestHash: r.raw(32).slice() } : p;
    });
  },
  validatePayload(p) {
    if (!SERVICE_ID_RE.test(p.serviceId)) throw new ValidationError(TxErrorCode.BAD_PAYLOAD, `bad service id "${p.serviceId}"`);
    if (p.amount <= 0n) throw new ValidationError(TxErrorCode.BAD_PAYLOAD, 'invoke amount must be positive');
  },
  apply(state, tx, p, ctx) {
    move(state, tx.from, p.payTo, NATIVE, p.amount);
    state.set(invokeKey(ctx.txId), encodeInvokeRecord({ sender: tx.from, payTo: p.payTo, amount: p.amount, refunded: false }));
  },
  touchedKeys(tx, p) {
    return [accountKey(p.payTo)];
  },
  toJson(p, params) {
    const out: Record<string, unknown> = { serviceId: p.serviceId, payTo: encodeAddress(p.payTo, params.hrp), amount: p.amount.toString() };
    if (p.requestHash) out.requestHash = toHex(p.requestHash);
    return out;
  },
};
