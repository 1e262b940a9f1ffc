/**
 * native-aml-sanctions-scan: a company or person name (fuzzy, transliterated, token order ignored)
 * or a crypto address (exact) screened against the OFAC SDN, UN and EU lists loaded on this
 * node (services/sanctions); the result names every list's date and the lists not loaded.
 */
import { defineService } from './define.js';
import { sanctionsScanSchema } from './documentSchemas.js';
import type { ListCode } from './sanctions/parse.js';
import { SANCTIONS_MISSING_HEALTH, sanctionsAvailable, sanctionsIndex, type ScreenResult, type ScreenSubject } from './sanctions/screen.js';
import type { ServiceContext } from './types.js';

/** Risk score 0-100 of a screening: 100 for a listed address, else the best name score as a percentage, 0 without matches. */
export function riskOf(r: ScreenResult): { riskScore: number; riskLevel: 'none' | 'medium' | 'high' } {
  const best = r.matches[0]?.score ?? 0;
  const riskScore = Math.round(best * 100);
  return { riskScore, riskLevel: riskScore === 0 ? 'none' : riskScore >= 95 ? 'high' : 'medium' };
}

async function run(_ctx: ServiceContext, input: unknown) {
  const { entity, lists, threshold, subject } = input as { entity: string; lists?: ListCode[]; threshold?: number; subject?: ScreenSubject };
  const r = sanctionsIndex().screen(entity.trim(), { lists, threshold, subject });
  const risk = riskOf(r);
  return {
    entity: r.query,
    screenedAs: r.kind,
    ...(r.subject ? { subject: r.subject } : {}),
    ...risk,
    flagged: r.matches.length > 0,
    threshold: r.threshold,
    matches: r.matches,
    lists: r.listsUsed,
    listsNotLoaded: r.listsNotLoaded,
    method:
      r.kind === 'address'
        ? 'exact address match (EVM addresses case-insensitive) against the digital-currency addresses named by the lists'
        : 'names transliterated to ASCII, legal forms dropped (abbreviated or written out), "of <country>" optional on one side, token-order-insensitive Levenshtein token matching; score = matched characters share of both names; match when score >= threshold; vessels and aircraft compared only with a vessel or aircraft query',
  };
}

/** native-aml-sanctions-scan. */
export const amlSanctionsScan = defineService({
  id: 'native-aml-sanctions-scan',
  name: 'AML Sanctions Scan',
  category: 'compliance',
  priceBase: 1_000_000_000n,
  description: 'screening against sanctions lists with risk score and flagged matches',
  tags: ['aml', 'sanctions', 'ofac', 'eu', 'un', 'screening', 'compliance'],
  requestFormat: 'JSON: {"entity": wallet address or company name, "lists": ["OFAC", "EU", "UN"], "subject": "vessel" to screen a ship}',
  requestRequired: false,
  needsInput: true,
  inputSchema: sanctionsScanSchema,
  inputIsJson: true,
  run,
  health: async () => (sanctionsAvailable() ? 'active' : SANCTIONS_MISSING_HEALTH),
});
