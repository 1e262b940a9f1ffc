/**
 * Email address checks without sending mail (no SMTP probing):
 * - syntax: @hapi/address (RFC 5321/5322 dot-atom local part, lengths, domain labels (at least
 *   two), Unicode/IDN domains), plus the domain's ASCII (punycode) form;
 * - disposable provider: the shipped blocklist of disposable-email-domains-js (CC0), the domain and
 *   each parent domain checked;
 * - mail exchangers: node:dns with a short timeout: MX records; a "null MX" (`0 .`, RFC 7505)
 *   means the domain accepts no mail; no MX falls back to A/AAAA (the implicit MX of RFC 5321);
 *   a domain that does not exist has none; a resolver that cannot be reached or fails gives
 *   `mx: "unknown"` with the reason, never "invalid";
 * - the resolver itself: before "does not exist" is believed, the same resolver must find
 *   example.com (RFC 2606: reserved, kept by IANA, with address records); one that cannot (a
 *   captive or broken resolver answering NXDOMAIN for everything) makes every answer "unknown",
 *   and a known-good domain (example.com, microsoft.com, gmail.com, …) is never said not to exist.
 */
import { Resolver } from 'node:dns/promises';
import { domainToASCII } from 'node:url';
import { analyzeEmail } from '@hapi/address';
import { disposableEmailBlocklistSet } from 'disposable-email-domains-js';

/** DNS settings of the check (the system's resolvers and a 2.5 s deadline by default). */
export interface EmailDnsOptions {
  /** Resolver addresses (`127.0.0.1:5353`); undefined: the system's. */
  readonly servers?: readonly string[];
  /** Deadline of each query, ms. */
  readonly timeoutMs: number;
  /** Tries per query. */
  readonly tries: number;
}

let dnsOptions: EmailDnsOptions = { timeoutMs: 2_500, tries: 1 };

/** Points the checks at other resolvers (tests: a DNS server on 127.0.0.1) or changes the deadline. */
export function configureEmailDns(opts: Partial<EmailDnsOptions>): void {
  dnsOptions = { ...dnsOptions, ...opts };
  canary = undefined;
}

/** The domain every working resolver finds: reserved by RFC 2606 for documentation and served by IANA with address records. */
export const CANARY_DOMAIN = 'example.com';
/** How long a resolver check is kept, ms. */
const CANARY_TTL_MS = 30_000;
let canary: { at: number; result: Promise<ResolverCheck> } | undefined;

/** Whether the resolver can be believed: `ok`, or why not. */
export type ResolverCheck = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/** Whether the resolver finds example.com (see module comment); kept for 30 s. */
export function checkResolver(now = Date.now()): Promise<ResolverCheck> {
  if (canary && now - canary.at < CANARY_TTL_MS) return canary.result;
  const result = (async (): Promise<ResolverCheck> => {
    const resolver = new Resolver({ timeout: dnsOptions.timeoutMs, tries: dnsOptions.tries });
    if (dnsOptions.servers) resolver.setServers([...dnsOptions.servers]);
    try {
      const a = await resolver.resolve4(CANARY_DOMAIN);
      if (a.length) return { ok: true };
      return { ok: false, reason: `the resolver finds no address for ${CANARY_DOMAIN} (RFC 2606, kept by IANA): its answers cannot be trusted` };
    } catch (e) {
      const code = codeOf(e);
      return { ok: false, reason: code === 'ENOTFOUND' || code === 'ENODATA' ? `the resolver says ${CANARY_DOMAIN} (RFC 2606, kept by IANA) does not exist: its answers cannot be trusted` : `the resolver cannot be reached (${code})` };
    } finally {
      resolver.cancel();
    }
  })();
  canary = { at: now, result };
  return result;
}

let disposable: Set<string> | undefined;

/** Whether `domain` or one of its parent domains is a known disposable-mail provider. */
export function isDisposableDomain(domain: string): boolean {
  disposable ??= disposableEmailBlocklistSet();
  const labels = domain.toLowerCase().replace(/\.$/, '').split('.');
  for (let i = 0; i < labels.length - 1; i++) if (disposable.has(labels.slice(i).join('.'))) return true;
  return false;
}

/** Outcome of the mail-exchanger lookup. */
export type MxCheck =
  | { readonly status: 'found'; readonly records: readonly { exchange: string; priority: number }[] }
  | { readonly status: 'null-mx'; readonly reason: string }
  | { readonly status: 'fallback-a'; readonly addresses: readonly string[]; readonly reason: string }
  | { readonly status: 'none'; readonly reason: string }
  | { readonly status: 'unknown'; readonly reason: string };

const TRANSIENT = new Set(['ETIMEOUT', 'ECONNREFUSED', 'ESERVFAIL', 'EREFUSED', 'ECANCELLED', 'EAI_AGAIN', 'ECONNRESET', 'EBADRESP', 'EFORMERR', 'EBADFAMILY', 'ENOTIMP', 'EOF']);

function codeOf(e: unknown): string {
  return (e as { code?: string }).code ?? 'UNKNOWN';
}

