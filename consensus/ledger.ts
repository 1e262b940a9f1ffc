/**
 * The balance-move rules, in one place: every transaction type that moves value calls these
 * instead of reading and writing balances itself.
 *
 * - `chargeEnvelope`: the envelope's effect common to every type — nonce sequencing, the first
 *   transaction publishing the sender's keys, and the fee taken from the NATIVE balance.
 * - `debit` / `credit` / `move`: value in one asset (NATIVE or a token symbol). A debit never
 *   goes below zero (`tx_insufficient_funds`, with `action: 'ignore'` since it depends on the
 *   tip); a credit never goes above 2^64 − 1 (`tx_amount_overflow`). Token balances also keep the
 *   token's holder count (a balance going from zero to positive, or back).
 */
import { Writer, decodeAll } from './codec.js';
import { TxErrorCode, ValidationError } from './errors.js';
import { toHex } from './hash.js';
import { MAX_AMOUNT } from './amount.js';
import { type StateOverlay } from './state.js';
import { getToken, setToken, tokenBalanceKey } from './economyState.js';
import type { Tx } from './tx.js';

/** The native asset's symbol in every multi-asset field (pools, swaps, events). */
export const NATIVE = 'NATIVE';

/** Sum that refuses to pass 2^64 − 1 (the largest amount a consensus varint carries). */
export function checkedAdd(a: bigint, b: bigint, what = 'amount'): bigint {
  const s = a + b;
  if (s > MAX_AMOUNT) throw new ValidationError(TxErrorCode.AMOUNT_OVERFLOW, `${what} would exceed 2^64 - 1`, { action: 'ignore' });
  return s;
}

/**
 * The envelope's state effect: the nonce must be the account's next one, the account's first
 * transaction must carry its keys, and the fee is debited. Runs before the type's own effect.
 */
export function chargeEnvelope(state: StateOverlay, tx: Tx): void {
  const acc = state.getAccount(tx.from);
  if (tx.nonce !== acc.nonce) {
    // A future nonce may become valid later; a past one never will.
    throw new ValidationError(TxErrorCode.BAD_NONCE, `nonce ${tx.nonce}, expected ${acc.nonce}`, {
      action: 'ignore',
      payload: { expected: acc.nonce.toString(), got: tx.nonce.toString() },
    });
  }
  if (!acc.publicKey && !tx.publicKey) throw new ValidationError(TxErrorCode.MISSING_KEYS, "the account's first transaction must carry its public keys");
  if (acc.balance < tx.fee) {
    throw new ValidationError(TxErrorCode.INSUFFICIENT_FUNDS, `balance ${acc.balance} below fee ${tx.fee}`, { action: 'ignore' });
  }
  state.setAccount(tx.from, { balance: acc.balance - tx.fee, nonce: acc.nonce + 1n, publicKey: acc.publicKey ?? tx.publicKey });
}

/** Balance of `id` in `asset` (NATIVE base units, or the token's smallest unit). */
export function balanceOf(state: StateOverlay, id: Uint8Array, asset: string): bigint {
  if (asset === NATIVE) return state.getAccount(id).balance;
  const raw = state.get(tokenBalanceKey(asset, id));
  return raw ? decodeVarintValue(raw) : 0n;
}

/** Removes `amount` of `asset` from `id`; `what` names the amount in the error message. */
export function debit(state: StateOverlay, id: Uint8Array, asset: string, amount: bigint, what = 'amount'): void {
  const have = balanceOf(state, id, asset);
  if (have < amount) {
    const unit = asset === NATIVE ? ' after fee' : ` ${asset}`;
    throw new ValidationError(TxErrorCode.INSUFFICIENT_FUNDS, `balance ${have}${unit} is below ${what} ${amount}`, {
      action: 'ignore',
      payload: { asset, balance: have.toString(), needed: amount.toString() },
    });
  }
  setBalance(state, id, asset, have, have - amount);
}

/** Adds `amount` of `asset` to `id`. */
export function credit(state: StateOverlay, id: Uint8Array, asset: string, amount: bigint): void {
  const have = balanceOf(state, id, asset);
  setBalance(state, id, asset, have, checkedAdd(have, amount, `balance of ${toHex(id)} in ${asset}`));
}

/** Moves `amount` of `asset` from `from` to `to` (debit first, so a failed debit changes nothing). */
export function move(state: StateOverlay, from: Uint8Array, to: Uint8Array, asset: string, amount: bigint, what = 'amount'): void {
  debit(state, from, asset, amount, what);
  credit(state, to, asset, amount);
}

function setBalance(state: StateOverlay, id: Uint8Array, asset: string, before: bigint, after: bigint): void {
  if (asset === NATIVE) {
    state.setAccount(id, { ...state.getAccount(id), balance: after });
    return;
  }
  state.set(tokenBalanceKey(asset, id), after === 0n ? null : encodeVarintValue(after));
  if ((before === 0n) !== (after === 0n)) {
    const t = getToken(state, asset);
    if (t) setToken(state, asset, { ...t, holders: t.holders + (after === 0n ? -1 : 1) });
  }
}

/** Canonical bytes of a bare varint value (token and LP balances are stored as one varint). */
export function encodeVarintValue(v: bigint): Uint8Array {
  return new Writer(10).varint(v).finish();
}

/** Decodes a bare varint value (strict). */
export function decodeVarintValue(bytes: Uint8Array): bigint {
  return decodeAll(bytes, (r) => r.varint());
}
