/** A minimal service definition for settlement tests: a string input, the given `run`, 2 s timeout. */
import type { ServiceDefinition } from '../../services/types.js';

export function stubService(id: string, run: ServiceDefinition['run'], priceBase = 200_000n): ServiceDefinition {
  return { id, name: id, category: 'utility', priceBase, description: id, tags: [], requestFormat: '', requestRequired: false, inputSchema: { type: 'string' }, providerAgent: 'native-node', nodeOperated: true, timeoutMs: 2000, run };
}
