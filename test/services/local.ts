/**
 * Calls a local-compute service (documents, text, identity, compliance) the way the x402 flow
 * does: the registry's input check, then `executeService`. These services read no chain state,
 * so their context carries only the clock, a logger and the registry.
 */
import { silentLogger } from '../../chain/types.js';
import { createServiceRegistry, executeService, type ServiceContext } from '../../services/index.js';

export const registry = createServiceRegistry();

/** 2027-01-12T13:46:40Z, the services tests' clock. */
export const LOCAL_NOW_MS = Date.UTC(2027, 0, 12, 13, 46, 40);

/** The context of a local-compute service (no chain, mempool or verifier: reading them would throw). */
export function localContext(extra: Partial<ServiceContext> = {}): Omit<ServiceContext, 'signal'> {
  return { log: silentLogger, now: () => LOCAL_NOW_MS, registry, ...extra } as unknown as Omit<ServiceContext, 'signal'>;
}

/** Outcome of the input check alone: the 400 message, or undefined when the input is accepted. */
export function refusal(id: string, request: string | undefined): string | undefined {
  const v = registry.validateInput(registry.get(id)!, request);
  return v.ok ? undefined : v.error.message;
}

/** Validates `request`, then runs the service. */
export async function callLocal<T = Record<string, unknown>>(id: string, request: string | undefined, extra: Partial<ServiceContext> = {}): Promise<T> {
  const def = registry.get(id)!;
  const v = registry.validateInput(def, request);
  if (!v.ok) throw new Error(`${id}: ${v.error.message}`);
  return (await executeService(def, localContext(extra), v.input)) as T;
}
