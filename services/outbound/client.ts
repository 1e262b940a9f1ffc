/**
 * The outbound client (contract in ./types.ts): every request a service makes outside the node.
 *
 * It speaks HTTP/1.1 with `node:http`/`node:https` itself instead of `fetch`, because the check
 * that matters is on the address actually connected to, and global `fetch` ignores agent-level
 * filters. Each hop of a request:
 *   1. parses the URL (WHATWG: `2130706433`, `0x7f000001`, `017700000001` and `127.1` all come
 *      out as `127.0.0.1`), accepts http/https only and refuses `localhost` names outright;
 *   2. resolves the host once (an IP literal is its own answer) and, for a caller's URL, refuses
 *      the request if any answer is not public (`addressPolicy`);
 *   3. connects to that pinned address (the name is sent as Host and TLS SNI and checked against
 *      the certificate), so a second DNS answer can never switch it, and checks the socket's
 *      remote address again once connected;
 *   4. follows a redirect only as a new hop through the same steps, up to `maxRedirects`.
 * Bodies are streamed through gzip/br/deflate decoding and aborted past `maxBytes`; the connect
 * phase has its own timeout inside the total one; each host has at most `hostConcurrency`
 * requests in flight (others queue); GETs that ask for it are served from a small cache.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type Socket } from 'node:net';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Readable } from 'node:stream';
import { publicOnly, type AddressPolicy } from './addressPolicy.js';
import { OutboundError, type OutboundClient, type OutboundRequest, type OutboundResponse } from './types.js';

/** Codes of `OutboundError` (see ./types.ts), plus `aborted` (the caller's signal fired). */
export const OutboundErrorCode = {
  URL_INVALID: 'url_invalid',
  URL_SCHEME_REFUSED: 'url_scheme_refused',
  URL_ADDRESS_REFUSED: 'url_address_refused',
  DNS_FAILED: 'dns_failed',
  TOO_MANY_REDIRECTS: 'too_many_redirects',
  TIMEOUT: 'timeout',
  ABORTED: 'aborted',
  CONNECT_FAILED: 'connect_failed',
  RESPONSE_TOO_LARGE: 'response_too_large',
  UNEXPECTED_CONTENT_TYPE: 'unexpected_content_type',
  INVALID_JSON: 'invalid_json',
  PROVIDER_ERROR: 'provider_error',
} as const;

/** Options of the client (node/config.ts fills them from `outbound*` keys). */
export interface OutboundOptions {
  /** User-Agent of every request (names the node and its version). */
  readonly userAgent: string;
  /** Time to open the TCP connection, ms. */
  readonly connectTimeoutMs: number;
  /** Default total time of a request (all hops, body included), ms. */
  readonly timeoutMs: number;
  /** Default response body cap (decoded bytes). */
  readonly maxBytes: number;
  /** Default redirect cap. */
  readonly maxRedirects: number;
  /** Requests in flight per host (more wait their turn). */
  readonly hostConcurrency: number;
  /** Entries of the response cache (GETs with `cacheTtlMs`). */
  readonly cacheEntries: number;
}

/** Defaults of OutboundOptions. */
export const defaultOutboundOptions: OutboundOptions = {
  userAgent: 'native-node',
  connectTimeoutMs: 5_000,
  timeoutMs: 15_000,
  maxBytes: 5 * 1024 * 1024,
  maxRedirects: 5,
  hostConcurrency: 4,
  cacheEntries: 256,
};

/** One answer of a resolver. */
export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Resolves a host name to its addresses (the system resolver by default). */
export type Resolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** Collaborators of the client. Tests inject a resolver and an address policy here (never from config or a caller). */
export interface OutboundModules {
  readonly resolver?: Resolver;
  /** Which addresses a caller's URL may reach (default: public unicast only). */
  readonly addressPolicy?: AddressPolicy;
  /** Unix ms (cache ages). */
  readonly now?: () => number;
  /** Trusted CA certificates instead of Node's bundle (tests with their own certificate). */
  readonly ca?: string | Buffer;
}

