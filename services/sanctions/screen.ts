/**
 * Sanctions screening, shared by native-aml-sanctions-scan, native-b2b-compliance-report and
 * native-risk-score: a name (person or company) or a crypto address against the loaded lists.
 *
 * Names: transliterated to ASCII (any-ascii: Cyrillic, Arabic, Greek, CJK… to Latin letters),
 * lower-cased, split into tokens, legal forms dropped, abbreviated (ltd, llc, gmbh, pjsc, ao, …)
 * or written out ("public joint stock company", "obshchestvo s ogranichennoi otvetstvennostyu"),
 * long country names shortened ("of the Russian Federation" is "of Russia"). A trailing
 * "of <country>" may be missing on one side ("Sberbank" / "Sberbank of Russia") when what is left
 * still names someone. Vessels and aircraft are compared only with a query about one. Two names are
 * compared token-set against token-set, order ignored: each query token is paired with the most
 * similar unused token of the listed name (similarity = 1 − Levenshtein distance / longer length,
 * kept when ≥ 0.75), and score = 2 · Σ(similarity × query-token length) / (total length of both
 * names). A listed name or alias is a match when score ≥ threshold (default 0.85). Candidates
 * come from a token index (exact tokens, and tokens sharing trigrams for the fuzzy part), so a
 * query does not compare against every one of the ~20,000 names.
 *
 * Addresses: exact match (EVM addresses case-insensitively, others as written).
 */
import anyAscii from 'any-ascii';
import { distance } from 'fastest-levenshtein';
import { LIST_CODES, type ListCode, type ListPart, type SanctionsEntry, type SanctionsList } from './parse.js';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { listFileName, readLists, SHIPPED_SANCTIONS_DIR } from './store.js';
import { countryCodes } from '../inputs.js';

/** Default minimum name score of a match. */
export const DEFAULT_THRESHOLD = 0.85;
/** Names holding a token above which it is a common word for candidate selection. */
const COMMON_TOKEN = 150;
/** Lowest token similarity that counts in a name score. */
const TOKEN_MIN = 0.75;

/** Words that say a legal form or join words, not who someone is. */
const STOPWORDS = new Set(['ltd', 'limited', 'sa', 'ab', 'as', 'oy', 'llc', 'inc', 'incorporated', 'co', 'company', 'corp', 'corporation', 'gmbh', 'ag', 'plc', 'jsc', 'ojsc', 'cjsc', 'pjsc', 'ooo', 'oao', 'zao', 'pao', 'ao', 'llp', 'lp', 'bv', 'nv', 'srl', 'spa', 'sarl', 'the', 'of', 'and', 'fze', 'fzco', 'fzc']);

/**
 * Legal forms written out, as their words appear after transliteration (longest first): OFAC
 * lists "PUBLIC JOINT STOCK COMPANY SBERBANK OF RUSSIA" and "OBSHCHESTVO S OGRANICHENNOI
 * OTVETSTVENNOSTYU VTB FOREKS", which their owners call "PJSC Sberbank of Russia" and "OOO VTB Foreks".
 */
const LEGAL_FORMS: readonly (readonly string[])[] = [
  'public joint stock company', 'open joint stock company', 'closed joint stock company', 'joint stock company', 'joint stock commercial bank',
  'limited liability company', 'limited liability partnership', 'private limited company', 'public limited company', 'sole proprietorship',
  'obshchestvo ogranichennoi otvetstvennostyu', 'obshchestvo ogranichennoy otvetstvennostyu', 'publichnoe aktsionernoe obshchestvo', 'otkrytoe aktsionernoe obshchestvo',
  'zakrytoe aktsionernoe obshchestvo', 'aktsionernoe obshchestvo', 'gesellschaft mit beschrankter haftung', 'aktiengesellschaft', 'societe anonyme', 'sociedad anonima',
  'limited sirketi', 'anonim sirketi',
].map((f) => f.split(' ')).sort((a, b) => b.length - a.length);

/** Country names that the lists spell in long form, to their short form ("of the Russian Federation" is "of Russia"). */
const COUNTRY_LONG_FORMS: readonly [readonly string[], readonly string[]][] = [
  ['russian federation', 'russia'], ['islamic republic of iran', 'iran'], ['democratic people republic of korea', 'north korea'], ['dprk', 'north korea'],
  ['republic of belarus', 'belarus'], ['syrian arab republic', 'syria'], ['bolivarian republic of venezuela', 'venezuela'], ['republic of cuba', 'cuba'],
].map(([l, s]) => [l.split(' '), s.split(' ')]);

