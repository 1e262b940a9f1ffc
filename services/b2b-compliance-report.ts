/**
 * native-b2b-compliance-report: compliance summary of up to 1,000 transactions (totals per
 * country and counterparty, high-risk jurisdictions, structuring, sanctioned counterparties,
 * risk rating with reasons, markdown), built by services/compliance/report.ts.
 */
import { buildComplianceReport, type ComplianceTx } from './compliance/report.js';
import { defineService } from './define.js';
import { complianceReportSchema } from './documentSchemas.js';
import { SANCTIONS_MISSING_HEALTH, sanctionsAvailable, sanctionsIndex } from './sanctions/screen.js';
import type { ServiceContext } from './types.js';

async function run(_ctx: ServiceContext, input: unknown) {
  return buildComplianceReport((input as { txs: ComplianceTx[] }).txs, sanctionsIndex());
}

/** native-b2b-compliance-report. */
export const b2bComplianceReport = defineService({
  id: 'native-b2b-compliance-report',
  name: 'B2B Compliance Report',
  category: 'reports',
  priceBase: 500_000_000n,
  description: 'compliance summary from raw transactions',
  tags: ['compliance', 'b2b', 'report', 'transactions', 'aml', 'kyc'],
  requestFormat: 'JSON: {"txs": [{"id", "amount", "counterparty", "country"}]} (at most 1000 transactions)',
  requestRequired: false,
  needsInput: true,
  inputSchema: complianceReportSchema,
  inputIsJson: true,
  run,
  health: async () => (sanctionsAvailable() ? 'active' : SANCTIONS_MISSING_HEALTH),
});
