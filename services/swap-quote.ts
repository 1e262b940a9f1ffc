/** native-swap-quote: exact AMM quote with outcome, price impact, fees. Not runnable yet: it needs the on-chain AMM pools, which do not exist yet (the node answers 503 service_unavailable). */
import { defineService } from './define.js';
import { TOKEN_SYMBOL_PATTERN } from './inputs.js';

/** native-swap-quote. */
export const swapQuote = defineService({
  id: 'native-swap-quote',
  name: 'Swap Quote',
  category: 'trading',
  priceBase: 600_000n,
  description: 'exact AMM quote with outcome, price impact, fees',
  tags: ['swap', 'quote', 'amm', 'price-impact', 'fees', 'trading', 'dex'],
  requestFormat: 'amount, space, FROM, arrow, TO, e.g. "100 NATIVE -> USDC"',
  requestRequired: true,
  inputSchema: { type: 'string', maxLength: 80, pattern: `^[0-9]{1,20}(\\.[0-9]{1,18})?\\s+${TOKEN_SYMBOL_PATTERN}\\s*(->|=>|→|>)\\s*${TOKEN_SYMBOL_PATTERN}$`, description: 'Amount, FROM symbol, arrow, TO symbol: 100 NATIVE -> USDC.' },
});
