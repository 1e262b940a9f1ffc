/**
 * Building blocks of the services' input schemas (JSON Schema, validated with ajv) and the
 * custom keywords they use where a pattern cannot say it: `x-timezone` (an IANA zone this
 * runtime knows), `x-url` (an absolute http(s) URL), `x-text-or-url` (a text of at least N characters, or such a URL), `x-ip` (an IPv4 or IPv6 address),
 * `x-date` (a YYYY-MM-DD date that exists on the calendar: no 2031-02-30),
 * `x-country` (an assigned ISO 3166-1 alpha-2 code, any case: services/data/compliance/iso3166-alpha2.json),
 * `x-currency` (an ISO 4217 currency code: services/data/compliance/iso4217.json),
 * `x-address` (a valid address of a given family, checksum included) and `x-ens-name` (a name
 * ENSIP-15 normalization accepts). Custom keywords carry the
 * `x-` prefix of OpenAPI extensions, so MCP and OpenAPI consumers that do not know them ignore them.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { ens_normalize } from '@adraffy/ens-normalize';
import type { KeywordDefinition, SchemaValidateFunction } from 'ajv';
import { classifyAddress, type AddressFamily } from './addresses.js';
import { PROJECT_ROOT } from './projectRoot.js';

/** Longest `request` string any service accepts (characters). */
export const MAX_REQUEST_CHARS = 65_536;

/** Whether `tz` is an IANA time zone name this runtime's ICU knows (case-insensitive, links included). */
export function isTimeZone(tz: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/.test(tz)) return false;
  const known = zoneCache.get(tz);
  if (known !== undefined) return known;
  let ok: boolean;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    ok = true;
  } catch {
    ok = false;
  }
  // Building a DateTimeFormat costs ~56 µs; the set of zone names is small and fixed.
  if (zoneCache.size < 4096) zoneCache.set(tz, ok);
  return ok;
}

const zoneCache = new Map<string, boolean>();

/** Whether `s` is a YYYY-MM-DD date that exists (leap years counted: 2028-02-29 yes, 2031-02-30 no). */
export function isCalendarDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const t = new Date(Date.UTC(y, mo - 1, d));
  return t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d;
}

let countries: ReadonlySet<string> | undefined;
/** The assigned ISO 3166-1 alpha-2 country codes (upper case). */
export function countryCodes(): ReadonlySet<string> {
  countries ??= new Set((JSON.parse(readFileSync(resolve(PROJECT_ROOT, 'services', 'data', 'compliance', 'iso3166-alpha2.json'), 'utf8')) as { codes: string[] }).codes);
  return countries;
}

/** Whether `code` is an assigned ISO 3166-1 alpha-2 country code (any letter case; XX, ZZ, EU are not). */
export function isCountryCode(code: string): boolean {
  return countryCodes().has(code.toUpperCase());
}

let currencies: ReadonlySet<string> | undefined;
/**
 * Whether `code` is an ISO 4217 currency code a document can be priced in (services/data/compliance/iso4217.json);
 * XTS (reserved for testing) and XXX (no currency) are not.
 */
export function isCurrencyCode(code: string): boolean {
  currencies ??= new Set((JSON.parse(readFileSync(resolve(PROJECT_ROOT, 'services', 'data', 'compliance', 'iso4217.json'), 'utf8')) as { codes: string[] }).codes.filter((c) => c !== 'XTS' && c !== 'XXX'));
  return currencies.has(code);
}

/** Whether `s` is an absolute http(s) URL with a host. */
export function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname.length > 0;
  } catch {
    return false;
  }
}

function keyword(name: string, schemaType: 'boolean' | 'string' | 'number', problem: (data: string, schema: unknown) => string | undefined): KeywordDefinition {
  const validate: SchemaValidateFunction = (schema: unknown, data: unknown): boolean => {
    if (schema === false) return true;
    const why = problem(data as string, schema);
    // ajv reads a custom keyword's errors from the function object after the call (synchronous).
    validate.errors = why === undefined ? undefined : [{ keyword: name, message: why, params: { [name]: schema } }];
    return why === undefined;
  };
  return { keyword: name, type: 'string', schemaType, errors: true, validate };
}

