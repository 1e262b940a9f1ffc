/** native-aml-sanctions-scan: screening against sanctions lists with risk score and flagged matches. Not runnable yet: it needs sanctions-list data (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { sanctionsScanSchema } from './documentSchemas.js';

/** native-aml-sanctions-scan. */
export const amlSanctionsScan = defineService({
  id: 'native-aml-sanctions-scan',
  name: 'AML Sanctions Scan',
  category: 'compliance',
  priceBase: 1_000_000_000n,
  description: 'screening against sanctions lists with risk score and flagged matches',
  tags: ['aml', 'sanctions', 'ofac', 'eu', 'un', 'screening', 'compliance'],
  requestFormat: 'JSON: {"entity": wallet address or company name, "lists": ["OFAC", "EU", "UN"]}',
  requestRequired: false,
  inputSchema: sanctionsScanSchema,
  inputIsJson: true,
});
