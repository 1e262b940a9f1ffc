/** The outbound client and what services use of it (see ./types.ts for the contract, ./client.ts for the implementation). */
import { ServiceError, type HealthReport, type HealthStatus, type ServiceContext } from '../types.js';
import { OutboundError } from './types.js';

export { createOutboundClient, defaultOutboundOptions, Outbound, OutboundErrorCode, systemResolver, type OutboundModules, type OutboundOptions, type ResolvedAddress, type Resolver } from './client.js';
export { isPublicAddress, publicOnly, type AddressPolicy } from './addressPolicy.js';
export { createProviderMonitor, DEFAULT_PROBE_INTERVAL_MS, DEFAULT_RETRY_AFTER_FAILURE_MS, ProviderErrorCode, type ProviderHealthSpec, type ProviderMonitor } from './providerHealth.js';
export { OutboundError, type OutboundClient, type OutboundRequest, type OutboundResponse, type ProviderSettings } from './types.js';

/** An input refusal a `precheck` throws (400 before any payment; `invalid_request` with `reason: code` unless the code has a 400 of its own). */
export function refuseInput(code: string, message: string): OutboundError {
  return new OutboundError(code, message, true);
}

/**
 * The `precheck` of services whose input is a caller's URL (a string, or an object with `url`):
 * refuses a missing URL and one whose host is not public before any payment, and answers 503
 * when the node has no outbound client.
 */
export async function precheckPublicUrl(ctx: ServiceContext, input: unknown): Promise<void> {
  const url = typeof input === 'string' ? input : typeof input === 'object' && input !== null && typeof (input as { url?: unknown }).url === 'string' ? (input as { url: string }).url : undefined;
  if (url === undefined) throw refuseInput('invalid_request', 'a URL is required');
  if (!ctx.outbound) throw new ServiceError('outbound_unavailable', 'this node has no outbound client');
  await ctx.outbound.checkPublicUrl?.(url);
}

/** Health of a service that fetches the caller's URL: it can run whenever the node has an outbound client. */
export async function outboundHealth(ctx: ServiceContext): Promise<HealthStatus | HealthReport> {
  return ctx.outbound ? 'active' : { status: 'down', reason: { code: 'outbound_unavailable', message: 'this node makes no outbound calls' } };
}
