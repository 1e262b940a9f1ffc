/**
 * Converts the publishers' sanctions files into the project's compact lists (services/data/sanctions/*.json),
 * which the node ships and loads; nothing reads the publishers' files at run time.
 *
 *   node --import tsx scripts/convert-sanctions.ts <dir with the publishers' files> [out dir]
 *
 * Reads, when present: `ofac-sdn-<date>.csv` (OFAC SDN.CSV) with `ofac-digital-currency-<date>-<ASSET>.txt`,
 * `un-consolidated-<date>.xml` (UN CONSOLIDATED_LIST) and `eu-fsf-<date>.xml` (EU FSF full XML v1.1).
 * The dates in the OFAC file names are the publication dates (SDN.CSV carries none itself).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { addOfacAddressFiles, parseEuFsfXml, parseOfacSdnCsv, parseUnConsolidatedXml, type SanctionsList } from '../services/sanctions/parse.js';
import { SHIPPED_SANCTIONS_DIR, writeListAtomic } from '../services/sanctions/store.js';

const [inDir, outArg] = process.argv.slice(2);
if (!inDir) {
  console.error('usage: node --import tsx scripts/convert-sanctions.ts <input dir> [output dir]');
  process.exit(1);
}
const outDir = outArg ? resolve(outArg) : SHIPPED_SANCTIONS_DIR;
const files = readdirSync(inDir);
const read = (f: string) => readFileSync(join(inDir, f), 'utf8');
const lists: SanctionsList[] = [];

const sdn = files.find((f) => /^ofac-sdn-\d{4}-\d{2}-\d{2}\.csv$/.test(f));
if (sdn) {
  let ofac = parseOfacSdnCsv(read(sdn), sdn.slice(9, 19), `${sdn} (OFAC SDN.CSV)`);
  const dc = files.map((f) => /^ofac-digital-currency-(\d{4}-\d{2}-\d{2})-([A-Z0-9]+)\.txt$/.exec(f)).filter((m) => m !== null);
  if (dc.length) ofac = addOfacAddressFiles(ofac, dc.map((m) => ({ asset: m[2], text: read(m[0]) })), dc[0][1], `ofac-digital-currency-${dc[0][1]}-<ASSET>.txt (OFAC SDN "Digital Currency Address" entries)`);
  lists.push(ofac);
}
const un = files.find((f) => /^un-consolidated-.*\.xml$/.test(f));
if (un) lists.push(parseUnConsolidatedXml(read(un), `${un} (UN Security Council Consolidated List XML)`));
const eu = files.find((f) => /^eu-fsf-.*\.xml$/.test(f));
if (eu) lists.push(parseEuFsfXml(read(eu), `${eu} (EU Financial Sanctions Files XML v1.1)`));

for (const list of lists) {
  const file = writeListAtomic(outDir, list);
  const addresses = list.entries.reduce((n, e) => n + (e.addresses?.length ?? 0), 0);
  console.log(`${list.list} ${list.date}: ${list.entries.length} entries, ${addresses} addresses → ${file}`);
}