/** The custom keywords of the input schemas (registered on the registry's ajv instance). */
export const inputKeywords: readonly KeywordDefinition[] = [
  keyword('x-timezone', 'boolean', (s) => (isTimeZone(s) ? undefined : `is not an IANA time zone name (e.g. Europe/Berlin, America/New_York, UTC)`)),
  keyword('x-url', 'boolean', (s) => (isHttpUrl(s) ? undefined : 'must be an absolute http:// or https:// URL')),
  // native-summarize: a text of at least N characters, or one http(s) URL (fetched and checked by its precheck).
  keyword('x-text-or-url', 'number', (s, min) => (/^\S+$/.test(s.trim()) && isHttpUrl(s.trim()) ? undefined : s.trim().length >= (min as number) ? undefined : `must be a text of at least ${min} characters or a public http(s) URL`)),
  keyword('x-date', 'boolean', (s) => (isCalendarDate(s) ? undefined : 'is not a date of the calendar (YYYY-MM-DD)')),
  keyword('x-country', 'boolean', (s) => (isCountryCode(s) ? undefined : 'is not an assigned ISO 3166-1 alpha-2 country code')),
  keyword('x-currency', 'boolean', (s) => (isCurrencyCode(s) ? undefined : 'is not an ISO 4217 currency code (e.g. EUR, USD, JPY)')),
  keyword('x-ip', 'boolean', (s) => (isIP(s) !== 0 ? undefined : 'must be an IPv4 or IPv6 address')),
  keyword('x-address', 'string', (s, family) => {
    const a = classifyAddress(s);
    if (!a.valid) return `is not a valid address: ${a.reason ?? 'unrecognised format'}`;
    if (family !== 'any' && a.family !== (family as AddressFamily)) return `must be a ${family} address, this is ${a.family ?? 'another kind'}`;
    return undefined;
  }),
  keyword('x-ens-name', 'boolean', (s) => ensNameProblem(s)),
];

/** Why `name` is not a valid ENS name (ENSIP-15 normalization, the rules every ENS client applies), or undefined. */
export function ensNameProblem(name: string): string | undefined {
  try {
    ens_normalize(name);
    return undefined;
  } catch (e) {
    return `is not a valid ENS name: ${(e as Error).message}`;
  }
}

/** Schema of services that take no input: empty, or any short text, which is ignored. */
export function noInput(): Record<string, unknown> {
  return { type: 'string', maxLength: 256, description: 'No input: leave `request` empty (any value is ignored).' };
}

/** Plain text of bounded length. */
export function textInput(description: string, maxLength: number, minLength = 1): Record<string, unknown> {
  return { type: 'string', minLength, maxLength, description };
}

/** A token symbol, e.g. `NATIVE`, `USDC`, `wBTC`. */
export const TOKEN_SYMBOL_PATTERN = '[A-Za-z0-9][A-Za-z0-9._-]{0,19}';

/** A token symbol. */
export function tokenSymbolInput(): Record<string, unknown> {
  return { type: 'string', maxLength: 20, pattern: `^${TOKEN_SYMBOL_PATTERN}$`, description: 'Token symbol, e.g. USDC.' };
}

/** A token symbol or a pool written `A/B` (pools on this chain are named by their two assets; a hex id names none). */
export function tokenOrPoolInput(): Record<string, unknown> {
  return {
    type: 'string',
    maxLength: 64,
    pattern: `^${TOKEN_SYMBOL_PATTERN}(/${TOKEN_SYMBOL_PATTERN})?$`,
    description: 'Token symbol of this chain (USDN) or pool as TOKEN/TOKEN (NATIVE/USDN).',
  };
}

/** An absolute http(s) URL. */
export function urlInput(description = 'Absolute http(s) URL.'): Record<string, unknown> {
  return { type: 'string', maxLength: 2048, pattern: '^[hH][tT][tT][pP][sS]?://\\S+$', 'x-url': true, description };
}

/** An address of this chain (`native1…` or `tnative1…`, bech32m, checksum verified). */
export function nativeAddressInput(): Record<string, unknown> {
  return { type: 'string', maxLength: 90, pattern: '^(t?native|T?NATIVE)1[02-9ac-hj-np-zAC-HJ-NP-Z]{6,83}$', 'x-address': 'native', description: 'Chain address (native1… on mainnet, tnative1… elsewhere).' };
}

/** An EVM address (`0x` + 40 hex; mixed case must carry a valid EIP-55 checksum). */
export function evmAddressInput(): Record<string, unknown> {
  return { type: 'string', minLength: 42, maxLength: 42, pattern: '^0x[0-9a-fA-F]{40}$', 'x-address': 'evm', description: 'EVM address, 0x followed by 40 hex digits.' };
}

/** A valid wallet address of any supported network (native, EVM, Solana, Bitcoin, Litecoin). */
export function walletAddressInput(): Record<string, unknown> {
  return { type: 'string', minLength: 25, maxLength: 90, pattern: '^[0-9A-Za-z]+$', 'x-address': 'any', description: 'Wallet address: native, EVM (0x…), Solana, Bitcoin or Litecoin.' };
}

/** A decimal NATIVE amount, at most 8 decimals; `positive` rejects zero. */
export function nativeAmountInput(positive: boolean, description: string): Record<string, unknown> {
  // Zero in any spelling (0, 0.0, 0native, 0 NATIVE) is refused here, before any quote.
  const zero = positive ? '(?!0+(\\.0+)?(\\s*(NATIVE|native))?$)' : '';
  return { type: 'string', maxLength: 40, pattern: `^${zero}(0|[1-9][0-9]{0,9})(\\.[0-9]{1,8})?(\\s*(NATIVE|native))?$`, description };
}

/** Regex alternation matching any of `words` in any letter case. */
export function anyCase(words: readonly string[]): string {
  const ci = (w: string) => [...w].map((c) => (/[a-z]/i.test(c) ? `[${c.toUpperCase()}${c.toLowerCase()}]` : c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('');
  return `^(${words.map(ci).join('|')})$`;
}
