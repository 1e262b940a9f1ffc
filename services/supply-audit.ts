/** native-supply-audit: minted, burned, max-supply headroom, holders and issuer balance of one token, of a pool's tokens, or of all tokens. */
import type { EconomyReader, TokenView } from '../chain/economyReader.js';
import { tryDecodeAddress } from '../consensus/address.js';
import { defineService } from './define.js';
import { chainHealth } from './health.js';
import { tokenOrPoolInput } from './inputs.js';
import { economyOf, formatUnits, round, servable, tokensOfRef } from './market/economy.js';
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

/** The tokens the input names (all of them when empty), or why this chain has none by that name (400 before any quote; a refund at settle). */
const target = servable((ctx: ServiceContext, input: unknown) => tokensOfRef(economyOf(ctx), String(input ?? ''), 'NATIVE is the chain\'s coin, not an issued token: see native-network-stats for its supply'));

async function run(ctx: ServiceContext, input: unknown) {
  const eco = economyOf(ctx);
  const height = ctx.chain.tip.height;
  const ref = await target.resolved(ctx, input);
  if (ref.scope === 'all') {
    const tokens = await eco.listTokens({ includeHidden: true });
    return { height, scope: 'all', count: tokens.length, tokens: await Promise.all(tokens.map((t) => supplyOf(eco, t, ctx.params.hrp))) };
  }
  const tokens = await Promise.all(ref.symbols.map(async (s) => supplyOf(eco, (await eco.getToken(s))!, ctx.params.hrp)));
  return { height, scope: ref.scope, ...(ref.scope === 'pool' ? { pool: ref.pool.id } : {}), count: tokens.length, tokens };
}

/** native-supply-audit. */
export const supplyAudit = defineService({
  id: 'native-supply-audit',
  name: 'Token Supply Audit',
  category: 'audit',
  priceBase: 1_200_000n,
  description: 'minted, burned, max-supply headroom, holders, issuer balance',
  tags: ['supply', 'minted', 'burned', 'holders', 'issuer', 'token', 'audit'],
  requestFormat: 'symbol of a token issued on this chain, or a pool of this chain as TOKEN/TOKEN; empty: all tokens',
  requestRequired: false,
  inputSchema: tokenOrPoolInput(),
  precheck: target.precheck,
  run,
  health: chainHealth,
});
