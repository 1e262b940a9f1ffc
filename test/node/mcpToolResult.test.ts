import { describe, expect, test } from '@jest/globals';
import { toolResult, type McpModules } from '../../node/api/mcp.js';
import type { PaidCallOutcome } from '../../x402/core/outcome.js';

// toolResult reads only the chain parameters' network name (the rail's network in the payment response).
const m = { params: { network: 'native-devnet' } } as unknown as McpModules;
const error = { code: 'service_failed', message: 'upstream down' };
// The failed outcome's quote is not read for a failure (the answer carries no payment-required object).
const meta = (o: Omit<Extract<PaidCallOutcome, { kind: 'failed' }>, 'quote'>) => toolResult(m, { ...o, quote: {} } as PaidCallOutcome)._meta?.['x402/payment-response'] as Record<string, unknown>;

describe('MCP: a paid call that failed after the payment', () => {
  test('refunded on chain: refunded true with the refund tx', () => {
    const r = meta({ kind: 'failed', status: 502, rail: 'native', txId: 'aa'.repeat(32), body: { paid: true, refunded: true, refundTxId: 'bb'.repeat(32), error } });
    expect(r).toMatchObject({ success: false, errorReason: 'service_failed', transaction: 'aa'.repeat(32), network: 'native-devnet', refunded: true, refundTxId: 'bb'.repeat(32) });
  });

  test('refund owed and not sent yet: refunded false, refund pending — never "refunded: true" without a transaction', () => {
    const r = meta({ kind: 'failed', status: 502, rail: 'native', txId: 'aa'.repeat(32), body: { paid: true, refunded: false, refund: 'pending', reason: 'the payee cannot cover it now', refundTxId: null, error } });
    expect(r).toMatchObject({ success: false, errorReason: 'service_failed', refunded: false, refund: 'pending' });
    expect(r.refundTxId).toBeUndefined();
  });

  test('USDC never settled: no refund fields', () => {
    const r = meta({ kind: 'failed', status: 502, rail: 'usdc', body: { paid: false, error } });
    expect(r).toMatchObject({ success: false, errorReason: 'service_failed', network: 'base' });
    expect(r).not.toHaveProperty('refunded');
  });
});
