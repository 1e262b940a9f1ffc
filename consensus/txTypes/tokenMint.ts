/** `token_mint`: the issuer creates new units for `to`, never past maxSupply. Payload: symbol ‖ to(20) ‖ varint amount. */
import { Writer, decodeAll } from '../codec.js';
import { EconomyErrorCode } from '../errors.js';
import { encodeAddress } from '../address.js';
import { bytesEqual } from '../hash.js';
import { ADDRESS_SIZE } from '../keys.js';
import { setToken, TokenKind } from '../economyState.js';
import { credit } from '../ledger.js';
import { TxType } from '../tx.js';
import { assetKeys, readSymbol, refuse, requirePositive, requireToken, validateSymbol, writeSymbol } from './economyRules.js';
import type { TxTypeModule } from './types.js';

/** Payload of a token_mint. */
export interface TokenMintPayload {
  readonly symbol: string;
  readonly to: Uint8Array;
  /** Smallest units, > 0. */
  readonly amount: bigint;
}

/** The token_mint type module. */
export const tokenMint: TxTypeModule<TokenMintPayload> = {
  type: TxType.token_mint,
  name: 'token_mint',
  encodePayload(p) {
    return writeSymbol(new Writer(48), p.symbol).raw(p.to).varint(p.amount).finish();
  },
  decodePayload(bytes) {
    return decodeAll(bytes, (r) => ({ symbol: readSymbol(r), to: r.raw(ADDRESS_SIZE).slice(), amount: r.varint() }));
  },
  validatePayload(p) {
    validateSymbol(p.symbol);
    requirePositive(p.amount, 'mint amount');
  },
  apply(state, tx, p, ctx) {
    const t = requireToken(state, p.symbol);
    if (!bytesEqual(t.issuer, tx.from)) throw refuse(EconomyErrorCode.NOT_ISSUER, `only the issuer of ${p.symbol} can mint it`);
    if (t.kind === TokenKind.usdStable) throw refuse(EconomyErrorCode.IS_STABLE, `${p.symbol} is a stablecoin: mint it against collateral (stable_mint)`);
    if (t.supply + p.amount > t.maxSupply) {
      throw refuse(EconomyErrorCode.MAX_SUPPLY, `minting ${p.amount} would take ${p.symbol} past its maxSupply ${t.maxSupply}`, { headroom: (t.maxSupply - t.supply).toString() });
    }
    setToken(state, p.symbol, { ...t, supply: t.supply + p.amount, minted: t.minted + p.amount });
    credit(state, p.to, p.symbol, p.amount);
    ctx.emit?.({ kind: 'token', symbol: p.symbol, action: 'mint', account: p.to, amount: p.amount, native: 0n });
  },
  touchedKeys(_tx, p) {
    return assetKeys(p.symbol, p.to);
  },
  toJson(p, params) {
    return { symbol: p.symbol, to: encodeAddress(p.to, params.hrp), amount: p.amount.toString() };
  },
};

