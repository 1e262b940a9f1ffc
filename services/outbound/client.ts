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
 *
 * Files: steps 1 and 2 are in target.ts, the answer's decoding and shape in response.ts, the
 * per-host admission and the cache in admission.ts; this file runs the hops (3 and 4).
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type Socket } from 'node:net';
import { publicOnly, type AddressPolicy } from './addressPolicy.js';
import { HostLimiter, ResponseCache } from './admission.js';
import { accepted, decoded, headersOf, makeResponse } from './response.js';
import { parseTarget, resolveTarget, systemResolver, truncate, type ResolvedAddress, type Resolver, type Target } from './target.js';
import { OutboundError, OutboundErrorCode, type OutboundClient, type OutboundRequest, type OutboundResponse } from './types.js';

/** The client's codes and the hop's first steps (types.ts, target.ts), re-exported: this file is the client's entry point. */
export { OutboundErrorCode } from './types.js';
export { parseTarget, resolveTarget, systemResolver, type ResolvedAddress, type Resolver } from './target.js';

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

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Headers dropped when a redirect leaves the origin (provider keys must not follow it). */
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization', 'x-api-key', 'x-subscription-token', 'x-cg-demo-api-key', 'x-cg-pro-api-key'];

/** What one hop returned before the redirect decision. */
interface HopResult {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: Uint8Array;
  readonly remoteAddress: string | undefined;
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
