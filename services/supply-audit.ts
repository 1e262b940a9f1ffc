/** native-supply-audit: minted, burned, max-supply headroom, holders and issuer balance of one token, of a pool's tokens, or of all tokens. */
import type { EconomyReader, TokenView } from '../chain/economyReader.js';
import { tryDecodeAddress } from '../consensus/address.js';
import { NATIVE } from '../consensus/ledger.js';
import { defineService } from './define.js';
import { chainHealth } from './health.js';
import { tokenOrPoolInput } from './inputs.js';
import { economyOf, formatUnits, resolveAssetRef, round } from './market/economy.js';
import type { ServiceContext } from './types.js';

/** The supply figures of one token. */
export async function supplyOf(eco: EconomyReader, t: TokenView, hrp: string) {
  const balance = await eco.tokenBalance(t.symbol, tryDecodeAddress(t.issuer, hrp)!);
  const max = BigInt(t.maxSupply);
  const minted = BigInt(t.minted);
  const supply = BigInt(t.supply);
  const u = (v: bigint) => formatUnits(v, t.decimals);
  return {
    symbol: t.symbol,
    name: t.name,
    kind: t.kind,
    decimals: t.decimals,
    minted: u(minted),
    burned: u(BigInt(t.burned)),
    supply: u(supply),
    maxSupply: u(max),
    headroom: u(max - minted),
    headroomPct: round((Number(max - minted) / Number(max)) * 100, 4),
    holders: t.holders,
    issuer: t.issuer,
    issuerBalance: u(balance),
    issuerSharePct: supply > 0n ? round((Number(balance) / Number(supply)) * 100, 4) : 0,
    frozen: t.frozen,
    hidden: t.hidden,
    units: { minted: t.minted, burned: t.burned, supply: t.supply, maxSupply: t.maxSupply, issuerBalance: balance.toString() },
  };
}

async function run(ctx: ServiceContext, input: unknown) {
  const eco = economyOf(ctx);
  const text = String(input ?? '').trim();
  const height = ctx.chain.tip.height;
  if (!text) {
    const tokens = await eco.listTokens({ includeHidden: true });
    return { height, scope: 'all', count: tokens.length, tokens: await Promise.all(tokens.map((t) => supplyOf(eco, t, ctx.params.hrp))) };
  }
  const ref = await resolveAssetRef(eco, text);
  if (ref.kind === 'unknown') return { height, scope: 'unknown', input: ref.input, found: false, reason: ref.reason, tokens: [] };
  if (ref.kind === 'native') return { height, scope: 'native', found: false, reason: 'NATIVE is the chain\'s coin, not an issued token: see native-network-stats for its supply', tokens: [] };
  const symbols = ref.kind === 'token' ? [ref.symbol] : [ref.pool.a, ref.pool.b].filter((s) => s !== NATIVE);
  const tokens = await Promise.all(symbols.map(async (s) => supplyOf(eco, (await eco.getToken(s))!, ctx.params.hrp)));
  return { height, scope: ref.kind, ...(ref.kind === 'pool' ? { pool: ref.pool.id } : {}), count: tokens.length, tokens };
}

/** native-supply-audit. */
export const supplyAudit = defineService({
  id: 'native-supply-audit',
  name: 'Token Supply Audit',
  category: 'audit',
  priceBase: 1_200_000n,
  description: 'minted, burned, max-supply headroom, holders, issuer balance',
  tags: ['supply', 'minted', 'burned', 'holders', 'issuer', 'token', 'audit'],
  requestFormat: 'token symbol or pool (TOKEN/TOKEN or 64-hex id); empty: all tokens',
  requestRequired: false,
  inputSchema: tokenOrPoolInput(),
  run,
  health: chainHealth,
});
