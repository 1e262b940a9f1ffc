/** native-fx-rates: fiat conversion across 30+ currencies or list of rates. Not runnable yet: it needs an FX-rates provider (the node answers 503 service_unavailable). */
import { defineService } from './define.js';

/** native-fx-rates. */
export const fxRates = defineService({
  id: 'native-fx-rates',
  name: 'FX Rates',
  category: 'market-data',
  priceBase: 200_000n,
  description: 'fiat conversion across 30+ currencies or list of rates',
  tags: ['fx', 'currency', 'exchange-rates', 'fiat', 'conversion'],
  requestFormat: '"amount CUR to CUR" (e.g. "100 EUR to USD") or a base currency code (e.g. EUR); empty: USD rates',
  requestRequired: false,
  inputSchema: { type: 'string', maxLength: 40, pattern: '^([0-9]{1,15}(\\.[0-9]{1,8})?\\s+[A-Za-z]{3}\\s+[Tt][Oo]\\s+[A-Za-z]{3}|[A-Za-z]{3})$', description: 'Amount CUR to CUR, or a base currency code.' },
});
