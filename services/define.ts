/** Defaults shared by the catalog's definitions, so each service file states only what is its own. */
import type { ServiceDefinition } from './types.js';

/** Provider agent name of everything the node runs itself. */
export const NODE_AGENT = 'native-node';
/** Execution timeout of services that read only local chain state, ms. */
export const LOCAL_TIMEOUT_MS = 5_000;
/** Execution timeout of services that call an external provider, ms. */
export const EXTERNAL_TIMEOUT_MS = 15_000;

/** What a service file writes: the definition minus the fields with a node-wide default. */
export type ServiceSpec = Omit<ServiceDefinition, 'providerAgent' | 'nodeOperated' | 'timeoutMs'> &
  Partial<Pick<ServiceDefinition, 'providerAgent' | 'nodeOperated' | 'timeoutMs'>>;

/**
 * A frozen service definition: node-operated by `native-node`, with the local timeout when the
 * service runs on chain data and the external one otherwise, unless the spec says more.
 */
export function defineService(spec: ServiceSpec): ServiceDefinition {
  const def: ServiceDefinition = {
    providerAgent: NODE_AGENT,
    nodeOperated: true,
    timeoutMs: spec.run ? LOCAL_TIMEOUT_MS : EXTERNAL_TIMEOUT_MS,
    ...spec,
    tags: Object.freeze([...spec.tags]),
  };
  return Object.freeze(def);
}
