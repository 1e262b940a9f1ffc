/** Economy fields of the account API and exact decimal formatting of token amounts. */
import type { EconomyReader } from '../../chain/economyReader.js';

/** `v` smallest units of an asset with `decimals` as an exact decimal string. */
export function formatUnits(v: bigint | string, decimals: number): string {
  const n = BigInt(v);
  if (decimals === 0) return n.toString();
  const s = n.toString().padStart(decimals + 1, '0');
  const frac = s.slice(-decimals).replace(/0+$/, '');
  return `${s.slice(0, -decimals)}${frac ? `.${frac}` : ''}`;
}

/** The fields `/api/v1/account/:address` adds: token balances, stakes, LP positions. */
export async function accountEconomyFields(eco: EconomyReader, id: Uint8Array): Promise<Record<string, unknown>> {
  const a = await eco.account(id);
  return {
    tokens: a.tokens.map((t) => ({ symbol: t.symbol, balance: formatUnits(t.balance, t.decimals), balanceBase: t.balance, decimals: t.decimals })),
    stakes: a.stakes.map((s) => ({ ...s, amountNative: formatUnits(s.amount, 8), accruedRewardNative: formatUnits(s.accruedReward, 8) })),
    lpPositions: a.lp,
  };
}
