/** native-x402-validation: zero-spend validation of a public x402/MCP endpoint. Not runnable yet: it needs the outbound HTTP prober (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { x402ValidationSchema } from './documentSchemas.js';

/** native-x402-validation. */
export const x402Validation = defineService({
  id: 'native-x402-validation',
  name: 'x402 Endpoint Validation',
  category: 'audit',
  priceBase: 100_000_000n,
  description: 'zero-spend validation of a public x402/MCP endpoint',
  tags: ['x402', 'mcp', 'validation', 'endpoint', 'audit', 'probe'],
  requestFormat: 'URL, or JSON {"url": …, "mcp": bool, "correlation": bool, "includeBody": bool}',
  requestRequired: false,
  inputSchema: x402ValidationSchema,
  inputIsJson: true,
  timeoutMs: 30_000,
});
