/**
 * Parsers of the publishers' own sanctions formats into the project's compact form: OFAC's
 * `SDN.CSV` (aliases and digital-currency addresses live in its Remarks column), OFAC's
 * per-asset digital-currency address lists, the UN Security Council `CONSOLIDATED_LIST` XML and
 * the EU Financial Sanctions Files "full" XML (v1.1). Used by the conversion script
 * (scripts/convert-sanctions.ts) and by `native-node sanctions update`.
 */
import { parse as parseCsv } from 'csv-parse/sync';
import { XMLParser } from 'fast-xml-parser';

/** The lists the screening knows. */
export type ListCode = 'OFAC' | 'EU' | 'UN';
export const LIST_CODES: readonly ListCode[] = ['OFAC', 'EU', 'UN'];

/** One listed person, company, vessel or aircraft. */
export interface SanctionsEntry {
  /** The publisher's id (OFAC ent_num, UN reference number, EU logicalId). */
  readonly id: string;
  readonly name: string;
  readonly aliases: readonly string[];
  readonly type: 'individual' | 'entity' | 'vessel' | 'aircraft';
  readonly programs: readonly string[];
  /** Crypto addresses named by the list for this entry. */
  readonly addresses?: readonly { readonly asset: string; readonly address: string }[];
}

/** One dated source file a list was converted from. */
export interface ListPart {
  readonly name: string;
  /** YYYY-MM-DD: the publisher's date of the file. */
  readonly date: string;
  readonly source: string;
}

/** A converted list: what the screening loads. */
export interface SanctionsList {
  readonly list: ListCode;
  /** YYYY-MM-DD: the date of the list (its main file). */
  readonly date: string;
  readonly parts: readonly ListPart[];
  readonly entries: readonly SanctionsEntry[];
}

/** Raised when a publisher's file does not have the expected shape. */
export class SanctionsFormatError extends Error {
  readonly code = 'sanctions_format';
}

/** Official addresses of the publishers' files. */
export const OFFICIAL_SOURCES: Readonly<Record<ListCode, string>> = {
  OFAC: 'https://sanctionslistservice.ofac.treas.gov/api/PublicationPreview/exports/SDN.CSV',
  UN: 'https://scsanctions.un.org/resources/xml/en/consolidated.xml',
  EU: 'https://webgate.ec.europa.eu/fsd/fsf/public/files/xmlFullSanctionsList_1_1/content?token=dG9rZW4tMjAxNw',
};

const clean = (s: unknown): string => (typeof s === 'string' || typeof s === 'number' ? String(s) : '').replace(/\s+/g, ' ').trim();
const OFAC_EMPTY = '-0-';

/** OFAC `SDN.CSV` (no header row; `-0-` = empty) as entries; `date` is the publication date, YYYY-MM-DD. */
export function parseOfacSdnCsv(text: string, date: string, source = OFFICIAL_SOURCES.OFAC): SanctionsList {
  const rows = parseCsv(text, { relax_column_count: true, skip_empty_lines: true, relax_quotes: true }) as string[][];
  const entries: SanctionsEntry[] = [];
  for (const row of rows) {
    if (row.length < 4) continue;
    const [id, rawName, rawType, program] = row.map((c) => clean(c));
    // The file ends with a one-column control line; data rows start with the numeric ent_num.
    if (!/^\d+$/.test(id) || !rawName || rawName === OFAC_EMPTY) continue;
    const remarks = clean(row[11]);
    const aliases = [...remarks.matchAll(/\b[afn]\.k\.a\.,? '([^']+)'/gi)].map((m) => clean(m[1]));
    const addresses = [...remarks.matchAll(/Digital Currency Address - ([A-Z0-9]+) ([A-Za-z0-9]+)/g)].map((m) => ({ asset: m[1], address: m[2] }));
    const t = rawType.toLowerCase();
    const type = t === 'individual' ? 'individual' : t === 'vessel' ? 'vessel' : t === 'aircraft' ? 'aircraft' : 'entity';
    entries.push({ id, name: rawName, aliases: [...new Set(aliases)], type, programs: program && program !== OFAC_EMPTY ? program.split(/\]\s*\[|;\s*/).map((p) => p.replace(/[[\]]/g, '').trim()).filter(Boolean) : [], ...(addresses.length ? { addresses } : {}) });
  }
  if (entries.length === 0) throw new SanctionsFormatError('not an OFAC SDN.CSV file: no entry rows');
  return { list: 'OFAC', date, parts: [{ name: 'OFAC SDN list (SDN.CSV)', date, source }], entries };
}

