/** A wallet's holdings on this chain valued in NATIVE and USD (wallet-portfolio, crypto-portfolio-tracker). */
import type { ChainReader } from '../../chain/types.js';
import type { EconomyReader } from '../../chain/economyReader.js';
import { NATIVE } from '../../consensus/ledger.js';
import { formatUnits, round } from './economy.js';

/** One valued holding. */
export interface Holding {
  readonly kind: 'balance' | 'stake' | 'lp' | 'token';
  readonly asset: string;
  readonly amount: string;
  /** Exact smallest units (LP: shares). */
  readonly units: string;
  /** null when no NATIVE pool prices the asset. */
  readonly valueNative: number | null;
  readonly valueUsd: number | null;
  readonly detail?: Record<string, unknown>;
}

/** Everything `id` holds, valued at NATIVE-pool spot prices and the on-chain NATIVE/USD price. */
export async function valuePortfolio(chain: ChainReader, eco: EconomyReader, id: Uint8Array) {
  const [account, pos, records, tokens, usd] = await Promise.all([chain.getAccount(id), eco.account(id), eco.poolRecords(), eco.tokenRecords(), eco.nativeUsd()]);
  const values = eco.nativeValues(records);
  const dec = (a: string) => (a === NATIVE ? 8 : (tokens.get(a)?.decimals ?? 0));
  const valueOf = (asset: string, units: bigint): number | null => {
    const v = values.get(asset);
    return v === undefined ? null : (Number(units) * v) / 1e8;
  };
  const mk = (kind: Holding['kind'], asset: string, units: bigint, detail?: Record<string, unknown>): Holding => {
    const vn = valueOf(asset, units);
    return { kind, asset, amount: formatUnits(units, dec(asset)), units: units.toString(), valueNative: vn === null ? null : round(vn, 8), valueUsd: vn === null ? null : round(vn * usd.price, 4), ...(detail ? { detail } : {}) };
  };
  const balance = mk('balance', NATIVE, account.balance);
  const stakes = pos.stakes.map((s) => mk('stake', NATIVE, BigInt(s.amount), { id: s.id, tier: s.tierName, unlockHeight: s.unlockHeight, unlocked: s.unlocked, accruedReward: formatUnits(BigInt(s.accruedReward), 8) }));
  const lp = pos.lp.map((p) => {
    const [a, b] = p.pool.split('-');
    const va = valueOf(a, BigInt(p.amountA));
    const vb = valueOf(b, BigInt(p.amountB));
    const vn = va !== null && vb !== null ? va + vb : va !== null ? 2 * va : vb !== null ? 2 * vb : null;
    return {
      kind: 'lp' as const,
      asset: p.pool,
      amount: p.shares,
      units: p.shares,
      valueNative: vn === null ? null : round(vn, 8),
      valueUsd: vn === null ? null : round(vn * usd.price, 4),
      detail: { sharePct: round(p.share * 100, 6), underlying: { [a]: formatUnits(BigInt(p.amountA), dec(a)), [b]: formatUnits(BigInt(p.amountB), dec(b)) } },
    };
  });
  const tokenHoldings = pos.tokens.filter((t) => t.balance !== '0').map((t) => mk('token', t.symbol, BigInt(t.balance)));
  const all: Holding[] = [balance, ...stakes, ...lp, ...tokenHoldings];
  const totalNative = all.reduce((s, h) => s + (h.valueNative ?? 0), 0);
  return { balance, stakes, lp, tokens: tokenHoldings, all, totalNative: round(totalNative, 8), totalUsd: round(totalNative * usd.price, 4), nativeUsd: usd.price, priceSource: usd.source, nonce: account.nonce };
}
