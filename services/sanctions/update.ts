/**
 * `native-node sanctions update`: downloads the official OFAC, UN and EU files, converts and
 * validates each, and swaps it in atomically (services/sanctions/store.ts). A list whose download,
 * parse or validation fails keeps the copy the node already has; the others are still updated.
 */
import { addOfacAltCsv, OFFICIAL_SOURCES, parseEuFsfXml, parseOfacSdnCsv, parseUnConsolidatedXml, type ListCode, type SanctionsList } from './parse.js';
import { readList, writeListAtomic } from './store.js';

/** Smallest plausible size of each official list (entries); fewer means a truncated or wrong file. */
export const MIN_ENTRIES: Readonly<Record<ListCode, number>> = { OFAC: 5_000, UN: 500, EU: 1_000 };
/** Largest accepted download, bytes. */
const MAX_BYTES = 200 * 1024 * 1024;

/** What an update does. */
export interface SanctionsUpdateOptions {
  /** Directory the node reads updated lists from (`<data dir>/sanctions`). */
  readonly dir: string;
  /** Download address per list (default: the official ones). */
  readonly sources?: Partial<Record<ListCode, string>>;
  /**
   * OFAC's alias file (ALT.CSV); default: beside the SDN.CSV address when that ends in SDN.CSV.
   * Optional: when it cannot be read, the list keeps the aliases SDN.CSV's remarks give, and the
   * outcome says so.
   */
  readonly ofacAltSource?: string;
  /** Lists to update (default: all three). */
  readonly lists?: readonly ListCode[];
  readonly minEntries?: Partial<Record<ListCode, number>>;
  /** Deadline of one download, ms (default 120 s). */
  readonly timeoutMs?: number;
  /** Unix ms; dates OFAC's file (SDN.CSV carries no date) when the server sends no Last-Modified. */
  readonly now?: () => number;
}

/** Outcome for one list. */
export type SanctionsUpdateOutcome =
  | { readonly list: ListCode; readonly ok: true; readonly date: string; readonly entries: number; readonly previousDate?: string; readonly warning?: string }
  | { readonly list: ListCode; readonly ok: false; readonly error: string; readonly kept?: string };

async function download(url: string, timeoutMs: number): Promise<{ text: string; lastModified?: string }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'follow' });
  if (!res.ok) throw new Error(`HTTP ${res.status} from ${url}`);
  const len = Number(res.headers.get('content-length') ?? 0);
  if (len > MAX_BYTES) throw new Error(`${url} is larger than ${MAX_BYTES} bytes`);
  const buf = Buffer.from(await res.arrayBuffer());
  if (buf.length > MAX_BYTES) throw new Error(`${url} is larger than ${MAX_BYTES} bytes`);
  return { text: buf.toString('utf8'), lastModified: res.headers.get('last-modified') ?? undefined };
}

function parseList(code: ListCode, text: string, date: string, source: string): SanctionsList {
  if (code === 'OFAC') return parseOfacSdnCsv(text, date, source);
  if (code === 'UN') return parseUnConsolidatedXml(text, source);
  return parseEuFsfXml(text, source);
}

/** Updates each list; never throws for one list's failure (see the outcomes). */
export async function updateSanctionsLists(opts: SanctionsUpdateOptions): Promise<SanctionsUpdateOutcome[]> {
  const out: SanctionsUpdateOutcome[] = [];
  for (const code of opts.lists ?? (['OFAC', 'UN', 'EU'] as const)) {
    const url = opts.sources?.[code] ?? OFFICIAL_SOURCES[code];
    const current = readList(opts.dir, code);
    try {
      const { text, lastModified } = await download(url, opts.timeoutMs ?? 120_000);
      const modified = lastModified ? new Date(lastModified) : undefined;
      const date = (modified && !Number.isNaN(modified.getTime()) ? modified : new Date((opts.now ?? Date.now)())).toISOString().slice(0, 10);
      let list = parseList(code, text, date, url);
      let warning: string | undefined;
      const alt = code === 'OFAC' ? (opts.ofacAltSource ?? (/SDN\.CSV$/i.test(url) ? url.replace(/SDN\.CSV$/i, 'ALT.CSV') : undefined)) : undefined;
      if (alt) {
        try {
          list = addOfacAltCsv(list, (await download(alt, opts.timeoutMs ?? 120_000)).text).list;
          list = { ...list, parts: [...list.parts, { name: 'OFAC SDN aliases (ALT.CSV)', date: list.date, source: alt }] };
        } catch (e) {
          warning = `aliases of ALT.CSV not added (${e instanceof Error ? e.message : String(e)}): only those in SDN.CSV's remarks`;
        }
      }
      const min = opts.minEntries?.[code] ?? MIN_ENTRIES[code];
      if (list.entries.length < min) throw new Error(`only ${list.entries.length} entries (expected at least ${min}): not swapped in`);
      if (current && list.date < current.date) throw new Error(`downloaded list is dated ${list.date}, older than the current ${current.date}: not swapped in`);
      writeListAtomic(opts.dir, list);
      out.push({ list: code, ok: true, date: list.date, entries: list.entries.length, ...(current ? { previousDate: current.date } : {}), ...(warning ? { warning } : {}) });
    } catch (e) {
      out.push({ list: code, ok: false, error: e instanceof Error ? e.message : String(e), ...(current ? { kept: current.date } : {}) });
    }
  }
  return out;
}
