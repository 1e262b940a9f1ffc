/** native-risk-score: a wallet's 0-100 risk score with the flags washTrading, flashLoanAttack, sanctionHit, mixerInteraction and exploitContract, each with its evidence. */
import { defineService } from './define.js';
import { walletAddressInput } from './inputs.js';
import { tryDecodeAddress } from '../consensus/address.js';
import { classifyAddress } from './addresses.js';
import { chainHealth } from './health.js';
import { addressOf, economyOf } from './market/economy.js';
import { flashLoanPattern, washTrading, type ActivityEntry } from './market/riskHeuristics.js';
import { sanctionsIndex, type ScreenResult } from './sanctions/screen.js';
import type { ServiceContext } from './types.js';


/** Points each flag adds to the score (capped at 100). */
export const RISK_WEIGHTS = { sanctionHit: 60, mixerInteraction: 25, exploitContract: 25, flashLoanAttack: 20, washTrading: 15 } as const;
/** Activity entries read for the on-chain heuristics (newest first). */
export const RISK_ACTIVITY_LIMIT = 1_000;
/** Names on the shipped lists that mark a mixer, and a hack/exploit group. */
const MIXER_NAMES = /tornado|mixer|blender|sinbad|samourai|chipmixer|bitcoin fog/i;
const EXPLOIT_NAMES = /lazarus|hidden cobra|exploit|hack/i;

async function run(ctx: ServiceContext, input: unknown) {
  const address = String(input).trim();
  const family = classifyAddress(address).family;
  const index = sanctionsIndex(ctx.now());
  const screened: { address: string; role: 'wallet' | 'counterparty'; result: ScreenResult }[] = [{ address, role: 'wallet', result: index.screenAddress(address) }];
  const id = tryDecodeAddress(address.toLowerCase(), ctx.params.hrp);
  let wash: ReturnType<typeof washTrading> | null = null;
  let flash: ReturnType<typeof flashLoanPattern> | null = null;
  let activityRead = 0;
  if (id) {
    const eco = economyOf(ctx);
    const [entries, records] = await Promise.all([eco.activity(id, { limit: RISK_ACTIVITY_LIMIT }), eco.poolRecords()]);
    const acts = entries as ActivityEntry[];
    activityRead = acts.length;
    const values = eco.nativeValues(records);
    const v = (asset: string, amount: unknown) => {
      const per = values.get(asset);
      return per === undefined ? null : (Number(amount as string) * per) / 1e8;
    };
    wash = washTrading(acts);
    flash = flashLoanPattern(acts, (e) => {
      if (e.kind === 'swap') return Math.max(v(e.assetIn as string, e.amountIn) ?? 0, v(e.assetOut as string, e.amountOut) ?? 0);
      const [a, b] = String(e.pool).split('-');
      return (v(a, e.amountA) ?? 0) + (v(b, e.amountB) ?? 0);
    });
    const counterparties = new Set(acts.map((e) => e.counterparty).filter((c): c is string => typeof c === 'string').map((c) => addressOf(c, ctx.params.hrp)));
    for (const c of counterparties) screened.push({ address: c, role: 'counterparty', result: index.screenAddress(c) });
  }
  const hits = screened.flatMap((s) => s.result.matches.map((m) => ({ address: s.address, role: s.role, list: m.list, listDate: m.listDate, name: m.name, programs: m.programs })));
  const mixer = hits.filter((h) => MIXER_NAMES.test(h.name));
  const exploit = hits.filter((h) => EXPLOIT_NAMES.test(h.name));
  const onChain = id !== undefined;
  const notHere = `not an address of this chain (${family ?? 'unrecognised'}): only the shipped lists can be checked`;
  const flags = {
    washTrading: { flagged: wash?.flagged ?? false, evidence: wash ? { roundTrips: wash.roundTrips, counterparties: wash.counterparties, examples: wash.examples } : notHere },
    flashLoanAttack: { flagged: flash?.flagged ?? false, evidence: flash ? { blocks: flash.blocks } : notHere },
    sanctionHit: { flagged: hits.length > 0, evidence: { matches: hits, screened: screened.length, listsUsed: screened[0].result.listsUsed, listsNotLoaded: screened[0].result.listsNotLoaded } },
    mixerInteraction: { flagged: mixer.length > 0, evidence: { matches: mixer, labels: 'mixers named on the shipped sanctions lists (e.g. Tornado Cash); this chain has no moderation labels for addresses yet' } },
    exploitContract: { flagged: exploit.length > 0, evidence: { matches: exploit, labels: 'hack/exploit groups named on the shipped sanctions lists (e.g. Lazarus Group); this chain has no moderation labels for addresses yet' } },
  };
  const score = Math.min(100, (Object.keys(RISK_WEIGHTS) as (keyof typeof RISK_WEIGHTS)[]).reduce((s, k) => s + (flags[k].flagged ? RISK_WEIGHTS[k] : 0), 0));
  return {
    address,
    family,
    onThisChain: onChain,
    score,
    level: score >= 70 ? 'high' : score >= 30 ? 'medium' : 'low',
    flags,
    weights: RISK_WEIGHTS,
    activityRead,
    method: 'score = sum of the weights of the raised flags, capped at 100 (high >= 70, medium >= 30); heuristics in docs/agents-guide.md',
    height: ctx.chain.tip.height,
  };
}

/** native-risk-score. */
export const riskScore = defineService({
  id: 'native-risk-score',
  name: 'Wallet Risk Score',
  category: 'risk',
  priceBase: 1_500_000_000n,
  description: 'wallet score 0-100 with flags washTrading, flashLoanAttack, sanctionHit, mixerInteraction, exploitContract',
  tags: ['risk', 'score', 'wallet', 'wash-trading', 'flash-loan', 'sanctions', 'mixer', 'exploit'],
  requestFormat: 'wallet address (native, EVM, Solana, Bitcoin or Litecoin)',
  requestRequired: false,
  inputSchema: walletAddressInput(),
  run,
  health: chainHealth,
});