/** Words too common in institution names to tell one from another ("Central Bank", "National Development Fund"). */
const GENERIC = new Set(['bank', 'central', 'national', 'state', 'trade', 'trading', 'group', 'international', 'commercial', 'development', 'investment', 'industrial', 'industries', 'industry', 'holding', 'holdings', 'ministry', 'republic', 'government', 'export', 'import', 'foreign', 'general', 'united', 'people', 'islamic', 'agricultural', 'academy', 'sciences', 'science', 'defense', 'defence', 'army', 'committee', 'council', 'office', 'party', 'front', 'university', 'institute', 'organization', 'organisation', 'foundation', 'society', 'association', 'union', 'federal', 'federation', 'fund', 'service', 'services', 'energy', 'atomic', 'election', 'commission', 'security', 'intelligence', 'company', 'companies', 'post', 'maritime', 'administration', 'technologies', 'technology', 'advanced', 'directorate', 'department', 'main', 'forces']);

let countryNames: ReadonlySet<string> | undefined;
/** Country names (English, lower case, words joined by one space): ISO 3166-1 codes named by the runtime's CLDR data, plus the short forms above. */
function countries(): ReadonlySet<string> {
  if (countryNames) return countryNames;
  const display = new Intl.DisplayNames(['en'], { type: 'region' });
  const out = new Set<string>(COUNTRY_LONG_FORMS.map(([, short]) => short.join(' ')));
  for (const code of countryCodes()) {
    const name = display.of(code);
    if (name && name !== code) for (const part of name.split(/\s*[(),&]\s*|\s+-\s+/)) out.add(words(part).join(' '));
  }
  out.delete('');
  return (countryNames = out);
}

/** ASCII lower-case words of a text (one-letter words dropped). */
function words(text: string): string[] {
  return anyAscii(text).toLowerCase().replace(/[^a-z0-9]+/g, ' ').trim().split(' ').filter((t) => t.length > 1);
}

/** `tokens` with each occurrence of a `from` sequence replaced by its `to` (or dropped when `to` is empty), longest sequences first. */
function replaceSequences(tokens: readonly string[], pairs: readonly (readonly [readonly string[], readonly string[]])[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < tokens.length; ) {
    const hit = pairs.find(([from]) => from.every((t, j) => tokens[i + j] === t));
    if (hit) {
      out.push(...hit[1]);
      i += hit[0].length;
    } else out.push(tokens[i++]);
  }
  return out;
}

const LEGAL_FORM_PAIRS = LEGAL_FORMS.map((f) => [f, []] as const);
const COUNTRY_PAIRS = [...COUNTRY_LONG_FORMS].sort((a, b) => b[0].length - a[0].length);

/** A name's tokens for matching, and, for a name ending in "of <country>", its tokens without it (see module comment). */
export interface NameForms {
  readonly tokens: readonly string[];
  /** The name without its trailing "of <country>", when what is left still names someone (a word of 5+ letters that is not a generic institution word). */
  readonly core?: readonly string[];
}

const dropStopwords = (all: readonly string[]): string[] => {
  const kept = all.filter((t) => !STOPWORDS.has(t));
  return kept.length ? kept : [...all];
};

/** Tokens of a name, and its form without a trailing "of <country>" (see NameForms). */
export function nameForms(name: string): NameForms {
  // People's / "of the" join words were one-letter or stopwords; what remains of legal forms written out is removed as a phrase.
  const raw = replaceSequences(replaceSequences(words(name).filter((t) => t !== 'the'), COUNTRY_PAIRS), LEGAL_FORM_PAIRS);
  const all = raw.length ? raw : words(name);
  const tokens = dropStopwords(all);
  const names = countries();
  for (let n = Math.min(4, all.length - 2); n >= 1; n--) {
    if (all[all.length - n - 1] !== 'of' || !names.has(all.slice(-n).join(' '))) continue;
    const core = dropStopwords(all.slice(0, -n - 1));
    if (core.some((t) => t.length >= 5 && !GENERIC.has(t) && !STOPWORDS.has(t))) return { tokens, core };
    break;
  }
  return { tokens };
}

/** Tokens of a name for matching (see module comment). */
export function nameTokens(name: string): string[] {
  return [...nameForms(name).tokens];
}

/** Similarity of two tokens in [0, 1]. */
function tokenSimilarity(a: string, b: string): number {
  if (a === b) return 1;
  return 1 - distance(a, b) / Math.max(a.length, b.length);
}

