/** native-token-audit: on-chain audit of a token (backing %, frozen/hidden flags, holders, pool depth, risk flags). Not runnable yet: tokens and AMM pools do not exist on this chain yet (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { tokenSymbolInput } from './inputs.js';

/** native-token-audit. */
export const tokenAudit = defineService({
  id: 'native-token-audit',
  name: 'Token Audit',
  category: 'audit',
  priceBase: 4_000_000n,
  description: 'on-chain audit of a token (backing %, frozen/hidden flags, holders, pool depth, risk flags)',
  tags: ['token', 'audit', 'backing', 'holders', 'liquidity', 'risk', 'security'],
  requestFormat: 'token symbol, e.g. USDC',
  requestRequired: true,
  inputSchema: tokenSymbolInput(),
});
