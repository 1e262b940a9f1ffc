/** native-crypto-whale-watch: one wallet's large movements with alert levels and a holding analysis (concentration, changes over 1 h and 24 h) on this chain. */
import { defineService } from './define.js';
import { walletAddressInput } from './inputs.js';
import { tryDecodeAddress } from '../consensus/address.js';
import { NATIVE } from '../consensus/ledger.js';
import { classifyAddress } from './addresses.js';
import { chainHealth } from './health.js';
import { addressOf, economyOf, formatUnits, round } from './market/economy.js';
import { valuePortfolio } from './market/portfolio.js';
import type { ServiceContext } from './types.js';


/** Alert levels by a movement's NATIVE value (lowest first); smaller movements are not listed. */
export const WALLET_ALERT_LEVELS = [
  { level: 'medium', minNative: 100 },
  { level: 'high', minNative: 1_000 },
  { level: 'critical', minNative: 10_000 },
] as const;
/** Activity entries read (newest first). */
export const WALLET_ACTIVITY_LIMIT = 500;
/** Windows of the flow analysis, in blocks (1 h and 24 h at 3 s). */
export const WALLET_FLOW_WINDOWS = [1_200, 28_800] as const;

async function run(ctx: ServiceContext, input: unknown) {
  const eco = economyOf(ctx);
  const address = String(input).trim();
  const id = tryDecodeAddress(address.toLowerCase(), ctx.params.hrp);
  if (!id) {
    const a = classifyAddress(address);
    return { address, found: false, reason: a.valid ? `a ${a.family} address: this node watches addresses of its own chain (${ctx.params.hrp}1…) only` : `not an address: ${a.reason ?? 'unrecognised format'}` };
  }
  const [p, activity, records, tokens] = await Promise.all([valuePortfolio(ctx.chain, eco, id), eco.activity(id, { limit: WALLET_ACTIVITY_LIMIT }), eco.poolRecords(), eco.tokenRecords()]);
  const values = eco.nativeValues(records);
  const dec = (a: string) => (a === NATIVE ? 8 : (tokens.get(a)?.decimals ?? 0));
  const valueOf = (asset: string, amount: unknown) => {
    const v = values.get(asset);
    return v === undefined ? null : (Number(amount as string) * v) / 1e8;
  };
  const tip = ctx.chain.tip.height;
  const flows = WALLET_FLOW_WINDOWS.map((blocks) => ({ blocks, fromHeight: Math.max(0, tip - blocks + 1), inNative: 0, outNative: 0 }));
  const movements = [];
  for (const a of activity) {
    const kind = a.kind as string;
    let asset = NATIVE;
    let amount = '0';
    let direction: 'in' | 'out' | 'swap' | 'lock' = 'in';
    let counterparty: string | null = null;
    if (kind === 'transfer_in' || kind === 'transfer_out') {
      asset = a.asset as string;
      amount = a.amount as string;
      direction = kind === 'transfer_in' ? 'in' : 'out';
      counterparty = addressOf(a.counterparty as string, ctx.params.hrp);
    } else if (kind === 'swap') {
      asset = a.assetIn as string;
      amount = a.amountIn as string;
      direction = 'swap';
    } else if (kind === 'bridge_in' || kind === 'bridge_out') {
      amount = a.amount as string;
      direction = kind === 'bridge_in' ? 'in' : 'out';
      counterparty = `bridge:${a.network as string}`;
    } else if (kind === 'stake' || kind === 'unstake') {
      amount = a.amount as string;
      direction = 'lock';
    } else if (kind === 'liquidity_add' || kind === 'liquidity_remove') {
      // Both sides of the position, valued together as NATIVE.
      const [pa, pb] = (a.pool as string).split('-');
      const va = valueOf(pa, a.amountA);
      const vb = valueOf(pb, a.amountB);
      if (va === null || vb === null) continue;
      amount = String(Math.round((va + vb) * 1e8));
      direction = 'lock';
    } else if (kind.startsWith('token_') && a.native !== undefined && a.native !== '0') {
      // Collateral or backing moved in NATIVE (stablecoin mint/redeem, token back).
      amount = a.native as string;
      direction = 'lock';
    } else continue;
    const v = valueOf(asset, amount);
    if (v === null) continue;
    for (const f of flows) {
      if ((a.height as number) < f.fromHeight) continue;
      if (direction === 'in') f.inNative += v;
      if (direction === 'out') f.outNative += v;
    }
    const level = [...WALLET_ALERT_LEVELS].reverse().find((l) => v >= l.minNative)?.level;
    if (!level) continue;
    movements.push({ height: a.height as number, tx: a.tx as string, kind, direction, asset, amount: formatUnits(BigInt(amount), dec(asset)), valueNative: round(v, 8), valueUsd: round(v * p.nativeUsd, 2), counterparty, alertLevel: level, shareOfPortfolioPct: p.totalNative > 0 ? round((v / p.totalNative) * 100, 4) : null });
  }
  const valued = p.all.filter((h) => h.valueNative !== null && h.valueNative > 0);
  const shares = valued.map((h) => h.valueNative! / (p.totalNative || 1));
  const largest = valued.length ? valued.reduce((x, y) => (y.valueNative! > x.valueNative! ? y : x)) : null;
  const hhi = shares.reduce((s, x) => s + (100 * x) ** 2, 0);
  return {
    address: address.toLowerCase(),
    found: true,
    totalValueNative: p.totalNative,
    totalValueUsd: p.totalUsd,
    alertCount: movements.length,
    movements,
    holdingAnalysis: {
      holdings: valued.map((h) => ({ kind: h.kind, asset: h.asset, amount: h.amount, valueNative: h.valueNative, sharePct: round((h.valueNative! / (p.totalNative || 1)) * 100, 4) })),
      largestHolding: largest ? { kind: largest.kind, asset: largest.asset, sharePct: round((largest.valueNative! / (p.totalNative || 1)) * 100, 4) } : null,
      concentrationHhi: round(hhi, 2),
      changes: flows.map((f) => ({ windowBlocks: f.blocks, fromHeight: f.fromHeight, inNative: round(f.inNative, 8), outNative: round(f.outNative, 8), netNative: round(f.inNative - f.outNative, 8), netPctOfHoldings: p.totalNative > 0 ? round(((f.inNative - f.outNative) / p.totalNative) * 100, 4) : null })),
    },
    thresholds: WALLET_ALERT_LEVELS,
    activityRead: activity.length,
    method: 'movements are the wallet\'s transfers, swaps (the side given), bridge records, stakes, liquidity (both sides) and collateral moves among its newest 500 activity entries, valued in NATIVE at NATIVE-pool spot prices; alert level by value: medium >= 100, high >= 1,000, critical >= 10,000 NATIVE; concentration = HHI of the holdings\' value shares; changes = value in and out over the last 1,200 and 28,800 blocks (1 h and 24 h)',
    height: tip,
  };
}

/** native-crypto-whale-watch. */
export const cryptoWhaleWatch = defineService({
  id: 'native-crypto-whale-watch',
  name: 'Crypto Whale Watch',
  category: 'whale-watch',
  priceBase: 2_500_000_000n,
  description: 'large-wallet movement alert and holding analysis',
  tags: ['whale', 'wallet', 'movements', 'holdings', 'alerts'],
  requestFormat: 'wallet address (native, EVM, Solana, Bitcoin or Litecoin)',
  requestRequired: false,
  inputSchema: walletAddressInput(),
  run,
  health: chainHealth,
});
