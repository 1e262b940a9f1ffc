/** native-crypto-portfolio-tracker: profit/loss, allocation, top holdings with USD values. Not runnable yet: it needs on-chain analytics providers (the node answers 503 service_unavailable). */
import { defineService } from './define.js';

/** native-crypto-portfolio-tracker. */
export const cryptoPortfolioTracker = defineService({
  id: 'native-crypto-portfolio-tracker',
  name: 'Crypto Portfolio Tracker',
  category: 'portfolio',
  priceBase: 500_000_000n,
  description: 'profit/loss, allocation, top holdings with USD values',
  tags: ['portfolio', 'pnl', 'allocation', 'holdings', 'usd', 'wallet'],
  requestFormat: 'wallet address, or "portfolio:" followed by the address',
  requestRequired: false,
  inputSchema: { type: 'string', maxLength: 100, pattern: '^([Pp][Oo][Rr][Tt][Ff][Oo][Ll][Ii][Oo]:\\s*)?[0-9A-Za-z]{25,90}$', description: 'Wallet address, optionally prefixed with portfolio:.' },
});