/** Token-order-insensitive fuzzy score of two token lists in [0, 1] (see module comment). */
export function nameScore(q: readonly string[], c: readonly string[]): number {
  const qLen = q.reduce((n, t) => n + t.length, 0);
  const cLen = c.reduce((n, t) => n + t.length, 0);
  if (qLen === 0 || cLen === 0) return 0;
  const used = new Array<boolean>(c.length).fill(false);
  let matched = 0;
  for (const t of [...q].sort((a, b) => b.length - a.length)) {
    let best = 0;
    let at = -1;
    for (let i = 0; i < c.length; i++) {
      if (used[i]) continue;
      const s = tokenSimilarity(t, c[i]);
      if (s > best) {
        best = s;
        at = i;
      }
    }
    if (at >= 0 && best >= TOKEN_MIN) {
      used[at] = true;
      matched += best * Math.min(t.length, c[at].length);
    }
  }
  return (2 * matched) / (qLen + cLen);
}

/** One listed name or alias in the index. */
interface IndexedName {
  readonly list: ListCode;
  readonly entry: SanctionsEntry;
  readonly text: string;
  readonly alias: boolean;
  readonly tokens: readonly string[];
  readonly core?: readonly string[];
}

/** A list as loaded: its date(s) and size. */
export interface ListStatus {
  readonly list: ListCode;
  readonly date: string;
  readonly parts: readonly ListPart[];
  readonly entries: number;
}

/** A list that could not be used, and why. */
export interface ListNotLoaded {
  readonly list: ListCode;
  readonly reason: string;
}

/** One hit of a screening. */
export interface ScreenMatch {
  readonly list: ListCode;
  /** The publisher's id of the entry. */
  readonly listId: string;
  /** The listed name or alias that matched. */
  readonly name: string;
  /** The entry's primary name. */
  readonly primaryName: string;
  /** Whether the matched name is an alias (a.k.a./f.k.a.) rather than the primary name. */
  readonly alias: boolean;
  readonly type: SanctionsEntry['type'];
  readonly programs: readonly string[];
  /** 1 for an exact address, else the name score (3 decimals). */
  readonly score: number;
  /** The date of the list that holds the entry (YYYY-MM-DD). */
  readonly listDate: string;
  /** For address hits: the asset and the listed address. */
  readonly asset?: string;
  readonly address?: string;
}

/** Outcome of a screening. */
export interface ScreenResult {
  readonly query: string;
  readonly kind: 'name' | 'address';
  /** For names: what kind of listed entries were compared (vessels and aircraft only for a query about one). */
  readonly subject?: ScreenSubject;
  readonly threshold: number;
  /** Best first; at most `limit`. */
  readonly matches: readonly ScreenMatch[];
  readonly listsUsed: readonly ListStatus[];
  readonly listsNotLoaded: readonly ListNotLoaded[];
}

/** What a name names: vessels and aircraft are matched only by a query about one, never by a person's or an organisation's name. */
export type ScreenSubject = 'person-or-organization' | 'vessel' | 'aircraft';

/** What a screening takes besides the query. */
export interface ScreenOptions {
  /** What the name names (default: a vessel when the name says so, "MV …", "M/T …", "vessel …", "IMO 1234567"; else a person or organisation). */
  readonly subject?: ScreenSubject;
  /** Lists to use (default: all). */
  readonly lists?: readonly ListCode[];
  readonly threshold?: number;
  /** Most matches returned (default 20). */
  readonly limit?: number;
}

/** The loaded lists with their indexes. */
export interface SanctionsIndex {
  readonly lists: ReadonlyMap<ListCode, SanctionsList>;
  screenName(name: string, opts?: ScreenOptions): ScreenResult;
  screenAddress(address: string, opts?: ScreenOptions): ScreenResult;
  /** An address when the text looks like one (no spaces, 25+ letters and digits), else a name. */
  screen(entity: string, opts?: ScreenOptions): ScreenResult;
}

const trigrams = (t: string): string[] => {
  const s = `$${t}$`;
  const out: string[] = [];
  for (let i = 0; i + 3 <= s.length; i++) out.push(s.slice(i, i + 3));
  return out;
};

/** Normal form of an address for exact comparison. */
export function normaliseAddress(a: string): string {
  const t = a.trim();
  return /^0x[0-9a-fA-F]{40}$/.test(t) ? t.toLowerCase() : t;
}

/** Whether `entity` is screened as an address. */
export function looksLikeAddress(entity: string): boolean {
  return /^[A-Za-z0-9]{25,100}$/.test(entity.trim()) && /\d/.test(entity);
}

