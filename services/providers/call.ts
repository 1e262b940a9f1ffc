/**
 * One call to a provider's API through the outbound client's `fetchProvider` (timeouts, size
 * cap, content-type check), with every failure turned into a `ServiceError` whose code says
 * what went wrong (the paid call is then refunded): the provider unreachable or slow, an HTTP
 * error, a body too large, or a body that is not what the provider documents.
 */
import type { z } from 'zod';
import { OutboundError, type OutboundClient, type OutboundRequest, type OutboundResponse } from '../outbound/types.js';
import { ServiceError } from '../types.js';

/** Codes of provider failures (all refunded when they happen after payment). */
export const ProviderCallErrorCode = {
  /** The provider is not configured on this node. */
  UNCONFIGURED: 'service_unavailable',
  /** Connect failure, DNS failure, HTTP error status. */
  FAILED: 'provider_error',
  /** No complete answer within the time limit. */
  TIMEOUT: 'provider_timeout',
  /** The answer exceeded the size cap. */
  TOO_LARGE: 'provider_response_too_large',
  /** The answer is not in the provider's documented format (bad JSON, wrong shape, wrong content type). */
  BAD_RESPONSE: 'provider_bad_response',
  /** The provider answered that the thing asked for does not exist (unknown city, unknown coin). */
  NOT_FOUND: 'provider_not_found',
} as const;

/** Default size cap of a provider's answer, bytes (the time limit is the outbound client's, `outboundTimeout`, within the service's own). */
export const PROVIDER_MAX_BYTES = 1 << 20;

/** A provider's answer that is not what its documentation promises. */
export function badResponse(provider: string, why: string): ServiceError {
  return new ServiceError(ProviderCallErrorCode.BAD_RESPONSE, `${provider} answered in an unexpected format: ${why}`);
}

function fromOutbound(provider: string, e: unknown): ServiceError {
  if (e instanceof ServiceError) return e;
  if (e instanceof OutboundError) {
    if (e.code === 'timeout' || e.code === 'aborted') return new ServiceError(ProviderCallErrorCode.TIMEOUT, `${provider} did not answer in time`);
    if (e.code === 'response_too_large') return new ServiceError(ProviderCallErrorCode.TOO_LARGE, `${provider}'s answer exceeded the size limit`);
    if (e.code === 'invalid_json' || e.code === 'unexpected_content_type') return badResponse(provider, e.message);
    return new ServiceError(ProviderCallErrorCode.FAILED, `${provider} is unreachable: ${e.message}`);
  }
  // An abort of the service's own signal (its timeout) surfaces as the timeout it is.
  if (e instanceof Error && (e.name === 'AbortError' || e.name === 'TimeoutError')) return new ServiceError(ProviderCallErrorCode.TIMEOUT, `${provider} did not answer in time`);
  return new ServiceError(ProviderCallErrorCode.FAILED, `${provider} failed: ${e instanceof Error ? e.message : String(e)}`);
}

/** `fetchProvider(req)` with failures as ServiceErrors; a status outside 2xx is `provider_error` (with the provider's own message when it gives one). */
export async function providerFetch(outbound: OutboundClient, provider: string, req: OutboundRequest): Promise<OutboundResponse> {
  let res: OutboundResponse;
  try {
    res = await outbound.fetchProvider({ maxBytes: PROVIDER_MAX_BYTES, ...req });
  } catch (e) {
    throw fromOutbound(provider, e);
  }
  if (res.status < 200 || res.status > 299) {
    throw new ServiceError(ProviderCallErrorCode.FAILED, `${provider} answered HTTP ${res.status}${errorDetail(res)}`);
  }
  return res;
}

/** A short reason from an error body (`{error: "…"}`, `{error: {message}}`, `{reason}`, `{detail}`), if any. */
function errorDetail(res: OutboundResponse): string {
  try {
    const j = JSON.parse(new TextDecoder().decode(res.body.subarray(0, 4096))) as Record<string, unknown>;
    const e = j.error;
    const msg = typeof e === 'string' ? e : typeof e === 'object' && e !== null && typeof (e as { message?: unknown }).message === 'string' ? (e as { message: string }).message : typeof j.reason === 'string' ? j.reason : typeof j.detail === 'string' ? j.detail : undefined;
    return msg ? `: ${msg.slice(0, 200)}` : '';
  } catch {
    return '';
  }
}

/** A JSON provider call whose answer must match `schema` (zod); anything else is `provider_bad_response`. */
export async function providerJson<T>(outbound: OutboundClient, provider: string, req: OutboundRequest, schema: z.ZodType<T>): Promise<T> {
  const res = await providerFetch(outbound, provider, { accept: ['application/json'], ...req, headers: { accept: 'application/json', ...req.headers } });
  let json: unknown;
  try {
    json = res.json();
  } catch (e) {
    throw fromOutbound(provider, e);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw badResponse(provider, `${issue.path.join('.') || 'body'}: ${issue.message}`);
  }
  return parsed.data;
}

/** A JSON POST to a provider (`body` serialized, content type set), its answer checked against `schema`. */
export function providerPostJson<T>(
  outbound: OutboundClient,
  provider: string,
  url: string,
  body: unknown,
  o: { readonly headers?: Readonly<Record<string, string>>; readonly signal?: AbortSignal; readonly timeoutMs?: number; readonly maxBytes?: number },
  schema: z.ZodType<T>,
): Promise<T> {
  return providerJson(outbound, provider, { url, method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...o.headers }, signal: o.signal, timeoutMs: o.timeoutMs, maxBytes: o.maxBytes }, schema);
}

/** Headers of an OpenAI-style bearer key, when one is set. */
export function bearer(apiKey: string | undefined): Record<string, string> {
  return apiKey ? { authorization: `Bearer ${apiKey}` } : {};
}

/** `base` + `path` with exactly one slash between them. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}
