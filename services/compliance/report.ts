/**
 * The B2B compliance report over a batch of transactions: totals per country and counterparty,
 * high-risk jurisdictions (services/data/compliance/high-risk-jurisdictions.json, dated, FATF and OFAC),
 * structuring (several amounts just under the reporting threshold), sanctioned counterparties
 * (services/sanctions/screen.ts), a risk rating with its reasons and a markdown summary.
 *
 * Amounts are exact: read as decimals (up to 18 places) into BigInts, summed, printed back.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { PROJECT_ROOT } from '../projectRoot.js';
import type { SanctionsIndex, ScreenMatch } from '../sanctions/screen.js';

/** One transaction of the input. */
export interface ComplianceTx {
  readonly id: string;
  readonly amount: number | string;
  readonly counterparty: string;
  readonly country: string;
}

/** The dated high-risk jurisdiction lists shipped in the repository. */
export interface JurisdictionLists {
  readonly date: string;
  readonly source: string;
  readonly callForAction: Readonly<Record<string, string>>;
  readonly increasedMonitoring: Readonly<Record<string, string>>;
  readonly comprehensivelySanctioned: Readonly<Record<string, string>>;
}

/** Reporting threshold the structuring check looks under (USD 10,000 CTR / EUR 10,000 cash rule), in the input's currency units. */
export const REPORTING_THRESHOLD = 10_000n;
/** Width of the band just under the threshold, percent of it. */
export const STRUCTURING_BAND_PERCENT = 10n;

const SCALE = 18;
const ONE = 10n ** BigInt(SCALE);

let jurisdictions: JurisdictionLists | undefined;
/** The shipped jurisdiction lists (read once). */
export function jurisdictionLists(): JurisdictionLists {
  jurisdictions ??= JSON.parse(readFileSync(resolve(PROJECT_ROOT, 'services', 'data', 'compliance', 'high-risk-jurisdictions.json'), 'utf8')) as JurisdictionLists;
  return jurisdictions;
}

/** A decimal amount (number or string) as units of 10^-18. */
export function toUnits(amount: number | string): bigint {
  let text = typeof amount === 'number' ? String(amount) : amount.trim();
  if (/e/i.test(text)) text = Number(text).toFixed(SCALE);
  const [whole, frac = ''] = text.split('.');
  return BigInt(whole) * ONE + BigInt((frac + '0'.repeat(SCALE)).slice(0, SCALE));
}

/** Units of 10^-18 as a plain decimal string without trailing zeros. */
export function fromUnits(units: bigint): string {
  const whole = units / ONE;
  const frac = (units % ONE).toString().padStart(SCALE, '0').replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : `${whole}`;
}

type Severity = 'low' | 'medium' | 'high';
const RANK: Record<Severity, number> = { low: 0, medium: 1, high: 2 };

/** A structuring pattern: several amounts to one counterparty just under the threshold. */
export interface StructuringPattern {
  readonly counterparty: string;
  readonly txIds: readonly string[];
  readonly amounts: readonly string[];
  readonly total: string;
  /** Whether the amounts together reach the threshold that each one stays under. */
  readonly totalReachesThreshold: boolean;
}

