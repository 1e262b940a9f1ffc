/** Rules and helpers shared by the economy's transaction types (symbols, assets, coded errors). */
import { EconomyErrorCode, TxErrorCode, ValidationError } from '../errors.js';
import { Writer, decodeAll, type Reader } from '../codec.js';
import { encodeAddress } from '../address.js';
import { ADDRESS_SIZE } from '../keys.js';
import type { TxTypeModule } from './types.js';
import { accountKey, type StateOverlay } from '../state.js';
import { getToken, tokenBalanceKey, tokenKey, TokenFlag, type TokenRecord } from '../economyState.js';
import { NATIVE } from '../ledger.js';

/** A token symbol: 2–10 characters A–Z 0–9. `NATIVE` is the native asset's and cannot be issued. */
export const SYMBOL_RE = /^[A-Z0-9]{2,10}$/;

const te = new TextEncoder();
const td = new TextDecoder('utf-8', { fatal: true });

/** Writes a symbol (length-prefixed ASCII). */
export function writeSymbol(w: Writer, s: string): Writer {
  return w.bytes(te.encode(s));
}

/** Reads a symbol (at most 10 bytes; its characters are checked by `validateAsset`). */
export function readSymbol(r: Reader): string {
  return td.decode(r.bytes(10, 'symbol'));
}

/** A stateless rule violation (the sender deserves the rejection). */
export function reject(code: EconomyErrorCode | TxErrorCode, message: string): ValidationError {
  return new ValidationError(code, message);
}

/** A stateful rule violation (depends on the tip: not penalised). */
export function refuse(code: EconomyErrorCode | TxErrorCode, message: string, payload?: Record<string, unknown>): ValidationError {
  return new ValidationError(code, message, { action: 'ignore', ...(payload ? { payload } : {}) });
}

/** Checks a token symbol's form (`token_bad_symbol`). */
export function validateSymbol(s: string): void {
  if (!SYMBOL_RE.test(s)) throw reject(EconomyErrorCode.BAD_SYMBOL, `symbol "${s}" must be 2-10 characters A-Z 0-9`);
}

/** Checks an asset name: NATIVE or a well-formed token symbol. */
export function validateAsset(s: string): void {
  if (s !== NATIVE) validateSymbol(s);
}

/** An amount that must be positive (`tx_bad_payload`). */
export function requirePositive(v: bigint, what: string): void {
  if (v <= 0n) throw reject(TxErrorCode.BAD_PAYLOAD, `${what} must be positive`);
}

/** The token record or `token_unknown`. */
export function requireToken(state: StateOverlay, symbol: string): TokenRecord {
  const t = getToken(state, symbol);
  if (!t) throw refuse(EconomyErrorCode.UNKNOWN_TOKEN, `no token ${symbol} on this chain`, { symbol });
  return t;
}

/** An asset that may be transferred or swapped: NATIVE, or an existing token that is not frozen. */
export function requireMovable(state: StateOverlay, asset: string): TokenRecord | undefined {
  if (asset === NATIVE) return undefined;
  const t = requireToken(state, asset);
  if (t.flags & TokenFlag.frozen) throw refuse(EconomyErrorCode.FROZEN, `token ${asset} is frozen by its issuer`, { symbol: asset });
  return t;
}

/** State key of an account's balance in an asset. */
export function balanceKey(asset: string, id: Uint8Array): string {
  return asset === NATIVE ? accountKey(id) : tokenBalanceKey(asset, id);
}

/** Keys of an asset's record (none for NATIVE) and of the given accounts' balances in it. */
export function assetKeys(asset: string, ...ids: Uint8Array[]): string[] {
  return [...(asset === NATIVE ? [] : [tokenKey(asset)]), ...ids.map((id) => balanceKey(asset, id))];
}

/** A `symbol ‖ varint amount` payload (token_burn, token_back, token_redeem). */
export interface SymbolAmount {
  readonly symbol: string;
  /** Smallest units of the token (NATIVE base units for token_back), > 0. */
  readonly amount: bigint;
}

/** Codec, stateless rules and JSON of a `symbol ‖ varint amount` payload; `what` names the amount in errors. */
export function symbolAmountPayload(what: string): Pick<TxTypeModule<SymbolAmount>, 'encodePayload' | 'decodePayload' | 'validatePayload' | 'toJson'> {
  return {
    encodePayload: (p) => writeSymbol(new Writer(24), p.symbol).varint(p.amount).finish(),
    decodePayload: (bytes) => decodeAll(bytes, (r) => ({ symbol: readSymbol(r), amount: r.varint() })),
    validatePayload(p) {
      validateSymbol(p.symbol);
      requirePositive(p.amount, what);
    },
    toJson: (p) => ({ symbol: p.symbol, amount: p.amount.toString() }),
  };
}

/** A `symbol ‖ to(20) ‖ varint amount` payload (token_mint, token_transfer). */
export interface SymbolToAmount extends SymbolAmount {
  readonly to: Uint8Array;
}

/** Codec, stateless rules and JSON of a `symbol ‖ to ‖ varint amount` payload. */
export function symbolToAmountPayload(what: string): Pick<TxTypeModule<SymbolToAmount>, 'encodePayload' | 'decodePayload' | 'validatePayload' | 'toJson'> {
  return {
    encodePayload: (p) => writeSymbol(new Writer(48), p.symbol).raw(p.to).varint(p.amount).finish(),
    decodePayload: (bytes) => decodeAll(bytes, (r) => ({ symbol: readSymbol(r), to: r.raw(ADDRESS_SIZE).slice(), amount: r.varint() })),
    validatePayload(p) {
      validateSymbol(p.symbol);
      requirePositive(p.amount, what);
    },
    toJson: (p, params) => ({ symbol: p.symbol, to: encodeAddress(p.to, params.hrp), amount: p.amount.toString() }),
  };
}
