/** native-world-clock: current time, UTC offset, date and ISO timestamp in an IANA time zone (UTC when empty). */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { defineService } from './define.js';
import { PROJECT_ROOT } from './projectRoot.js';
import type { ServiceContext } from './types.js';

/** The tz database's zone and link names with the POSIX TZ rule of each (services/data/tz/zones.json, scripts/tzAbbreviations.mjs). */
interface TzTable {
  readonly source: string;
  readonly zones: Readonly<Record<string, string>>;
}
let tzTable: { source: string; rules: Map<string, string>; byLowerName: Map<string, string> } | undefined;
function tz() {
  if (!tzTable) {
    const t = JSON.parse(readFileSync(resolve(PROJECT_ROOT, 'services', 'data', 'tz', 'zones.json'), 'utf8')) as TzTable;
    const rules = new Map(Object.entries(t.zones));
    tzTable = { source: t.source, rules, byLowerName: new Map([...rules.keys()].map((n) => [n.toLowerCase(), n])) };
  }
  return tzTable;
}

/**
 * The abbreviations of a POSIX TZ rule (`CET-1CEST,M3.5.0,M10.5.0/3`, `<+0545>-5:45`,
 * `IST-1GMT0,…`) with their UTC offsets in minutes east; `dst` absent for zones without DST.
 */
export function parsePosixTz(rule: string): { std: { abbr: string; offsetMinutes: number }; dst?: { abbr: string; offsetMinutes: number } } | undefined {
  const m = /^(<[^>]+>|[A-Za-z]{3,})([+-]?\d{1,2}(?::\d{2}){0,2})(?:(<[^>]+>|[A-Za-z]{3,})([+-]?\d{1,2}(?::\d{2}){0,2})?)?(?:,|$)/.exec(rule);
  if (!m) return undefined;
  const name = (s: string) => s.replace(/^<|>$/g, '');
  // POSIX offsets are hours west of UTC: negate.
  const east = (s: string) => {
    const sign = s.startsWith('-') ? -1 : 1;
    const [h, mm = '0'] = s.replace(/^[+-]/, '').split(':');
    return -sign * (Number(h) * 60 + Number(mm)) || 0; // no -0
  };
  const std = { abbr: name(m[1]!), offsetMinutes: east(m[2]!) };
  if (!m[3]) return { std };
  return { std, dst: { abbr: name(m[3]), offsetMinutes: m[4] ? east(m[4]) : std.offsetMinutes + 60 } };
}

/** The tz database's abbreviation of `zone` at a UTC offset (e.g. CET / CEST), undefined when the table does not know it. */
function tzAbbreviation(zone: string, offsetMinutes: number): string | undefined {
  const rule = tz().rules.get(zone);
  const p = rule === undefined ? undefined : parsePosixTz(rule);
  if (!p) return undefined;
  if (p.std.offsetMinutes === offsetMinutes) return p.std.abbr;
  if (p.dst?.offsetMinutes === offsetMinutes) return p.dst.abbr;
  return undefined; // the zone's rules changed since the table was made: ICU's text is better than a wrong name
}

const pad = (n: number, w = 2) => String(Math.abs(n)).padStart(w, '0');

/** Formatters by zone name: building one costs far more than using it. Bounded (IANA has ~600 zones, plus aliases). */
const formatters = new Map<string, Intl.DateTimeFormat>();
const MAX_FORMATTERS = 1024;

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  const cached = formatters.get(timeZone);
  if (cached) return cached;
  const fmt = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    weekday: 'long',
    timeZoneName: 'short',
  }); // throws RangeError for an unknown zone: nothing is cached then
  if (formatters.size >= MAX_FORMATTERS) formatters.delete(formatters.keys().next().value!);
  formatters.set(timeZone, fmt);
  return fmt;
}

/** Wall-clock fields of `ms` in `timeZone` (Intl, ICU time zone data). */
function wallClock(ms: number, timeZone: string) {
  const fmt = formatterFor(timeZone);
  const parts: Record<string, string> = {};
  for (const p of fmt.formatToParts(ms)) parts[p.type] = p.value;
  const year = Number(parts.year);
  const month = Number(parts.month);
  const day = Number(parts.day);
  const hour = Number(parts.hour);
  const minute = Number(parts.minute);
  const second = Number(parts.second);
  // Offset = the wall clock read as UTC minus the instant (whole seconds; zone offsets have no sub-second part).
  const offsetMinutes = Math.round((Date.UTC(year, month - 1, day, hour, minute, second) - Math.floor(ms / 1000) * 1000) / 60_000);
  return { year, month, day, hour, minute, second, weekday: parts.weekday, abbreviation: parts.timeZoneName, offsetMinutes, resolved: fmt.resolvedOptions().timeZone };
}

function offsetText(minutes: number): string {
  return `${minutes < 0 ? '-' : '+'}${pad(Math.trunc(Math.abs(minutes) / 60))}:${pad(Math.abs(minutes) % 60)}`;
}

async function run(ctx: ServiceContext, input: unknown) {
  const requested = typeof input === 'string' && input !== '' ? input : 'UTC';
  const now = ctx.now();
  const w = wallClock(now, requested);
  const year = new Date(now).getUTCFullYear();
  const jan = wallClock(Date.UTC(year, 0, 1), requested).offsetMinutes;
  const jul = wallClock(Date.UTC(year, 6, 1), requested).offsetMinutes;
  const date = `${w.year}-${pad(w.month)}-${pad(w.day)}`;
  const time = `${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}`;
  const millis = pad(((now % 1000) + 1000) % 1000, 3);
  const offset = offsetText(w.offsetMinutes);
  // The zone as asked (Asia/Kolkata, not ICU's canonical Asia/Calcutta), spelt as the tz database spells it.
  const zone = tz().byLowerName.get(requested.toLowerCase()) ?? w.resolved;
  return {
    timezone: zone,
    requested,
    iso: `${date}T${time}.${millis}${offset}`,
    utc: new Date(now).toISOString(),
    unixMs: now,
    unix: Math.floor(now / 1000),
    date,
    time,
    weekday: w.weekday,
    utcOffset: offset,
    utcOffsetMinutes: w.offsetMinutes,
    abbreviation: tzAbbreviation(zone, w.offsetMinutes) ?? w.abbreviation,
    observesDst: jan !== jul,
    isDst: jan !== jul && w.offsetMinutes === Math.max(jan, jul),
  };
}

/** native-world-clock. */
export const worldClock = defineService({
  id: 'native-world-clock',
  name: 'World Clock',
  category: 'utility',
  priceBase: 200_000n,
  description: 'current time, UTC offset, date, ISO timestamp',
  tags: ['time', 'clock', 'timezone', 'iana', 'utc', 'date', 'utility'],
  requestFormat: 'IANA time zone name, e.g. Europe/Berlin (empty: UTC)',
  requestRequired: false,
  inputSchema: {
    type: 'string',
    maxLength: 64,
    pattern: '^[A-Za-z][A-Za-z0-9_+\\-/]{0,63}$',
    'x-timezone': true,
    description: 'IANA time zone name, e.g. Europe/Berlin, America/New_York, UTC.',
  },
  run,
  health: async () => (isTimeZoneDataPresent() ? 'active' : 'degraded'),
});

function isTimeZoneDataPresent(): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: 'Europe/Berlin' });
    return true;
  } catch {
    return false;
  }
}
