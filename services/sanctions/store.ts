/**
 * Where the converted sanctions lists live and how they are read and replaced.
 *
 * Two places, the newer list winning: the copy shipped in the repository (`services/data/sanctions/`,
 * converted by scripts/convert-sanctions.ts from dated snapshots) and the node's own directory
 * (`<data dir>/sanctions/`) that `native-node sanctions update` fills. A list file is
 * `<code>.json` (`ofac.json`, `un.json`, `eu.json`), written to a temporary file then renamed, so
 * a reader sees the old list or the new one, never half of one.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { PROJECT_ROOT } from '../projectRoot.js';
import { LIST_CODES, type ListCode, type SanctionsList } from './parse.js';

/** The lists shipped in the repository. */
export const SHIPPED_SANCTIONS_DIR = resolve(PROJECT_ROOT, 'services', 'data', 'sanctions');

/** File name of a list. */
export function listFileName(code: ListCode): string {
  return `${code.toLowerCase()}.json`;
}

/** Writes `list` into `dir` atomically (temporary file + rename); returns the path. */
export function writeListAtomic(dir: string, list: SanctionsList): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, listFileName(list.list));
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, `${JSON.stringify(list)}\n`);
  renameSync(tmp, file);
  return file;
}

/** Reads the list `code` from `dir`; undefined when absent or unreadable. */
export function readList(dir: string, code: ListCode): SanctionsList | undefined {
  const file = join(dir, listFileName(code));
  if (!existsSync(file)) return undefined;
  try {
    const list = JSON.parse(readFileSync(file, 'utf8')) as SanctionsList;
    return list.list === code && Array.isArray(list.entries) && /^\d{4}-\d{2}-\d{2}$/.test(list.date) ? list : undefined;
  } catch {
    return undefined;
  }
}

/** Every list found in `dirs`, the most recent date winning when several have one. */
export function readLists(dirs: readonly string[]): Map<ListCode, SanctionsList> {
  const out = new Map<ListCode, SanctionsList>();
  for (const code of LIST_CODES) {
    for (const dir of dirs) {
      const list = readList(dir, code);
      const have = out.get(code);
      if (list && (!have || list.date > have.date)) out.set(code, list);
    }
  }
  return out;
}