/**
 * Adds the aliases of OFAC's `ALT.CSV` (ent_num, alt_num, alt_type aka/fka/nka, alt_name,
 * alt_remarks; no header, `-0-` = empty) to a converted SDN list: SDN.CSV's Remarks name only
 * some of them. Rows of unknown entries are ignored; returns the list and how many were added.
 */
export function addOfacAltCsv(list: SanctionsList, text: string): { list: SanctionsList; added: number } {
  const rows = parseCsv(text, { relax_column_count: true, skip_empty_lines: true, relax_quotes: true }) as string[][];
  const byId = new Map<string, string[]>();
  for (const row of rows) {
    const id = clean(row[0]);
    const name = clean(row[3]);
    if (!/^\d+$/.test(id) || !name || name === OFAC_EMPTY) continue;
    byId.set(id, [...(byId.get(id) ?? []), name]);
  }
  if (byId.size === 0) throw new SanctionsFormatError('not an OFAC ALT.CSV file: no alias rows');
  let added = 0;
  const entries = list.entries.map((e) => {
    const extra = (byId.get(e.id) ?? []).filter((a) => a !== e.name && !e.aliases.includes(a));
    added += new Set(extra).size;
    return extra.length ? { ...e, aliases: [...new Set([...e.aliases, ...extra])] } : e;
  });
  return { list: { ...list, entries }, added };
}

/**
 * Adds OFAC's per-asset digital-currency address files (one address a line) to a converted SDN
 * list: addresses the SDN remarks already name keep their entry; the others are listed under an
 * entry of their own, since those files do not say whose address it is.
 */
export function addOfacAddressFiles(list: SanctionsList, files: readonly { asset: string; text: string }[], date: string, source: string): SanctionsList {
  const known = new Set(list.entries.flatMap((e) => (e.addresses ?? []).map((a) => a.address)));
  const extra: { asset: string; address: string }[] = [];
  for (const f of files) {
    for (const line of f.text.split(/\r?\n/)) {
      const address = line.trim();
      if (address && !known.has(address)) {
        known.add(address);
        extra.push({ asset: f.asset, address });
      }
    }
  }
  const entries = extra.length ? [...list.entries, { id: 'ofac-digital-currency', name: 'OFAC SDN digital currency address (owner not given by the address file)', aliases: [], type: 'entity' as const, programs: [], addresses: extra }] : list.entries;
  return { ...list, parts: [...list.parts, { name: 'OFAC SDN digital currency addresses', date, source }], entries };
}

function xmlParser(arrays: readonly string[]): XMLParser {
  const set = new Set(arrays);
  return new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', parseTagValue: false, parseAttributeValue: false, trimValues: true, removeNSPrefix: true, isArray: (name) => set.has(name) });
}

/** Text of an XML value that may be a string, an object with `#text`, or a list of `{VALUE}`. */
function values(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v.flatMap(values);
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if ('VALUE' in o) return values(o.VALUE);
    if ('#text' in o) return values(o['#text']);
    return [];
  }
  const s = clean(v);
  return s ? [s] : [];
}