/** Words that say a name is a ship's: a leading M/V, MV, M/T, MT, S/S or "vessel"/"tanker", or an IMO number. */
const VESSEL_MARKER = /^\s*(?:m\/?v|m\/?t|s\/s|vessel|tanker)\.?\s+|\bimo\s*(?:no\.?\s*)?\d{7}\b/i;

/** Builds the index over `lists`. */
export function createSanctionsIndex(lists: ReadonlyMap<ListCode, SanctionsList>): SanctionsIndex {
  const names: IndexedName[] = [];
  const addresses = new Map<string, { list: ListCode; entry: SanctionsEntry; asset: string; address: string }[]>();
  for (const [code, list] of lists) {
    for (const entry of list.entries) {
      for (const [text, alias] of [[entry.name, false], ...entry.aliases.map((a) => [a, true] as const)] as const) {
        const forms = nameForms(text);
        if (forms.tokens.length) names.push({ list: code, entry, text, alias, tokens: forms.tokens, ...(forms.core ? { core: forms.core } : {}) });
      }
      for (const a of entry.addresses ?? []) {
        const key = normaliseAddress(a.address);
        const hits = addresses.get(key) ?? [];
        hits.push({ list: code, entry, ...a });
        addresses.set(key, hits);
      }
    }
  }
  // token → names holding it; trigram → tokens.
  const byToken = new Map<string, number[]>();
  names.forEach((n, i) => {
    for (const t of new Set(n.tokens)) {
      const l = byToken.get(t);
      if (l) l.push(i);
      else byToken.set(t, [i]);
    }
  });
  const tokenList = [...byToken.keys()];
  const byTrigram = new Map<string, number[]>();
  tokenList.forEach((t, i) => {
    if (t.length < 3) return;
    for (const g of new Set(trigrams(t))) {
      const l = byTrigram.get(g);
      if (l) l.push(i);
      else byTrigram.set(g, [i]);
    }
  });

  /** Tokens of the index similar enough to `q` (itself included when present). */
  function similarTokens(q: string): string[] {
    const out = byToken.has(q) ? [q] : [];
    if (q.length < 4) return out;
    const grams = new Set(trigrams(q));
    const counts = new Map<number, number>();
    for (const g of grams) for (const i of byTrigram.get(g) ?? []) counts.set(i, (counts.get(i) ?? 0) + 1);
    const need = Math.max(1, Math.floor(grams.size * 0.34));
    for (const [i, n] of counts) {
      if (n < need) continue;
      const t = tokenList[i];
      if (t !== q && Math.abs(t.length - q.length) <= Math.ceil(q.length / 4) && tokenSimilarity(q, t) >= TOKEN_MIN) out.push(t);
    }
    return out;
  }

  function status(selected: readonly ListCode[]) {
    const used: ListStatus[] = [];
    const notLoaded: ListNotLoaded[] = [];
    for (const code of selected) {
      const l = lists.get(code);
      if (l) used.push({ list: code, date: l.date, parts: l.parts, entries: l.entries.length });
      else notLoaded.push({ list: code, reason: code === 'EU' ? 'no EU list on this node: run `npx native-node sanctions update` with internet access' : `no ${code} list on this node` });
    }
    return { used, notLoaded };
  }

  const selectedOf = (opts: ScreenOptions) => (opts.lists?.length ? LIST_CODES.filter((c) => opts.lists!.includes(c)) : LIST_CODES);

  function screenName(name: string, opts: ScreenOptions = {}): ScreenResult {
    const threshold = opts.threshold ?? DEFAULT_THRESHOLD;
    const selected = selectedOf(opts);
    const marked = VESSEL_MARKER.exec(name);
    const subject: ScreenSubject = opts.subject ?? (marked ? 'vessel' : 'person-or-organization');
    const forms = nameForms(marked ? name.replace(VESSEL_MARKER, ' ') : name);
    const q = forms.tokens;
    // A ship's name or former name ("ALPHA") is no organisation's ("Alpha GmbH"), and the reverse.
    const types: readonly SanctionsEntry['type'][] = subject === 'person-or-organization' ? ['individual', 'entity'] : [subject];
    // Candidates come from the query's rarer tokens: a name sharing only a common word ("trading",
    // "bank") with the query cannot reach the threshold when the query has a rarer word too.
    const postings = q.map((t) => similarTokens(t).map((s) => byToken.get(s)!));
    const size = (p: number[][]) => p.reduce((n, l) => n + l.length, 0);
    const rare = postings.filter((p) => size(p) <= COMMON_TOKEN);
    const candidates = new Set<number>();
    for (const p of threshold >= 0.7 && rare.length ? rare : postings) for (const l of p) for (const i of l) candidates.add(i);
    const best = new Map<SanctionsEntry, ScreenMatch>();
    for (const i of candidates) {
      const n = names[i];
      if (!selected.includes(n.list) || !types.includes(n.entry.type)) continue;
      // "of <country>" may be left out on either side, never on both (Central Bank of Iran is not Central Bank of Syria).
      const raw = Math.max(nameScore(q, n.tokens), forms.core && !n.core ? nameScore(forms.core, n.tokens) : 0, n.core && !forms.core ? nameScore(q, n.core) : 0);
      const score = Math.round(raw * 1000) / 1000;
      if (score < threshold) continue;
      const prev = best.get(n.entry);
      if (prev && prev.score >= score) continue;
      best.set(n.entry, { list: n.list, listId: n.entry.id, name: n.text, primaryName: n.entry.name, alias: n.alias, type: n.entry.type, programs: n.entry.programs, score, listDate: lists.get(n.list)!.date });
    }
    const matches = [...best.values()].sort((a, b) => b.score - a.score || a.listId.localeCompare(b.listId)).slice(0, opts.limit ?? 20);
    const s = status(selected);
    return { query: name, kind: 'name', subject, threshold, matches, listsUsed: s.used, listsNotLoaded: s.notLoaded };
  }

  function screenAddress(address: string, opts: ScreenOptions = {}): ScreenResult {
    const selected = selectedOf(opts);
    const hits = (addresses.get(normaliseAddress(address)) ?? []).filter((h) => selected.includes(h.list));
    const matches = hits.map((h) => {
      const l = lists.get(h.list)!;
      // An address from the separate address files carries that file's date.
      const date = h.entry.id === 'ofac-digital-currency' ? (l.parts.find((p) => /digital currency/i.test(p.name))?.date ?? l.date) : l.date;
      return { list: h.list, listId: h.entry.id, name: h.entry.name, primaryName: h.entry.name, alias: false, type: h.entry.type, programs: h.entry.programs, score: 1, listDate: date, asset: h.asset, address: h.address };
    });
    const s = status(selected);
    return { query: address, kind: 'address', threshold: 1, matches: matches.slice(0, opts.limit ?? 20), listsUsed: s.used, listsNotLoaded: s.notLoaded };
  }

  return {
    lists,
    screenName,
    screenAddress,
    screen: (entity, opts) => (looksLikeAddress(entity) ? screenAddress(entity, opts) : screenName(entity, opts)),
  };
}

