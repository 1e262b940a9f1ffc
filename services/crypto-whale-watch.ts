/** native-crypto-whale-watch: large-wallet movement alert and holding analysis. Not runnable yet: it needs on-chain analytics providers (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { walletAddressInput } from './inputs.js';

/** native-crypto-whale-watch. */
export const cryptoWhaleWatch = defineService({
  id: 'native-crypto-whale-watch',
  name: 'Crypto Whale Watch',
  category: 'whale-watch',
  priceBase: 2_500_000_000n,
  description: 'large-wallet movement alert and holding analysis',
  tags: ['whale', 'wallet', 'movements', 'holdings', 'alerts'],
  requestFormat: 'wallet address (native, EVM, Solana, Bitcoin or Litecoin)',
  requestRequired: false,
  inputSchema: walletAddressInput(),
});
