/** native-risk-score: a wallet's 0-100 risk score with the flags washTrading, flashLoanAttack, sanctionHit, mixerInteraction and exploitContract, each with its evidence. */
import { defineService } from './define.js';
import { walletAddressInput } from './inputs.js';
import { tryDecodeAddress } from '../consensus/address.js';
import { classifyAddress } from './addresses.js';
import { chainHealth } from './health.js';
import { addressOf, economyOf } from './market/economy.js';
import { fromHex } from '../consensus/hash.js';
import { washTrading, type ActivityEntry } from './market/riskHeuristics.js';
import { sanctionsIndex, type ScreenResult } from './sanctions/screen.js';
import type { ServiceContext } from './types.js';


/**
 * Points each flag adds to the score (capped at 100). flashLoanAttack weighs 0: this chain has
 * no flash loans (no contracts; a transaction cannot borrow and repay within itself), so the flag
 * is never raised here and stays in the result only because the catalog names it.
 */
export const RISK_WEIGHTS = { sanctionHit: 60, mixerInteraction: 25, exploitContract: 25, flashLoanAttack: 0, washTrading: 15 } as const;
/**
 * Points of mixerInteraction / exploitContract when the wallet itself carries the label (it is a
 * mixer or an exploiter, not a wallet that dealt with one): the score of a mixer or exploit
 * group's address named on the sanctions lists (sanctionHit + the flag = 85), so a label by this
 * chain's moderators weighs what OFAC's listing does.
 */
export const SELF_LABEL_WEIGHT = RISK_WEIGHTS.sanctionHit + RISK_WEIGHTS.mixerInteraction;
/** Why flashLoanAttack is never raised on this chain. */
const NO_FLASH_LOANS = 'flash loans do not exist on this chain: it runs no contracts, and a transaction cannot borrow and repay within itself; opposite trades in one block are ordinary trades (counted as round trips by washTrading)';
/** Activity entries read for the on-chain heuristics (newest first). */
export const RISK_ACTIVITY_LIMIT = 1_000;
/** Names on the shipped lists that mark a mixer, and a hack/exploit group. */
const MIXER_NAMES = /tornado|mixer|blender|sinbad|samourai|chipmixer|bitcoin fog/i;
const EXPLOIT_NAMES = /lazarus|hidden cobra|exploit|hack/i;
/** Moderation labels (`moderation` tx action `label`) that raise mixerInteraction / exploitContract: the word itself or a `word-…` refinement (e.g. `mixer-eth`). */
export const MIXER_LABELS = /^(mixer|tumbler)(-|$)/;
export const EXPLOIT_LABELS = /^(exploit|exploiter|exploit-contract|hack|hacker|drainer)(-|$)/;

/** An address with an on-chain moderation label, as evidence. */
interface LabelHit {
  readonly address: string;
  readonly role: 'wallet' | 'counterparty';
  readonly label: string;
  readonly reason: string;
  readonly labelledAtHeight: number;
}

/** The moderation labels of `ids` (wallet first) at the tip, through the node's label reader; null when the context has none. */
async function labelsOf(ctx: ServiceContext, ids: readonly { id: Uint8Array; address: string; role: LabelHit['role'] }[]): Promise<LabelHit[] | null> {
  const reader = ctx.addressLabels;
  if (!reader) return null;
  const labels = await reader.getMany(ids.map((x) => x.id));
  const hits: LabelHit[] = [];
  labels.forEach((l, i) => {
    if (l) hits.push({ address: ids[i].address, role: ids[i].role, label: l.label, reason: l.reason, labelledAtHeight: l.height });
  });
  return hits;
}

