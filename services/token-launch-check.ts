/** native-token-launch-check: pre-flight validation of a new token. Not runnable yet: the token rules of this chain do not exist yet (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { TOKEN_SYMBOL_PATTERN } from './inputs.js';

/** native-token-launch-check. */
export const tokenLaunchCheck = defineService({
  id: 'native-token-launch-check',
  name: 'Token Launch Check',
  category: 'compliance',
  priceBase: 1_200_000n,
  description: 'pre-flight validation of a new token',
  tags: ['token', 'launch', 'validation', 'compliance', 'pre-flight'],
  requestFormat: 'SYMBOL|Name|decimals|maxSupply, e.g. "GOLD|Gold Token|8|21000000"',
  requestRequired: true,
  inputSchema: { type: 'string', maxLength: 160, pattern: `^${TOKEN_SYMBOL_PATTERN}\\s*\\|\\s*[^|]{1,64}\\s*\\|\\s*[0-9]{1,2}\\s*\\|\\s*[0-9]{1,30}(\\.[0-9]{1,18})?$`, description: 'SYMBOL|Name|decimals|maxSupply joined by pipes.' },
});