let dirs: readonly string[] = [SHIPPED_SANCTIONS_DIR];
let loaded: { index: SanctionsIndex; stamp: string; checkedAt: number } | undefined;
/** How often a running node looks for lists replaced by `native-node sanctions update`, ms. */
const RECHECK_MS = 60_000;

/** Modification times of the list files: changes when an update swapped a list in. */
function filesStamp(): string {
  return dirs.flatMap((d) => LIST_CODES.map((c) => {
    try {
      return String(statSync(join(d, listFileName(c))).mtimeMs);
    } catch {
      return '-';
    }
  })).join(',');
}

/**
 * Adds the node's own list directory (filled by `native-node sanctions update`) to the shipped
 * one; the newer list of each code wins. Drops the loaded index so the next screening reloads.
 */
export function useSanctionsDir(dir: string): void {
  dirs = [SHIPPED_SANCTIONS_DIR, dir];
  loaded = undefined;
}

/** The health of a sanctions service while no list file is present. */
export const SANCTIONS_MISSING_HEALTH = Object.freeze({ status: 'down' as const, reason: Object.freeze({ code: 'data_not_installed', message: 'no sanctions list is installed: run `npx native-node sanctions update`' }) });

/** Whether any list file is present (cheap: for health probes, without loading the index). */
export function sanctionsAvailable(): boolean {
  return dirs.some((d) => LIST_CODES.some((c) => existsSync(join(d, listFileName(c)))));
}

/**
 * The index over the lists found: loaded at first use (~0.3 s), then kept; reloaded when a list
 * file changed (checked at most once a minute), so an update reaches a running node.
 */
export function sanctionsIndex(now = Date.now()): SanctionsIndex {
  if (loaded && now - loaded.checkedAt < RECHECK_MS) return loaded.index;
  const stamp = filesStamp();
  if (!loaded || loaded.stamp !== stamp) loaded = { index: createSanctionsIndex(readLists(dirs)), stamp, checkedAt: now };
  else loaded.checkedAt = now;
  return loaded.index;
}