/** The system resolver (getaddrinfo, every answer in its order). */
export const systemResolver: Resolver = async (hostname) => {
  const all = await dnsLookup(hostname, { all: true, verbatim: true });
  return all.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Headers dropped when a redirect leaves the origin (provider keys must not follow it). */
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization', 'x-api-key', 'x-subscription-token', 'x-cg-demo-api-key', 'x-cg-pro-api-key'];

/** A parsed, checked URL of one hop. */
interface Target {
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

function truncate(s: string, n = 200): string {
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

/** Whether a content type (lower case, no parameters) matches one of the accepted prefixes. */
function accepted(contentType: string, accept: readonly string[] | undefined): boolean {
  if (!accept || accept.length === 0) return true;
  return accept.some((a) => contentType.startsWith(a.toLowerCase()));
}

function charsetOf(header: string | undefined): string {
  const m = /charset\s*=\s*"?([^";\s]+)/i.exec(header ?? '');
  return m ? m[1].toLowerCase() : 'utf-8';
}

function makeResponse(status: number, url: string, headers: Record<string, string>, body: Uint8Array, remoteAddress: string | undefined, elapsedMs: number): OutboundResponse {
  const contentType = (headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  const text = () => {
    try {
      return new TextDecoder(charsetOf(headers['content-type'])).decode(body);
    } catch {
      // An unknown charset label: UTF-8 is the web's default.
      return new TextDecoder('utf-8').decode(body);
    }
  };
  return {
    status,
    url,
    headers,
    contentType,
    body,
    text,
    json() {
      try {
        return JSON.parse(text()) as unknown;
      } catch (e) {
        throw new OutboundError(OutboundErrorCode.INVALID_JSON, `${truncate(url, 120)} did not answer JSON: ${(e as Error).message}`);
      }
    },
    remoteAddress,
    elapsedMs,
  };
}

/** Per-host admission: at most `limit` running, the rest wait in order. */
class HostLimiter {
  private readonly running = new Map<string, number>();
  private readonly waiting = new Map<string, (() => void)[]>();
  constructor(private readonly limit: number) {}

  async acquire(host: string, signal: AbortSignal): Promise<() => void> {
    const n = this.running.get(host) ?? 0;
    if (n >= this.limit) {
      await new Promise<void>((resolve, reject) => {
        const queue = this.waiting.get(host) ?? [];
        const go = () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
        const onAbort = () => {
          const i = queue.indexOf(go);
          if (i >= 0) queue.splice(i, 1);
          reject(signal.reason);
        };
        queue.push(go);
        this.waiting.set(host, queue);
        signal.addEventListener('abort', onAbort, { once: true });
      });
    } else {
      this.running.set(host, n + 1);
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const queue = this.waiting.get(host);
      const next = queue?.shift();
      if (queue && queue.length === 0) this.waiting.delete(host);
      // The slot passes to the next waiter as is; otherwise it is freed.
      if (next) next();
      else {
        const left = (this.running.get(host) ?? 1) - 1;
        if (left <= 0) this.running.delete(host);
        else this.running.set(host, left);
      }
    };
  }
}

/** Bounded cache of final GET responses, oldest entry evicted first. */
class ResponseCache {
  private readonly entries = new Map<string, { at: number; response: OutboundResponse }>();
  constructor(private readonly size: number) {}

  get(key: string, maxAgeMs: number, now: number): OutboundResponse | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (now - e.at > maxAgeMs) return undefined;
    return e.response;
  }

  set(key: string, response: OutboundResponse, now: number): void {
    if (this.size <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, { at: now, response });
    while (this.entries.size > this.size) this.entries.delete(this.entries.keys().next().value as string);
  }
}

/** What one hop returned before the redirect decision. */
interface HopResult {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: Uint8Array;
  readonly remoteAddress: string | undefined;
}

function headersOf(res: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

function decoded(res: IncomingMessage): Readable {
  const enc = (res.headers['content-encoding'] ?? '').toString().trim().toLowerCase();
  if (enc === 'gzip' || enc === 'x-gzip') return res.pipe(createGunzip());
  if (enc === 'br') return res.pipe(createBrotliDecompress());
  if (enc === 'deflate') return res.pipe(createInflate());
  return res;
}

/** The client (see module comment). */
export class Outbound implements OutboundClient {
  readonly options: OutboundOptions;
  private readonly resolver: Resolver;
  private readonly policy: AddressPolicy;
  private readonly now: () => number;
  private readonly limiter: HostLimiter;
  private readonly cache: ResponseCache;
  private readonly ca: string | Buffer | undefined;

  constructor(opts: Partial<OutboundOptions> = {}, modules: OutboundModules = {}) {
    this.options = { ...defaultOutboundOptions, ...opts };
    this.resolver = modules.resolver ?? systemResolver;
    this.policy = modules.addressPolicy ?? publicOnly;
    this.now = modules.now ?? Date.now;
    this.limiter = new HostLimiter(Math.max(1, this.options.hostConcurrency));
    this.cache = new ResponseCache(this.options.cacheEntries);
    this.ca = modules.ca;
  }

  fetchPublic(req: OutboundRequest): Promise<OutboundResponse> {
    return this.fetch(req, true);
  }

  fetchProvider(req: OutboundRequest): Promise<OutboundResponse> {
    return this.fetch(req, false);
  }

  /**
   * The pre-payment check of a caller's URL: its form, and that its host resolves to public
   * addresses only. Throws the `OutboundError` a fetch would (caller faults are `callerFault`).
   */
  async checkPublicUrl(raw: string): Promise<void> {
    const target = parseTarget(raw, true);
    await resolveTarget(target, this.resolver, this.policy, this.options.connectTimeoutMs);
  }

  private async fetch(req: OutboundRequest, publicMode: boolean): Promise<OutboundResponse> {
    const started = performance.now();
    const method = req.method ?? 'GET';
    const cacheKey = req.cacheTtlMs && method === 'GET' ? `${publicMode ? 'p' : 'o'} ${req.url} ${JSON.stringify(req.headers ?? {})} ${(req.accept ?? []).join(',')}` : undefined;
    if (cacheKey) {
      const hit = this.cache.get(cacheKey, req.cacheTtlMs!, this.now());
      if (hit) return hit;
    }
    const timeoutMs = req.timeoutMs ?? this.options.timeoutMs;
    const maxBytes = req.maxBytes ?? this.options.maxBytes;
    const maxRedirects = req.maxRedirects ?? this.options.maxRedirects;
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = req.signal ? AbortSignal.any([req.signal, deadline]) : deadline;
    const abortError = () =>
      deadline.aborted
        ? new OutboundError(OutboundErrorCode.TIMEOUT, `${truncate(req.url, 120)} did not answer within ${timeoutMs} ms`)
        : new OutboundError(OutboundErrorCode.ABORTED, `request to ${truncate(req.url, 120)} was aborted`);

    let url = req.url;
    let hopMethod: string = method;
    let body = req.body;
    let headers: Record<string, string> = Object.fromEntries(Object.entries(req.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
    let origin: string | undefined;
    for (let hop = 0; ; hop++) {
      const target = parseTarget(url, publicMode);
      if (origin !== undefined && target.url.origin !== origin) for (const h of CREDENTIAL_HEADERS) delete headers[h];
      origin = target.url.origin;
      if (signal.aborted) throw abortError();
      const pinned = await resolveTarget(target, this.resolver, publicMode ? this.policy : undefined, this.options.connectTimeoutMs);
      if (signal.aborted) throw abortError();
      let release: () => void;
      try {
        release = await this.limiter.acquire(target.host.toLowerCase(), signal);
      } catch {
        throw abortError();
      }
      let result: HopResult;
      try {
        result = await this.hop(target, pinned, hopMethod, headers, body, maxBytes, publicMode, signal, abortError);
      } finally {
        release();
      }
      const location = result.headers.location;
      if (REDIRECT_STATUSES.has(result.status) && location && maxRedirects > 0) {
        if (hop >= maxRedirects) throw new OutboundError(OutboundErrorCode.TOO_MANY_REDIRECTS, `more than ${maxRedirects} redirects from ${truncate(req.url, 120)}`, publicMode);
        try {
          url = new URL(location, target.url).href;
        } catch {
          throw new OutboundError(OutboundErrorCode.URL_INVALID, `redirect to an invalid URL: ${truncate(location)}`, publicMode);
        }
        // 303, and 301/302 after a POST, continue as a GET without body (what browsers do).
        if (result.status === 303 || ((result.status === 301 || result.status === 302) && hopMethod === 'POST')) {
          hopMethod = 'GET';
          body = undefined;
          headers = { ...headers };
          delete headers['content-type'];
        }
        continue;
      }
      const response = makeResponse(result.status, target.url.href, result.headers, result.body, result.remoteAddress, Math.round(performance.now() - started));
      if (result.status >= 200 && result.status < 300 && !accepted(response.contentType, req.accept)) {
        throw new OutboundError(OutboundErrorCode.UNEXPECTED_CONTENT_TYPE, `${truncate(target.url.href, 120)} answered ${response.contentType || 'no content type'}, expected ${req.accept!.join(' or ')}`, false);
      }
      if (cacheKey && result.status === 200) this.cache.set(cacheKey, response, this.now());
      return response;
    }
  }

  /** One request/response on a fresh connection to the pinned address. */
  private hop(
    target: Target,
    pinned: ResolvedAddress,
    method: string,
    headers: Record<string, string>,
    body: string | Uint8Array | undefined,
    maxBytes: number,
    publicMode: boolean,
    signal: AbortSignal,
    abortError: () => OutboundError,
  ): Promise<HopResult> {
    return new Promise<HopResult>((resolve, reject) => {
      let settled = false;
      let connectTimer: NodeJS.Timeout | undefined;
      const fail = (e: OutboundError) => {
        if (settled) return;
        settled = true;
        clearTimeout(connectTimer);
        signal.removeEventListener('abort', onAbort);
        request.destroy();
        reject(e);
      };
      const onAbort = () => fail(abortError());
      const hostHeader = target.url.host;
      const payload = typeof body === 'string' ? Buffer.from(body) : body;
      const request = (target.https ? httpsRequest : httpRequest)({
        host: pinned.address,
        family: pinned.family,
        port: target.port,
        path: `${target.url.pathname}${target.url.search}`,
        method,
        // A fresh socket per hop: never one pooled for another address.
        agent: false,
        setHost: false,
        // TLS: SNI carries the name, and the certificate is checked against it (not the pinned IP).
        servername: isIP(target.host) ? undefined : target.host,
        ...(target.https && this.ca ? { ca: this.ca } : {}),
        headers: {
          'user-agent': this.options.userAgent,
          'accept-encoding': 'gzip, br, deflate',
          accept: '*/*',
          ...headers,
          host: hostHeader,
          ...(payload ? { 'content-length': String(payload.byteLength) } : {}),
        },
      });
      signal.addEventListener('abort', onAbort, { once: true });
      connectTimer = setTimeout(() => fail(new OutboundError(OutboundErrorCode.TIMEOUT, `connecting to ${target.host} took longer than ${this.options.connectTimeoutMs} ms`)), this.options.connectTimeoutMs);
      request.on('socket', (socket: Socket) => {
        const onConnect = () => {
          clearTimeout(connectTimer);
          // The address actually connected to, checked again (the pinned one, never another).
          const remote = socket.remoteAddress;
          if (publicMode && (remote === undefined || !this.policy(remote))) {
            fail(new OutboundError(OutboundErrorCode.URL_ADDRESS_REFUSED, `connected address ${remote ?? 'unknown'} is not public`, true));
          }
        };
        if (socket.remoteAddress !== undefined && !socket.connecting) onConnect();
        else socket.once('connect', onConnect);
      });
      request.on('error', (e: NodeJS.ErrnoException) => {
        if (signal.aborted) return fail(abortError());
        fail(new OutboundError(OutboundErrorCode.CONNECT_FAILED, `${target.host}: ${e.code ?? ''} ${e.message}`.trim()));
      });
      request.on('response', (res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        const resHeaders = headersOf(res);
        const remoteAddress = res.socket?.remoteAddress;
        if ((REDIRECT_STATUSES.has(status) && resHeaders.location) || method === 'HEAD' || status === 204 || status === 304) {
          res.resume();
          settled = true;
          clearTimeout(connectTimer);
          signal.removeEventListener('abort', onAbort);
          request.destroy();
          resolve({ status, headers: resHeaders, body: new Uint8Array(0), remoteAddress });
          return;
        }
        const declared = Number(resHeaders['content-length']);
        const tooLarge = () => new OutboundError(OutboundErrorCode.RESPONSE_TOO_LARGE, `${truncate(target.url.href, 120)} answered more than ${maxBytes} bytes`);
        if (Number.isFinite(declared) && declared > maxBytes && !resHeaders['content-encoding']) return fail(tooLarge());
        const stream = decoded(res);
        const chunks: Buffer[] = [];
        let size = 0;
        let raw = 0;
        res.on('data', (c: Buffer) => {
          // A compressed body is capped too, before decoding (a small bomb cannot get far).
          raw += c.length;
          if (raw > maxBytes) fail(tooLarge());
        });
        stream.on('data', (c: Buffer) => {
          size += c.length;
          if (size > maxBytes) {
            stream.destroy();
            return fail(tooLarge());
          }
          chunks.push(c);
        });
        stream.on('error', (e: Error) => fail(signal.aborted ? abortError() : new OutboundError(OutboundErrorCode.PROVIDER_ERROR, `${target.host}: bad response body: ${e.message}`)));
        res.on('close', () => {
          if (!res.complete) fail(new OutboundError(OutboundErrorCode.PROVIDER_ERROR, `${target.host} closed the connection mid-body`));
        });
        stream.on('end', () => {
          if (settled) return;
          settled = true;
          clearTimeout(connectTimer);
          signal.removeEventListener('abort', onAbort);
          const buf = Buffer.concat(chunks);
          resolve({ status, headers: resHeaders, body: new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength), remoteAddress });
        });
      });
      if (payload) request.end(payload);
      else request.end();
    });
  }
}

/** Creates the outbound client. */
export function createOutboundClient(opts: Partial<OutboundOptions> = {}, modules: OutboundModules = {}): Outbound {
  return new Outbound(opts, modules);
}
