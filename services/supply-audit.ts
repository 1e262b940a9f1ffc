/** native-supply-audit: minted, burned, max-supply headroom, holders, issuer balance. Not runnable yet: tokens do not exist on this chain yet (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { tokenOrPoolInput } from './inputs.js';

/** native-supply-audit. */
export const supplyAudit = defineService({
  id: 'native-supply-audit',
  name: 'Token Supply Audit',
  category: 'audit',
  priceBase: 1_200_000n,
  description: 'minted, burned, max-supply headroom, holders, issuer balance',
  tags: ['supply', 'minted', 'burned', 'holders', 'issuer', 'token', 'audit'],
  requestFormat: 'token symbol or pool (TOKEN/TOKEN or 64-hex id); empty: all tokens',
  requestRequired: false,
  inputSchema: tokenOrPoolInput(),
});
