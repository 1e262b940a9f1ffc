// Writes services/data/tz/zones.json: every zone and link name of the tz database installed on
// this machine (/usr/share/zoneinfo, Debian's tzdata) with the POSIX TZ rule at the end of its
// TZif file (e.g. "CET-1CEST,M3.5.0,M10.5.0/3"), which names the zone's current abbreviations.
// native-world-clock reads it for the abbreviations `date +%Z` prints (ICU prints "GMT+1" for
// many zones) and to answer with the zone name as asked, not ICU's canonical link target.
// Run: node scripts/tzAbbreviations.mjs [zoneinfo dir]
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2] ?? '/usr/share/zoneinfo';
const zi = readFileSync(join(dir, 'tzdata.zi'), 'utf8').split('\n');
const version = zi[0].replace(/^# version /, '').trim();
const names = new Set();
for (const line of zi) {
  const f = line.split(/\s+/);
  if (f[0] === 'Z') names.add(f[1]);
  else if (f[0] === 'L') names.add(f[2]);
}
const zones = {};
for (const name of [...names].sort()) {
  const bytes = readFileSync(join(dir, name));
  if (bytes.subarray(0, 4).toString('latin1') !== 'TZif') throw new Error(`${name}: not a TZif file`);
  const lines = bytes.toString('latin1').split('\n');
  const footer = lines[lines.length - 2];
  if (!footer) throw new Error(`${name}: no POSIX TZ footer (TZif v1?)`);
  zones[name] = footer;
}
const out = { source: `IANA tz database ${version}, read from ${dir} (Debian tzdata)`, generated: new Date().toISOString().slice(0, 10), zones };
writeFileSync(new URL('../services/data/tz/zones.json', import.meta.url), JSON.stringify(out, null, 0) + '\n');
console.log(`${Object.keys(zones).length} zones, tzdata ${version}`);
