/** native-wallet-portfolio: balance, stake, LP positions, token holdings, USD valuation. Not runnable yet: stakes, LP positions and tokens do not exist on this chain yet (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { nativeAddressInput } from './inputs.js';

/** native-wallet-portfolio. */
export const walletPortfolio = defineService({
  id: 'native-wallet-portfolio',
  name: 'Wallet Portfolio',
  category: 'portfolio',
  priceBase: 1_200_000n,
  description: 'balance, stake, LP positions, token holdings, USD valuation',
  tags: ['wallet', 'portfolio', 'balance', 'stake', 'lp', 'tokens', 'usd'],
  requestFormat: 'chain address (native1… on mainnet, tnative1… elsewhere)',
  requestRequired: true,
  inputSchema: nativeAddressInput(),
});