/** MX check of an ASCII domain (see module comment). */
export async function checkMx(domain: string): Promise<MxCheck> {
  const resolver = new Resolver({ timeout: dnsOptions.timeoutMs, tries: dnsOptions.tries });
  if (dnsOptions.servers) resolver.setServers([...dnsOptions.servers]);
  try {
    const records = await resolver.resolveMx(domain);
    if (records.length > 0) {
      // RFC 7505: a single MX with an empty exchange ("." on the wire) says "no mail here".
      if (records.some((r) => r.exchange === '' || r.exchange === '.')) return { status: 'null-mx', reason: 'the domain publishes a null MX (RFC 7505): it accepts no mail' };
      return { status: 'found', records: [...records].sort((a, b) => a.priority - b.priority || a.exchange.localeCompare(b.exchange)).map((r) => ({ exchange: r.exchange, priority: r.priority })) };
    }
  } catch (e) {
    const code = codeOf(e);
    if (code === 'ENOTFOUND') return { status: 'none', reason: 'the domain does not exist (NXDOMAIN)' };
    if (code !== 'ENODATA') return { status: 'unknown', reason: `DNS lookup failed (${code}): cannot tell whether the domain accepts mail` };
  }
  // No MX: RFC 5321 §5.1 falls back to the domain's own address records.
  const addresses: string[] = [];
  let transient: string | undefined;
  for (const q of [() => resolver.resolve4(domain), () => resolver.resolve6(domain)]) {
    try {
      addresses.push(...(await q()));
    } catch (e) {
      const code = codeOf(e);
      if (TRANSIENT.has(code)) transient = code;
    }
  }
  resolver.cancel();
  if (addresses.length) return { status: 'fallback-a', addresses, reason: 'no MX record: mail goes to the domain\'s A/AAAA address (RFC 5321 implicit MX)' };
  if (transient) return { status: 'unknown', reason: `no MX record, and the A/AAAA lookup failed (${transient})` };
  return { status: 'none', reason: 'no MX, A or AAAA record: the domain cannot receive mail' };
}

/** Mail providers whose domains callers mistype most; an NXDOMAIN for one of them is the resolver's failure, not the domain's. */
export const COMMON_MAIL_DOMAINS: readonly string[] = [
  'gmail.com', 'googlemail.com', 'yahoo.com', 'yahoo.co.uk', 'yahoo.fr', 'hotmail.com', 'hotmail.co.uk', 'hotmail.fr', 'outlook.com', 'live.com', 'msn.com', 'icloud.com', 'me.com', 'mac.com',
  'aol.com', 'proton.me', 'protonmail.com', 'gmx.de', 'gmx.net', 'gmx.com', 'web.de', 't-online.de', 'mail.com', 'mail.ru', 'yandex.ru', 'zoho.com', 'fastmail.com', 'orange.fr', 'free.fr', 'comcast.net', 'qq.com', '163.com',
];
const COMMON = new Set(COMMON_MAIL_DOMAINS);
/** Domains that exist beyond doubt (RFC 2606's, IANA's, the largest companies'): a resolver that says otherwise is broken. */
export const KNOWN_GOOD_DOMAINS: readonly string[] = ['example.com', 'example.net', 'example.org', 'iana.org', 'microsoft.com', 'google.com', 'apple.com', 'amazon.com', 'wikipedia.org', ...COMMON_MAIL_DOMAINS];
const KNOWN_GOOD = new Set(KNOWN_GOOD_DOMAINS);

/** The common provider domain `domain` is probably a typo of (gmial.com → gmail.com: one edit or a swap of two neighbours), or undefined. */
export function suggestDomain(domain: string): string | undefined {
  const d = domain.toLowerCase();
  if (COMMON.has(d) || d.length < 4) return undefined;
  let best: { domain: string; distance: number } | undefined;
  for (const c of COMMON_MAIL_DOMAINS) {
    const dist = editDistance(d, c);
    if (dist <= (c.length >= 8 ? 2 : 1) && (!best || dist < best.distance)) best = { domain: c, distance: dist };
  }
  return best?.domain;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of adjacent letters each cost 1. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/** Result of native-email-validate. */
export async function validateEmail(input: string) {
  const email = input.trim();
  const at = email.lastIndexOf('@');
  const local = at > 0 ? email.slice(0, at) : email;
  const domain = at > 0 ? email.slice(at + 1) : '';
  const ascii = domain ? domainToASCII(domain.toLowerCase()) : '';
  const problem = analyzeEmail(email);
  const syntax = problem
    ? { valid: false as const, code: problem.code, reason: problem.error }
    : { valid: true as const };
  const isDisposable = ascii !== '' && isDisposableDomain(ascii);
  let mx: MxCheck | { status: 'skipped'; reason: string } = syntax.valid ? await checkMx(ascii) : { status: 'skipped', reason: 'the address is not syntactically valid' };
  // gmail.com or example.com "does not exist" only when the resolver is broken (a captive or empty resolver answers NXDOMAIN for everything).
  if (mx.status === 'none' && KNOWN_GOOD.has(ascii)) mx = { status: 'unknown', reason: `the resolver says ${ascii} has no mail or address records, which is not true of it: its answers cannot be trusted` };
  if (mx.status === 'none') {
    const trusted = await checkResolver();
    if (!trusted.ok) mx = { status: 'unknown', reason: trusted.reason };
  }
  const suggested = ascii ? suggestDomain(ascii) : undefined;
  const acceptsMail = mx.status === 'found' || mx.status === 'fallback-a' ? true : mx.status === 'unknown' ? 'unknown' : false;
  const valid = !syntax.valid ? false : acceptsMail === 'unknown' ? 'unknown' : acceptsMail;
  return {
    email,
    localPart: local,
    domain,
    asciiDomain: ascii || null,
    idn: ascii !== '' && ascii !== domain.toLowerCase(),
    syntax,
    disposable: isDisposable,
    /** The address with a common provider's domain when this one looks like a typo of it (gmial.com → gmail.com), else null. */
    suggestion: suggested ? `${local}@${suggested}` : null,
    mx,
    acceptsMail,
    /** true: syntax valid and the domain accepts mail; false: it cannot receive mail; "unknown": DNS did not answer. */
    valid,
    method: 'syntax @hapi/address (RFC 5321/5322 local part and lengths, domain labels, IDN); disposable list disposable-email-domains-js; MX via node:dns (null MX RFC 7505, A/AAAA fallback); no SMTP connection is made',
  };
}
