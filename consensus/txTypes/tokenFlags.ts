/**
 * `token_flags`: the issuer sets the token's flags (bit 0 `frozen`: transfers and swaps halted;
 * bit 1 `hidden`: kept out of listings). Payload: symbol ‖ u8 flags.
 */
import { Writer, decodeAll } from '../codec.js';
import { EconomyErrorCode, TxErrorCode } from '../errors.js';
import { bytesEqual } from '../hash.js';
import { setToken, tokenKey, TokenFlag } from '../economyState.js';
import { TxType } from '../tx.js';
import { readSymbol, refuse, reject, requireToken, validateSymbol, writeSymbol } from './economyRules.js';
import type { TxTypeModule } from './types.js';

/** Payload of a token_flags. */
export interface TokenFlagsPayload {
  readonly symbol: string;
  /** TokenFlag bits (0–3). */
  readonly flags: number;
}

/** The token_flags type module. */
export const tokenFlags: TxTypeModule<TokenFlagsPayload> = {
  type: TxType.token_flags,
  name: 'token_flags',
  encodePayload(p) {
    return writeSymbol(new Writer(16), p.symbol).u8(p.flags).finish();
  },
  decodePayload(bytes) {
    return decodeAll(bytes, (r) => ({ symbol: readSymbol(r), flags: r.u8() }));
  },
  validatePayload(p) {
    validateSymbol(p.symbol);
    if (p.flags > (TokenFlag.frozen | TokenFlag.hidden)) throw reject(TxErrorCode.BAD_PAYLOAD, `unknown flag bits in ${p.flags}`);
  },
  apply(state, tx, p, ctx) {
    const t = requireToken(state, p.symbol);
    if (!bytesEqual(t.issuer, tx.from)) throw refuse(EconomyErrorCode.NOT_ISSUER, `only the issuer of ${p.symbol} can change its flags`);
    setToken(state, p.symbol, { ...t, flags: p.flags });
    ctx.emit?.({ kind: 'token', symbol: p.symbol, action: 'flags', account: tx.from, amount: BigInt(p.flags), native: 0n });
  },
  touchedKeys(_tx, p) {
    return [tokenKey(p.symbol)];
  },
  toJson(p) {
    return { symbol: p.symbol, frozen: (p.flags & TokenFlag.frozen) !== 0, hidden: (p.flags & TokenFlag.hidden) !== 0 };
  },
};
