/**
 * `token_redeem`: burn units of a backed token and receive NATIVE from its reserve. A plain
 * token pays its pro-rata share, reserve · amount / supply; a USD stablecoin pays par at the
 * on-chain price, amount · den / num, capped at the pro-rata share (so an under-collateralised
 * coin treats every holder alike). Both round down (in the reserve's favour).
 * Payload: symbol ‖ varint amount.
 */
import { EconomyErrorCode } from '../errors.js';
import { setToken, TokenKind, type TokenRecord } from '../economyState.js';
import { credit, debit, NATIVE } from '../ledger.js';
import { stablePoolKey, stablePrice } from '../stablePrice.js';
import { TxType } from '../tx.js';
import { assetKeys, refuse, requireToken, type SymbolAmount, symbolAmountPayload } from './economyRules.js';
import type { ChainParams } from '../params.js';
import type { StateView } from '../state.js';
import type { TxTypeModule } from './types.js';

/** Payload of a token_redeem. */
export type TokenRedeemPayload = SymbolAmount;

/** NATIVE base units paid for redeeming `amount` of a token (see module comment). */
export function redeemValue(state: StateView, symbol: string, t: TokenRecord, amount: bigint, params: ChainParams): bigint {
  if (t.supply === 0n) return 0n;
  const proRata = (t.reserve * amount) / t.supply;
  if (t.kind !== TokenKind.usdStable) return proRata;
  const price = stablePrice(state, symbol, t, params);
  const par = (amount * price.den) / price.num;
  return par < proRata ? par : proRata;
}

/** The token_redeem type module. */
export const tokenRedeem: TxTypeModule<TokenRedeemPayload> = {
  type: TxType.token_redeem,
  name: 'token_redeem',
  ...symbolAmountPayload('redeem amount'),
  amountUnits: (p) => ({ amount: { asset: p.symbol } }),
  apply(state, tx, p, ctx) {
    const t = requireToken(state, p.symbol);
    const out = redeemValue(state, p.symbol, t, p.amount, ctx.params);
    if (out === 0n) throw refuse(EconomyErrorCode.NOTHING_TO_REDEEM, `redeeming ${p.amount} ${p.symbol} would pay nothing (reserve ${t.reserve})`);
    debit(state, tx.from, p.symbol, p.amount, 'redeem amount');
    const after = requireToken(state, p.symbol);
    setToken(state, p.symbol, { ...after, supply: after.supply - p.amount, burned: after.burned + p.amount, reserve: after.reserve - out });
    credit(state, tx.from, NATIVE, out);
    ctx.emit?.({ kind: 'token', symbol: p.symbol, action: 'redeem', account: tx.from, amount: p.amount, native: out });
  },
  touchedKeys(tx, p) {
    return [...assetKeys(p.symbol, tx.from), stablePoolKey(p.symbol)];
  },
};
