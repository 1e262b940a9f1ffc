/** native-b2b-compliance-report: compliance summary from raw transactions. Not runnable yet: it needs a compliance data provider (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { complianceReportSchema } from './documentSchemas.js';

/** native-b2b-compliance-report. */
export const b2bComplianceReport = defineService({
  id: 'native-b2b-compliance-report',
  name: 'B2B Compliance Report',
  category: 'reports',
  priceBase: 500_000_000n,
  description: 'compliance summary from raw transactions',
  tags: ['compliance', 'b2b', 'report', 'transactions', 'aml', 'kyc'],
  requestFormat: 'JSON: {"txs": [{"id", "amount", "counterparty", "country"}]}',
  requestRequired: false,
  inputSchema: complianceReportSchema,
  inputIsJson: true,
});
