/**
 * One public base URL: what every discovery document, the MCP tool list and
 * instructions, and the x402 quote (`resource`, the sign-in challenge, the Payment realm) name.
 * It is the operator's `--public-url`, or else the address the HTTP API listens on; never the
 * `Host` a request carries, so a request with `Host: evil.example` is answered from the same
 * cached documents as any other and no answer names a host the operator did not configure.
 *
 * With `--allowed-hosts` the operator also lists the hosts the API answers to: a request whose
 * `Host` is not one of them (nor the base URL's own) is refused 421 `misdirected_request` before
 * anything else runs (RFC 9110 §15.5.20: the request reached a server that will not answer for
 * that authority). `/health` and `/ready` are exempt: load balancers probe them by address, and
 * they name no host. Without the list every Host is answered (from the public URL).
 */
import type Koa from 'koa';

/** Error code of a request for a host this node does not answer to. */
export const MISDIRECTED_REQUEST = 'misdirected_request';

/** Paths answered whatever the Host (liveness and readiness probes). */
const HOST_EXEMPT_PATHS = new Set(['/health', '/ready']);

/** Options of the host policy. */
export interface HostPolicyOptions {
  /** The operator's public base URL (`--public-url`), e.g. `https://node.example.org`; undefined: the listening address. */
  readonly publicUrl?: string;
  /** Hosts (`name` or `name:port`) the API answers to (`--allowed-hosts`); empty: every Host. */
  readonly allowedHosts?: readonly string[];
}

/** The node's public base URL and its Host check. */
export interface HostPolicy {
  /** The base URL documents and quotes name, without a trailing slash. */
  baseUrl(): string;
  /** Called once the API listens (its URL, e.g. `http://127.0.0.1:8402`): the default base URL. */
  listening(url: string): void;
  /** Refuses requests for hosts not allowed (421 `misdirected_request`); passes everything when no list is set. */
  readonly middleware: Koa.Middleware;
  /** The hosts allowed (lowercase), empty when every Host is answered. */
  readonly allowed: readonly string[];
}

/** A base URL without its trailing slash; undefined when not an absolute http(s) URL without query or fragment. */
export function normalisePublicUrl(raw: string): string | undefined {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return undefined;
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.search !== '' || u.hash !== '' || u.username !== '' || u.password !== '' || raw.includes('?') || raw.includes('#')) return undefined;
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
}

/** The lowercase host (with its port unless the scheme's default) of a base URL. */
function hostOf(url: string): string {
  return new URL(url).host.toLowerCase();
}

/** The hostname of a `Host` value (`[::1]:80` → `[::1]`, `a.example:8402` → `a.example`). */
function hostnameOf(host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  const colon = host.lastIndexOf(':');
  return colon < 0 ? host : host.slice(0, colon);
}

/** Builds the policy. Throws on a public URL `normalisePublicUrl` refuses (the config has checked it). */
export function createHostPolicy(opts: HostPolicyOptions = {}): HostPolicy {
  const configured = opts.publicUrl === undefined ? undefined : normalisePublicUrl(opts.publicUrl);
  if (opts.publicUrl !== undefined && configured === undefined) throw new Error(`public URL ${opts.publicUrl} is not an absolute http(s) URL`);
  let listeningUrl: string | undefined;
  const list = (opts.allowedHosts ?? []).map((h) => h.trim().toLowerCase()).filter((h) => h.length > 0);
  const allowed = list.length === 0 ? [] : [...new Set([...list, ...(configured ? [hostOf(configured)] : [])])];
  const exact = new Set(allowed);
  // A listed name without a port allows that name on any port (the public URL's host only as it is).
  const names = new Set(list.filter((h) => hostnameOf(h) === h));
  const isAllowed = (host: string): boolean => {
    const h = host.toLowerCase();
    return exact.has(h) || names.has(hostnameOf(h)) || h === hostOf(baseUrl());
  };
  const middleware: Koa.Middleware = async (ctx, next) => {
    if (allowed.length > 0 && !HOST_EXEMPT_PATHS.has(ctx.path)) {
      // The raw header (koa's ctx.host would prefer X-Forwarded-Host behind app.proxy).
      const host = ctx.get('host');
      if (!isAllowed(host)) {
        ctx.status = 421;
        // The refusal does not echo the Host either.
        ctx.body = { error: { code: MISDIRECTED_REQUEST, message: `this node does not answer for that Host (--allowed-hosts); use ${baseUrl()}` } };
        return;
      }
    }
    await next();
  };
  const baseUrl = (): string => configured ?? listeningUrl ?? 'http://127.0.0.1';
  return {
    baseUrl,
    listening(url) {
      listeningUrl = normalisePublicUrl(url) ?? url;
    },
    middleware,
    allowed,
  };
}

/**
 * The base URL of the address a connection reached (the socket's local address and port, which
 * no client chooses): the default of routers built without a public URL (in-process tests).
 */
export function localBaseUrl(ctx: Koa.Context): string {
  const addr = (ctx.socket.localAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
  return `http://${addr.includes(':') ? `[${addr}]` : addr}:${ctx.socket.localPort ?? 80}`;
}