async function run(ctx: ServiceContext, input: unknown) {
  const address = String(input).trim();
  const family = classifyAddress(address).family;
  const index = sanctionsIndex(ctx.now());
  const screened: { address: string; role: 'wallet' | 'counterparty'; result: ScreenResult }[] = [{ address, role: 'wallet', result: index.screenAddress(address) }];
  const id = tryDecodeAddress(address.toLowerCase(), ctx.params.hrp);
  let wash: ReturnType<typeof washTrading> | null = null;
  let activityRead = 0;
  let labelHits: LabelHit[] | null = null;
  if (id) {
    const eco = economyOf(ctx);
    const entries = await eco.activity(id, { limit: RISK_ACTIVITY_LIMIT });
    const acts = entries as ActivityEntry[];
    activityRead = acts.length;
    wash = washTrading(acts);
    const counterpartyIds = [...new Set(acts.map((e) => e.counterparty).filter((c): c is string => typeof c === 'string' && /^[0-9a-f]{40}$/.test(c)))];
    const counterparties = counterpartyIds.map((c) => addressOf(c, ctx.params.hrp));
    for (const c of counterparties) screened.push({ address: c, role: 'counterparty', result: index.screenAddress(c) });
    labelHits = await labelsOf(ctx, [
      { id, address: address.toLowerCase(), role: 'wallet' },
      ...counterpartyIds.map((c, i) => ({ id: fromHex(c), address: counterparties[i], role: 'counterparty' as const })),
    ]);
  }
  const hits = screened.flatMap((s) => s.result.matches.map((m) => ({ address: s.address, role: s.role, list: m.list, listDate: m.listDate, name: m.name, programs: m.programs })));
  const mixer = hits.filter((h) => MIXER_NAMES.test(h.name));
  const exploit = hits.filter((h) => EXPLOIT_NAMES.test(h.name));
  const mixerLabels = (labelHits ?? []).filter((h) => MIXER_LABELS.test(h.label));
  const exploitLabels = (labelHits ?? []).filter((h) => EXPLOIT_LABELS.test(h.label));
  const onChain = id !== undefined;
  const notHere = `not an address of this chain (${family ?? 'unrecognised'}): only the shipped lists can be checked`;
  const labelSource = !onChain
    ? 'moderation labels exist for addresses of this chain only'
    : labelHits === null
      ? 'this context has no reader of the chain\'s moderation labels: only the shipped lists were checked'
      : `the chain's moderation labels of the wallet and its ${screened.length - 1} transfer counterparties`;
  const flags = {
    washTrading: { flagged: wash?.flagged ?? false, evidence: wash ? { roundTrips: wash.roundTrips, counterparties: wash.counterparties, examples: wash.examples } : notHere },
    flashLoanAttack: { flagged: false, applicable: false, evidence: onChain ? NO_FLASH_LOANS : notHere },
    sanctionHit: { flagged: hits.length > 0, evidence: { matches: hits, screened: screened.length, listsUsed: screened[0].result.listsUsed, listsNotLoaded: screened[0].result.listsNotLoaded } },
    mixerInteraction: { flagged: mixer.length + mixerLabels.length > 0, evidence: { matches: mixer, labelled: mixerLabels, lists: 'mixers named on the shipped sanctions lists (e.g. Tornado Cash)', labels: labelSource } },
    exploitContract: { flagged: exploit.length + exploitLabels.length > 0, evidence: { matches: exploit, labelled: exploitLabels, lists: 'hack/exploit groups named on the shipped sanctions lists (e.g. Lazarus Group)', labels: labelSource } },
  };
  const selfLabelled = { mixerInteraction: mixerLabels.some((h) => h.role === 'wallet'), exploitContract: exploitLabels.some((h) => h.role === 'wallet') };
  const weightOf = (k: keyof typeof RISK_WEIGHTS) => (k in selfLabelled && selfLabelled[k as keyof typeof selfLabelled] ? SELF_LABEL_WEIGHT : RISK_WEIGHTS[k]);
  const score = Math.min(100, (Object.keys(RISK_WEIGHTS) as (keyof typeof RISK_WEIGHTS)[]).reduce((s, k) => s + (flags[k].flagged ? weightOf(k) : 0), 0));
  return {
    address,
    family,
    onThisChain: onChain,
    score,
    level: score >= 70 ? 'high' : score >= 30 ? 'medium' : 'low',
    flags,
    weights: RISK_WEIGHTS,
    selfLabelWeight: SELF_LABEL_WEIGHT,
    activityRead,
    moderationLabels: labelHits,
    method: 'score = sum of the weights of the raised flags, capped at 100 (high >= 70, medium >= 30); a wallet itself labelled a mixer or an exploiter on this chain weighs selfLabelWeight for that flag, as a listed mixer or exploit group\'s address does; heuristics in docs/agents-guide.md',
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
  needsInput: true,
  inputSchema: walletAddressInput(),
  run,
  health: chainHealth,
});
