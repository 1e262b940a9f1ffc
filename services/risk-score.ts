/** native-risk-score: wallet score 0-100 with flags washTrading, flashLoanAttack, sanctionHit, mixerInteraction, exploitContract. Not runnable yet: it needs on-chain analytics providers (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { walletAddressInput } from './inputs.js';

/** native-risk-score. */
export const riskScore = defineService({
  id: 'native-risk-score',
  name: 'Wallet Risk Score',
  category: 'risk',
  priceBase: 1_500_000_000n,
  description: 'wallet score 0-100 with flags washTrading, flashLoanAttack, sanctionHit, mixerInteraction, exploitContract',
  tags: ['risk', 'score', 'wallet', 'wash-trading', 'flash-loan', 'sanctions', 'mixer', 'exploit'],
  requestFormat: 'wallet address (native, EVM, Solana, Bitcoin or Litecoin)',
  requestRequired: false,
  inputSchema: walletAddressInput(),
});
