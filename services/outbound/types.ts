/**
 * The outbound client's contract: every request a service makes outside the node goes through
 * one `OutboundClient` (services/outbound/). Two modes:
 * - `fetchPublic`: a URL a caller supplied. SSRF-safe: http/https only, the address actually
 *   connected to is resolved once, pinned and checked (no loopback, private, link-local, CGNAT,
 *   multicast, reserved, IPv4-mapped or metadata addresses, IP literals in any notation), every
 *   redirect hop re-checked, hops capped. Refusals throw `OutboundError` with a `url_*` code
 *   (the paid-call path turns them into a coded 400 before payment).
 * - `fetchProvider`: a URL the operator configured (a provider's API). No address filtering
 *   (operators may run providers on loopback), same timeouts, size cap and error codes.
 * Both: connect and total timeouts, a streamed size cap (aborted past it), gzip/br, a
 * User-Agent naming the node, per-host concurrency limits, and an optional small cache.
 */

/** One outbound request. */
export interface OutboundRequest {
  readonly url: string;
  readonly method?: 'GET' | 'POST' | 'HEAD' | 'DELETE';
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Uint8Array;
  /** Total time budget, ms (connect + headers + body). */
  readonly timeoutMs?: number;
  /** Response body cap, bytes; the transfer is aborted past it (`response_too_large`). */
  readonly maxBytes?: number;
  /** Accepted content types of a 2xx answer (prefix match, e.g. `text/html`, `application/json`); others throw `unexpected_content_type`. Error statuses come back as they are. */
  readonly accept?: readonly string[];
  /** Serve a cached answer younger than this (ms); only for GETs of slowly changing data. */
  readonly cacheTtlMs?: number;
  /** Redirects to follow (default a small cap); 0 returns the 3xx itself. */
  readonly maxRedirects?: number;
  /** Aborts the request (a service's timeout signal). */
  readonly signal?: AbortSignal;
}

/** One outbound response, body fully read (bounded by `maxBytes`). */
export interface OutboundResponse {
  readonly status: number;
  /** Final URL after redirects. */
  readonly url: string;
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string>>;
  /** `content-type` without parameters, lower case ('' when absent). */
  readonly contentType: string;
  readonly body: Uint8Array;
  /** Body decoded as text (charset from content-type, default UTF-8). */
  text(): string;
  /** Body parsed as JSON; throws `OutboundError('invalid_json')`. */
  json(): unknown;
  /** The connected address of the last hop (IP literal), when known. */
  readonly remoteAddress?: string;
  readonly elapsedMs: number;
}

/** The client every outbound call goes through. */
export interface OutboundClient {
  fetchPublic(req: OutboundRequest): Promise<OutboundResponse>;
  fetchProvider(req: OutboundRequest): Promise<OutboundResponse>;
  /**
   * The pre-payment check of a caller's URL without fetching it: its form, and that its host
   * resolves to public addresses only; throws the `OutboundError` `fetchPublic` would.
   * Optional for fakes; the node's client has it.
   */
  checkPublicUrl?(url: string): Promise<void>;
}

/** Settings of the providers, from the node's config (`group: 'provider'` options), keyed like the config file; secrets included, never log them. */
export type ProviderSettings = Readonly<Record<string, string | number | boolean | undefined>>;

/** Coded failure of an outbound call. Codes: `url_invalid`, `url_scheme_refused`, `url_address_refused`, `dns_failed`, `too_many_redirects`, `timeout`, `connect_failed`, `response_too_large`, `unexpected_content_type`, `invalid_json`, `provider_error`; the client also throws `aborted` when the request's own signal fires. */
export class OutboundError extends Error {
  readonly code: string;
  /** True when the caller's input caused it (refuse with 400 before payment), false for provider/network failures. */
  readonly callerFault: boolean;
  constructor(code: string, message: string, callerFault = false) {
    super(message);
    this.name = 'OutboundError';
    this.code = code;
    this.callerFault = callerFault;
  }
}

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
