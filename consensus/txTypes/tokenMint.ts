/** `token_mint`: the issuer creates new units for `to`, never past maxSupply. Payload: symbol ‖ to(20) ‖ varint amount. */
import { EconomyErrorCode } from '../errors.js';
import { bytesEqual } from '../hash.js';
import { setToken, TokenKind } from '../economyState.js';
import { credit } from '../ledger.js';
import { TxType } from '../tx.js';
import { assetKeys, refuse, requireToken, type SymbolToAmount, symbolToAmountPayload } from './economyRules.js';
import type { TxTypeModule } from './types.js';

/** Payload of a token_mint. */
export type TokenMintPayload = SymbolToAmount;

/** The token_mint type module. */
export const tokenMint: TxTypeModule<TokenMintPayload> = {
  type: TxType.token_mint,
  name: 'token_mint',
  ...symbolToAmountPayload('mint amount'),
  amountUnits: (p) => ({ amount: { asset: p.symbol } }),
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
};

