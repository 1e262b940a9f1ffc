/**
 * The first steps of each outbound hop (client.ts): parse and check the URL's form, then resolve
 * the host once and, for a caller's URL, refuse any answer that is not public; the first answer
 * is the address the hop connects to.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { AddressPolicy } from './addressPolicy.js';
import { OutboundError, OutboundErrorCode } from './types.js';

/** One answer of a resolver. */
export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Resolves a host name to its addresses (the system resolver by default). */
export type Resolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** The system resolver (getaddrinfo, every answer in its order). */
export const systemResolver: Resolver = async (hostname) => {
  const all = await dnsLookup(hostname, { all: true, verbatim: true });
  return all.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/** A parsed, checked URL of one hop. */
export interface Target {
  readonly url: URL;
  /** Host without IPv6 brackets. */
  readonly host: string;
  readonly port: number;
  readonly https: boolean;
}

/** Parses and checks a URL's form (scheme, host). `callerFault` follows the mode. */
export function parseTarget(raw: string, callerFault: boolean): Target {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundError(OutboundErrorCode.URL_INVALID, `not an absolute URL: ${truncate(raw)}`, callerFault);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundError(OutboundErrorCode.URL_SCHEME_REFUSED, `only http and https URLs are fetched, not ${url.protocol}`, callerFault);
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (!host) throw new OutboundError(OutboundErrorCode.URL_INVALID, 'the URL has no host', callerFault);
  return { url, host, port: url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80, https: url.protocol === 'https:' };
}

export function truncate(s: string, n = 200): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

/** `localhost` and its subdomains (RFC 6761): refused by name, whatever a resolver says. */
function isLocalhostName(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
}

/**
 * Resolves `target` and, when `policy` is given, refuses it unless every answer passes. Returns
 * the pinned address (the first answer). Exported for the pre-payment check of caller URLs.
 */
export async function resolveTarget(target: Target, resolver: Resolver, policy: AddressPolicy | undefined, timeoutMs: number): Promise<ResolvedAddress> {
  const family = isIP(target.host);
  if (family !== 0) {
    if (policy && !policy(target.host)) throw new OutboundError(OutboundErrorCode.URL_ADDRESS_REFUSED, `${target.host} is not a public address`, true);
    return { address: target.host, family: family as 4 | 6 };
  }
  if (policy && isLocalhostName(target.host)) throw new OutboundError(OutboundErrorCode.URL_ADDRESS_REFUSED, `${target.host} is a local name`, true);
  let timer: NodeJS.Timeout | undefined;
  let answers: readonly ResolvedAddress[];
  try {
    answers = await Promise.race([
      resolver(target.host),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new OutboundError(OutboundErrorCode.DNS_FAILED, `resolving ${target.host} took longer than ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } catch (e) {
    if (e instanceof OutboundError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    // A name that does not exist is the caller's mistake; a failing resolver is not.
    const missing = code === 'ENOTFOUND' || code === 'ENODATA';
    throw new OutboundError(OutboundErrorCode.DNS_FAILED, `cannot resolve ${target.host}${code ? ` (${code})` : ''}`, missing && policy !== undefined);
  } finally {
    clearTimeout(timer);
  }
  if (answers.length === 0) throw new OutboundError(OutboundErrorCode.DNS_FAILED, `${target.host} has no address`, policy !== undefined);
  if (policy) {
    const bad = answers.find((a) => !policy(a.address));
    if (bad) throw new OutboundError(OutboundErrorCode.URL_ADDRESS_REFUSED, `${target.host} resolves to ${bad.address}, which is not a public address`, true);
  }
  return answers[0];
}
