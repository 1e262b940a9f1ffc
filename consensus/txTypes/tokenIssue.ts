/**
 * `token_issue`: create a token; the sender is its issuer. Payload: symbol ‖ bytes name ‖
 * u8 decimals ‖ varint maxSupply ‖ varint initialSupply ‖ u8 kind (0 token, 1 USD stablecoin).
 * A stablecoin starts with no supply: it is only minted against collateral (`stable_mint`).
 */
import { Writer, decodeAll } from '../codec.js';
import { EconomyErrorCode } from '../errors.js';
import { setToken, TokenKind, tokenKey, getToken } from '../economyState.js';
import { credit, NATIVE } from '../ledger.js';
import { TxType } from '../tx.js';
import { assetKeys, readSymbol, refuse, reject, validateSymbol, writeSymbol } from './economyRules.js';
import type { TxTypeModule } from './types.js';

/** Payload of a token_issue. */
export interface TokenIssuePayload {
  readonly symbol: string;
  /** 1–64 bytes of UTF-8, no control characters. */
  readonly name: string;
  /** 0–18. */
  readonly decimals: number;
  /** Smallest units, > 0. */
  readonly maxSupply: bigint;
  /** Smallest units credited to the issuer, ≤ maxSupply (0 for a stablecoin). */
  readonly initialSupply: bigint;
  /** TokenKind. */
  readonly kind: number;
}

/** Name rule: 1–64 bytes of UTF-8, no control characters. */
export function validateTokenName(name: string): void {
  // eslint-disable-next-line no-control-regex
  if (!name.trim() || new TextEncoder().encode(name).length > 64 || /[\u0000-\u001f\u007f]/.test(name)) {
    throw reject(EconomyErrorCode.BAD_NAME, 'token name must be 1-64 bytes without control characters');
  }
}

/** Stateless rules of an issue (symbol, name, decimals, supply bounds, kind). */
export function validateIssue(p: TokenIssuePayload): void {
  validateSymbol(p.symbol);
  validateTokenName(p.name);
  if (!Number.isInteger(p.decimals) || p.decimals < 0 || p.decimals > 18) throw reject(EconomyErrorCode.BAD_DECIMALS, `decimals ${p.decimals} outside 0-18`);
  if (p.kind !== TokenKind.token && p.kind !== TokenKind.usdStable) throw reject(EconomyErrorCode.BAD_SUPPLY, `unknown token kind ${p.kind}`);
  if (p.maxSupply <= 0n) throw reject(EconomyErrorCode.BAD_SUPPLY, 'maxSupply must be positive');
  if (p.initialSupply > p.maxSupply) throw reject(EconomyErrorCode.BAD_SUPPLY, `initial supply ${p.initialSupply} exceeds maxSupply ${p.maxSupply}`);
  if (p.kind === TokenKind.usdStable && p.initialSupply !== 0n) throw reject(EconomyErrorCode.BAD_SUPPLY, 'a stablecoin is only minted against collateral: initial supply must be 0');
}

/** The token_issue type module. */
export const tokenIssue: TxTypeModule<TokenIssuePayload> = {
  type: TxType.token_issue,
  name: 'token_issue',
  encodePayload(p) {
    return writeSymbol(new Writer(96), p.symbol).bytes(new TextEncoder().encode(p.name)).u8(p.decimals).varint(p.maxSupply).varint(p.initialSupply).u8(p.kind).finish();
  },
  decodePayload(bytes) {
    return decodeAll(bytes, (r) => ({
      symbol: readSymbol(r),
      name: new TextDecoder('utf-8', { fatal: true }).decode(r.bytes(64, 'token name')),
      decimals: r.u8(),
      maxSupply: r.varint(),
      initialSupply: r.varint(),
      kind: r.u8(),
    }));
  },
  validatePayload(p) {
    validateIssue(p);
  },
  apply(state, tx, p, ctx) {
    if (p.symbol === NATIVE || getToken(state, p.symbol)) throw refuse(EconomyErrorCode.SYMBOL_TAKEN, `symbol ${p.symbol} is taken`, { symbol: p.symbol });
    setToken(state, p.symbol, {
      name: p.name,
      issuer: tx.from,
      decimals: p.decimals,
      maxSupply: p.maxSupply,
      supply: p.initialSupply,
      minted: p.initialSupply,
      burned: 0n,
      flags: 0,
      kind: p.kind,
      reserve: 0n,
      holders: 0,
      createdHeight: ctx.height,
    });
    if (p.initialSupply > 0n) credit(state, tx.from, p.symbol, p.initialSupply);
    ctx.emit?.({ kind: 'token', symbol: p.symbol, action: 'issue', account: tx.from, amount: p.initialSupply, native: 0n });
  },
  touchedKeys(tx, p) {
    return [tokenKey(p.symbol), ...assetKeys(p.symbol, tx.from)];
  },
  amountUnits: (p) => ({ maxSupply: { asset: p.symbol, decimals: p.decimals }, initialSupply: { asset: p.symbol, decimals: p.decimals } }),
  toJson(p) {
    return { symbol: p.symbol, name: p.name, decimals: p.decimals, maxSupply: p.maxSupply.toString(), initialSupply: p.initialSupply.toString(), kind: p.kind === TokenKind.usdStable ? 'usd-stable' : 'token' };
  },
};
