/**
 * `provider_payout` (10): the node pays a provider agent its share of one paid call. Valid only
 * when sent by the invoke's `payTo` (the node's payee, which holds the payment in escrow), for at
 * most the invoke's amount, while the invoke is not refunded, and once per invoke (the payout
 * marker `O<invoke id>`); a refund of a paid-out invoke is refused too (refund.ts). So a
 * provider is paid at most once per job and never for a refunded call, whatever the node
 * re-sends after a crash or a reorg.
 *
 * Payload: invokeId(32) ‖ to(20) ‖ varint amount.
 */
import { Writer, decodeAll } from '../codec.js';
import { TxErrorCode, ValidationError } from '../errors.js';
import { encodeAddress } from '../address.js';
import { bytesEqual, toHex } from '../hash.js';
import { ADDRESS_SIZE } from '../keys.js';
import { move, NATIVE } from '../ledger.js';
import { accountKey } from '../state.js';
import { TxType } from '../tx.js';
import { encodePayout, payoutKey, RegistryErrorCode, registryError } from '../registryState.js';
import { getInvoke, invokeKey } from './agentInvoke.js';
import type { TxTypeModule } from './types.js';

/** Payload of a provider payout. */
export interface ProviderPayoutPayload {
  /** Tx id of the agent_invoke that paid for the job. */
  readonly invokeId: Uint8Array;
  /** The agent's payout account. */
  readonly to: Uint8Array;
  /** Base units, 0 < amount ≤ the invoke's amount (the rest is the node's fee). */
  readonly amount: bigint;
}

/** The provider_payout type module. */
export const providerPayout: TxTypeModule<ProviderPayoutPayload> = {
  type: TxType.provider_payout,
  name: 'provider_payout',
  encodePayload: (p) => new Writer(64).raw(p.invokeId).raw(p.to).varint(p.amount).finish(),
  decodePayload: (bytes) => decodeAll(bytes, (r) => ({ invokeId: r.raw(32).slice(), to: r.raw(ADDRESS_SIZE).slice(), amount: r.varint() })),
  validatePayload(p) {
    if (p.amount <= 0n) throw new ValidationError(TxErrorCode.BAD_PAYLOAD, 'payout amount must be positive');
  },
  apply(state, tx, p) {
    const inv = getInvoke(state, p.invokeId);
    if (!inv) throw new ValidationError(TxErrorCode.INVOKE_NOT_FOUND, `no agent_invoke ${toHex(p.invokeId)} on this chain`, { action: 'ignore' });
    if (!bytesEqual(inv.payTo, tx.from)) throw registryError(RegistryErrorCode.PAYOUT_NOT_PAYEE, "only the invoke's payTo pays its provider");
    if (p.amount > inv.amount) throw registryError(RegistryErrorCode.PAYOUT_TOO_LARGE, `payout ${p.amount} exceeds the invoke's amount ${inv.amount}`);
    if (inv.refunded) throw registryError(RegistryErrorCode.INVOKE_REFUNDED, `invoke ${toHex(p.invokeId)} was refunded`, { action: 'ignore' });
    if (state.get(payoutKey(p.invokeId))) throw registryError(RegistryErrorCode.ALREADY_PAID_OUT, `invoke ${toHex(p.invokeId)} was already paid out`, { action: 'ignore' });
    move(state, tx.from, p.to, NATIVE, p.amount, 'payout');
    state.set(payoutKey(p.invokeId), encodePayout({ to: p.to, amount: p.amount }));
  },
  touchedKeys: (_tx, p) => [invokeKey(p.invokeId), payoutKey(p.invokeId), accountKey(p.to)],
  toJson: (p, params) => ({ invokeId: toHex(p.invokeId), to: encodeAddress(p.to, params.hrp), amount: p.amount.toString() }),
};