/** The UN Security Council Consolidated List XML; the date is its `dateGenerated`. */
export function parseUnConsolidatedXml(text: string, source = OFFICIAL_SOURCES.UN): SanctionsList {
  const doc = xmlParser(['INDIVIDUAL', 'ENTITY', 'INDIVIDUAL_ALIAS', 'ENTITY_ALIAS', 'VALUE']).parse(text) as Record<string, any>;
  const root = doc.CONSOLIDATED_LIST;
  if (!root || typeof root !== 'object') throw new SanctionsFormatError('not a UN CONSOLIDATED_LIST XML file');
  const date = clean(root.dateGenerated).slice(0, 10);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) throw new SanctionsFormatError('UN list without dateGenerated');
  const entries: SanctionsEntry[] = [];
  const aliasesOf = (list: unknown): string[] => (Array.isArray(list) ? list.flatMap((a: Record<string, unknown>) => values(a.ALIAS_NAME)) : []);
  for (const p of (root.INDIVIDUALS?.INDIVIDUAL ?? []) as Record<string, unknown>[]) {
    const name = ['FIRST_NAME', 'SECOND_NAME', 'THIRD_NAME', 'FOURTH_NAME'].flatMap((k) => values(p[k])).join(' ');
    if (!name) continue;
    const original = values(p.NAME_ORIGINAL_SCRIPT);
    entries.push({ id: clean(p.REFERENCE_NUMBER) || clean(p.DATAID), name, aliases: [...new Set([...aliasesOf(p.INDIVIDUAL_ALIAS), ...original])], type: 'individual', programs: values(p.UN_LIST_TYPE) });
  }
  for (const e of (root.ENTITIES?.ENTITY ?? []) as Record<string, unknown>[]) {
    const name = values(e.FIRST_NAME).join(' ');
    if (!name) continue;
    entries.push({ id: clean(e.REFERENCE_NUMBER) || clean(e.DATAID), name, aliases: [...new Set(aliasesOf(e.ENTITY_ALIAS))], type: 'entity', programs: values(e.UN_LIST_TYPE) });
  }
  if (entries.length === 0) throw new SanctionsFormatError('UN list without INDIVIDUAL or ENTITY entries');
  return { list: 'UN', date, parts: [{ name: 'UN Security Council Consolidated List', date, source }], entries };
}

/**
 * The EU Financial Sanctions Files "full" XML, v1.1: `<export generationDate>`, then
 * `<sanctionEntity logicalId euReferenceNumber>` with `<subjectType code="person|enterprise">`,
 * `<nameAlias wholeName …>` (the first is the primary name) and `<regulation programme>`.
 */
export function parseEuFsfXml(text: string, source = OFFICIAL_SOURCES.EU): SanctionsList {
  const doc = xmlParser(['sanctionEntity', 'nameAlias', 'regulation']).parse(text) as Record<string, any>;
  const root = doc.export;
  if (!root || typeof root !== 'object') throw new SanctionsFormatError('not an EU Financial Sanctions Files export');
  const date = clean(root.generationDate).slice(0, 10);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) throw new SanctionsFormatError('EU export without generationDate');
  const entries: SanctionsEntry[] = [];
  for (const s of (root.sanctionEntity ?? []) as Record<string, any>[]) {
    const names = ((s.nameAlias ?? []) as Record<string, unknown>[])
      .map((a) => clean(a.wholeName) || [clean(a.firstName), clean(a.middleName), clean(a.lastName)].filter(Boolean).join(' '))
      .filter(Boolean);
    if (names.length === 0) continue;
    const code = clean(s.subjectType?.code);
    const programs = ((s.regulation ?? []) as Record<string, unknown>[]).map((r) => clean(r.programme)).filter(Boolean);
    entries.push({
      id: clean(s.euReferenceNumber) || clean(s.logicalId),
      name: names[0],
      aliases: [...new Set(names.slice(1))].filter((n) => n !== names[0]),
      type: code === 'person' ? 'individual' : 'entity',
      programs: [...new Set(programs)],
    });
  }
  if (entries.length === 0) throw new SanctionsFormatError('EU export without sanctionEntity entries');
  return { list: 'EU', date, parts: [{ name: 'EU Financial Sanctions Files (consolidated list)', date, source }], entries };
}
