/**
 * native-x402-validation: zero-spend validation of a public x402/MCP endpoint (the spec's
 * Limits table): four GET probes of 6 s each (the URL, /health, /ready,
 * /.well-known/x402.json), the 402 challenges checked as x402 v1 bodies and v2
 * PAYMENT-REQUIRED headers, with `mcp: true` an MCP initialize and tools/list, with
 * `correlation: true` the discovery document compared with the 402s. Everything goes through
 * the SSRF-safe outbound client; nothing is signed or paid. See services/web/x402Probe.ts.
 */
import { defineService } from './define.js';
import { x402ValidationSchema } from './documentSchemas.js';
import { CALLER_URL_SERVICE, outboundOf } from './web/readable.js';
import { validateX402Endpoint, validationRequestOf } from './web/x402Probe.js';

/** Version the validator's MCP client announces. */
const VALIDATOR_VERSION = '1.0.0';

/** native-x402-validation. */
export const x402Validation = defineService({
  id: 'native-x402-validation',
  name: 'x402 Endpoint Validation',
  category: 'audit',
  priceBase: 100_000_000n,
  description: 'zero-spend validation of a public x402/MCP endpoint',
  tags: ['x402', 'mcp', 'validation', 'endpoint', 'audit', 'probe'],
  requestFormat: 'URL, or JSON {"url": …, "mcp": bool, "correlation": bool, "includeBody": bool}',
  inputSchema: x402ValidationSchema,
  inputIsJson: true,
  ...CALLER_URL_SERVICE,
  timeoutMs: 30_000,
  run: async (ctx, input) => validateX402Endpoint(outboundOf(ctx), validationRequestOf(input), { version: VALIDATOR_VERSION, signal: ctx.signal }),
});
