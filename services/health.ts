/** The cheap health probes of the node-operated services (the prober calls them; no payment, no heavy work). */
import type { ChainReader } from '../chain/types.js';
import type { HealthReport, HealthStatus } from './types.js';

/** Health of a service that reads the chain: `active` while the store answers, `down` once it does not (closed, failing disk). */
export async function chainHealth(ctx: { readonly chain: ChainReader }): Promise<HealthStatus | HealthReport> {
  try {
    await ctx.chain.getSupply();
    return 'active';
  } catch (e) {
    return { status: 'down', reason: { code: 'chain_unreadable', message: `the chain store does not answer: ${e instanceof Error ? e.message : String(e)}` } };
  }
}

/** Health of a service that computes from its input and the chain parameters only. */
export async function pureHealth(): Promise<HealthStatus> {
  return 'active';
}