/** Builds the report (see module comment); `index` screens the counterparties. */
export function buildComplianceReport(txs: readonly ComplianceTx[], index: SanctionsIndex, opts: { threshold?: number; issuedAt?: string } = {}) {
  const lists = jurisdictionLists();
  const byCountry = new Map<string, { total: bigint; count: number }>();
  const byCounterparty = new Map<string, { name: string; total: bigint; count: number; countries: Set<string> }>();
  let total = 0n;
  for (const tx of txs) {
    const units = toUnits(tx.amount);
    total += units;
    const country = tx.country.toUpperCase();
    const c = byCountry.get(country) ?? { total: 0n, count: 0 };
    c.total += units;
    c.count++;
    byCountry.set(country, c);
    const key = tx.counterparty.trim().toLowerCase().replace(/\s+/g, ' ');
    const p = byCounterparty.get(key) ?? { name: tx.counterparty.trim(), total: 0n, count: 0, countries: new Set<string>() };
    p.total += units;
    p.count++;
    p.countries.add(country);
    byCounterparty.set(key, p);
  }

  // High-risk jurisdictions.
  const highRisk = [...byCountry.entries()]
    .map(([country, c]) => {
      const categories: string[] = [];
      if (lists.callForAction[country]) categories.push('FATF call for action');
      if (lists.comprehensivelySanctioned[country]) categories.push('comprehensive sanctions (OFAC)');
      if (lists.increasedMonitoring[country]) categories.push('FATF increased monitoring');
      const name = lists.callForAction[country] ?? lists.comprehensivelySanctioned[country] ?? lists.increasedMonitoring[country];
      return { country, name, categories, txCount: c.count, total: fromUnits(c.total) };
    })
    .filter((h) => h.categories.length > 0)
    .sort((a, b) => a.country.localeCompare(b.country));

  // Structuring: amounts in [threshold − band, threshold) per counterparty, two or more.
  const low = (REPORTING_THRESHOLD * ONE * (100n - STRUCTURING_BAND_PERCENT)) / 100n;
  const high = REPORTING_THRESHOLD * ONE;
  const under = new Map<string, ComplianceTx[]>();
  for (const tx of txs) {
    const u = toUnits(tx.amount);
    if (u >= low && u < high) {
      const key = tx.counterparty.trim().toLowerCase().replace(/\s+/g, ' ');
      under.set(key, [...(under.get(key) ?? []), tx]);
    }
  }
  const structuring: StructuringPattern[] = [...under.entries()]
    .filter(([, l]) => l.length >= 2)
    .map(([key, l]) => {
      const sum = l.reduce((n, t) => n + toUnits(t.amount), 0n);
      return { counterparty: byCounterparty.get(key)!.name, txIds: l.map((t) => t.id), amounts: l.map((t) => fromUnits(toUnits(t.amount))), total: fromUnits(sum), totalReachesThreshold: sum >= high };
    });

  // Sanctioned counterparties, each distinct name screened once.
  const sanctioned: { counterparty: string; matches: readonly ScreenMatch[] }[] = [];
  let listsUsed: unknown = [];
  let listsNotLoaded: unknown = [];
  for (const p of byCounterparty.values()) {
    const r = index.screen(p.name, { threshold: opts.threshold, limit: 3 });
    listsUsed = r.listsUsed;
    listsNotLoaded = r.listsNotLoaded;
    if (r.matches.length) sanctioned.push({ counterparty: p.name, matches: r.matches });
  }

  // Rating.
  const reasons: { severity: Severity; reason: string }[] = [];
  for (const s of sanctioned) {
    const m = s.matches[0];
    reasons.push({ severity: 'high', reason: `counterparty "${s.counterparty}" matches ${m.list} entry ${m.listId} "${m.name}" (score ${m.score}, list of ${m.listDate})` });
  }
  for (const h of highRisk) {
    const sev: Severity = h.categories.some((c) => c !== 'FATF increased monitoring') ? 'high' : 'medium';
    reasons.push({ severity: sev, reason: `${h.txCount} transaction(s) totalling ${h.total} with ${h.country} (${h.name}): ${h.categories.join(', ')}` });
  }
  for (const s of structuring) {
    const sev: Severity = s.txIds.length >= 3 || s.totalReachesThreshold ? 'high' : 'medium';
    reasons.push({ severity: sev, reason: `possible structuring: ${s.txIds.length} amounts to "${s.counterparty}" just under ${REPORTING_THRESHOLD} (${s.amounts.join(', ')}; together ${s.total})` });
  }
  reasons.sort((a, b) => RANK[b.severity] - RANK[a.severity]);
  const rating: Severity = reasons.reduce<Severity>((r, x) => (RANK[x.severity] > RANK[r] ? x.severity : r), 'low');

  const countries = [...byCountry.entries()].map(([country, c]) => ({ country, txCount: c.count, total: fromUnits(c.total) })).sort((a, b) => (toUnits(b.total) > toUnits(a.total) ? 1 : toUnits(b.total) < toUnits(a.total) ? -1 : a.country.localeCompare(b.country)));
  const counterparties = [...byCounterparty.values()].map((p) => ({ counterparty: p.name, txCount: p.count, total: fromUnits(p.total), countries: [...p.countries].sort() })).sort((a, b) => (toUnits(b.total) > toUnits(a.total) ? 1 : toUnits(b.total) < toUnits(a.total) ? -1 : a.counterparty.localeCompare(b.counterparty)));

  const md: string[] = [
    `# B2B compliance report`,
    '',
    `**Risk rating: ${rating.toUpperCase()}** — ${txs.length} transactions, total ${fromUnits(total)}, ${counterparties.length} counterparties, ${countries.length} countries.`,
    '',
    '## Findings',
    ...(reasons.length ? reasons.map((r) => `- **${r.severity}**: ${r.reason}`) : ['- none']),
    '',
    '## Totals per country',
    '| country | transactions | total |',
    '|---|---:|---:|',
    ...countries.map((c) => `| ${c.country} | ${c.txCount} | ${c.total} |`),
    '',
    '## Totals per counterparty',
    '| counterparty | transactions | total |',
    '|---|---:|---:|',
    ...counterparties.map((c) => `| ${c.counterparty.replace(/\|/g, '\\|')} | ${c.txCount} | ${c.total} |`),
    '',
    `Jurisdiction lists of ${lists.date} (${lists.source.split(';')[0]}). Structuring: two or more amounts to one counterparty within ${STRUCTURING_BAND_PERCENT}% under ${REPORTING_THRESHOLD}.`,
  ];

  return {
    riskRating: rating,
    reasons,
    txCount: txs.length,
    total: fromUnits(total),
    countries,
    counterparties,
    highRiskJurisdictions: highRisk,
    structuring,
    sanctionedCounterparties: sanctioned,
    jurisdictionLists: { date: lists.date, source: lists.source },
    sanctionsLists: listsUsed,
    sanctionsListsNotLoaded: listsNotLoaded,
    thresholds: { reporting: String(REPORTING_THRESHOLD), structuringBandPercent: Number(STRUCTURING_BAND_PERCENT) },
    markdown: md.join('\n'),
  };
}
