/**
 * `stable_mint`: anyone mints a USD stablecoin by locking NATIVE collateral worth at least
 * `stableMinRatioBps` of the minted amount at the on-chain price (consensus/stablePrice.ts):
 * collateral · num · 10000 ≥ amount · ratioBps · den. Payload: symbol ‖ varint collateral
 * (NATIVE base units) ‖ varint amount (stable units).
 */
import { Writer, decodeAll } from '../codec.js';
import { EconomyErrorCode } from '../errors.js';
import { setToken, TokenKind } from '../economyState.js';
import { checkedAdd, credit, debit, NATIVE } from '../ledger.js';
import { stablePoolKey, stablePrice } from '../stablePrice.js';
import { TxType } from '../tx.js';
import { assetKeys, readSymbol, refuse, requirePositive, requireToken, validateSymbol, writeSymbol } from './economyRules.js';
import type { TxTypeModule } from './types.js';

/** Payload of a stable_mint. */
export interface StableMintPayload {
  readonly symbol: string;
  /** NATIVE base units locked, > 0. */
  readonly collateral: bigint;
  /** Stable units minted to the sender, > 0. */
  readonly amount: bigint;
}

/** The stable_mint type module. */
export const stableMint: TxTypeModule<StableMintPayload> = {
  type: TxType.stable_mint,
  name: 'stable_mint',
  encodePayload(p) {
    return writeSymbol(new Writer(32), p.symbol).varint(p.collateral).varint(p.amount).finish();
  },
  decodePayload(bytes) {
    return decodeAll(bytes, (r) => ({ symbol: readSymbol(r), collateral: r.varint(), amount: r.varint() }));
  },
  validatePayload(p) {
    validateSymbol(p.symbol);
    requirePositive(p.collateral, 'collateral');
    requirePositive(p.amount, 'mint amount');
  },
  apply(state, tx, p, ctx) {
    const t = requireToken(state, p.symbol);
    if (t.kind !== TokenKind.usdStable) throw refuse(EconomyErrorCode.NOT_STABLE, `${p.symbol} is not a USD stablecoin`);
    if (t.supply + p.amount > t.maxSupply) throw refuse(EconomyErrorCode.MAX_SUPPLY, `minting ${p.amount} would take ${p.symbol} past its maxSupply ${t.maxSupply}`);
    const price = stablePrice(state, p.symbol, t, ctx.params);
    const ratio = BigInt(ctx.params.economy.stableMinRatioBps);
    if (p.collateral * price.num * 10_000n < p.amount * ratio * price.den) {
      const need = (p.amount * ratio * price.den + price.num * 10_000n - 1n) / (price.num * 10_000n);
      throw refuse(EconomyErrorCode.UNDERCOLLATERALIZED, `minting ${p.amount} ${p.symbol} needs at least ${need} NATIVE base units of collateral at the ${price.source} price (ratio ${ratio / 100n}%)`, {
        minCollateral: need.toString(),
        priceSource: price.source,
      });
    }
    debit(state, tx.from, NATIVE, p.collateral, 'collateral');
    credit(state, tx.from, p.symbol, p.amount);
    const after = requireToken(state, p.symbol);
    setToken(state, p.symbol, { ...after, supply: after.supply + p.amount, minted: after.minted + p.amount, reserve: checkedAdd(after.reserve, p.collateral, 'collateral') });
    ctx.emit?.({ kind: 'token', symbol: p.symbol, action: 'stable_mint', account: tx.from, amount: p.amount, native: p.collateral });
  },
  touchedKeys(tx, p) {
    return [...assetKeys(p.symbol, tx.from), stablePoolKey(p.symbol)];
  },
  amountUnits: (p) => ({ amount: { asset: p.symbol }, collateral: { asset: NATIVE } }),
  toJson(p) {
    return { symbol: p.symbol, collateral: p.collateral.toString(), amount: p.amount.toString() };
  },
};
