/** The outbound client and what services use of it (see ./types.ts for the contract, ./client.ts for the implementation). */
import type { ServiceContext } from '../types.js';

export { createOutboundClient, defaultOutboundOptions, Outbound, OutboundErrorCode, systemResolver, type OutboundModules, type OutboundOptions, type ResolvedAddress, type Resolver } from './client.js';
export { isPublicAddress, publicOnly, type AddressPolicy } from './addressPolicy.js';
export { createProviderMonitor, DEFAULT_PROBE_INTERVAL_MS, type ProviderHealthSpec, type ProviderMonitor } from './providerHealth.js';
export { OutboundError, type OutboundClient, type OutboundRequest, type OutboundResponse, type ProviderSettings } from './types.js';

/** A `precheck` for services whose input is a caller's URL: refuses it before payment when its host is not public. */
export async function precheckPublicUrl(ctx: ServiceContext, input: unknown): Promise<void> {
  if (typeof input === 'string' && ctx.outbound?.checkPublicUrl) await ctx.outbound.checkPublicUrl(input);
}
