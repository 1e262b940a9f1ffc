/**
 * native-fx-rates: fiat conversion (`100 USD to EUR`) or the rates of a base currency, from the
 * ECB's daily euro reference rates. Cross rates are computed from the EUR rates with exact
 * decimal arithmetic (bigint), rounded half-up; the ECB reference date is stated.
 */
import { anyCase } from './inputs.js';
import { defineService, EXTERNAL_TIMEOUT_MS } from './define.js';
import { ProviderCallErrorCode } from './providers/call.js';
import { mulDiv, ONE, parseDecimal } from './providers/decimal.js';
import type { EcbRates } from './providers/ecb.js';
import { callProvider, providersHealth, providersReady } from './providers/index.js';
import { ServiceError, type ServiceContext } from './types.js';

/** The currencies of the ECB's daily reference rates (EUR included), as published since January 2026. */
export const ECB_CURRENCIES = Object.freeze(['EUR', 'USD', 'JPY', 'CZK', 'DKK', 'GBP', 'HUF', 'PLN', 'RON', 'SEK', 'CHF', 'ISK', 'NOK', 'TRY', 'AUD', 'BRL', 'CAD', 'CNY', 'HKD', 'IDR', 'ILS', 'INR', 'KRW', 'MXN', 'MYR', 'NZD', 'PHP', 'SGD', 'THB', 'ZAR']);
/** Base currency of an empty request. */
export const DEFAULT_BASE = 'USD';
/** Decimals of a computed rate and of a converted amount. */
export const RATE_DECIMALS = 8;
export const AMOUNT_DECIMALS = 6;

const cur = anyCase(ECB_CURRENCIES).slice(2, -2); // the alternation without ^( … )$
const CONVERT = /^(\d+(?:\.\d+)?)\s+([A-Za-z]{3})\s+to\s+([A-Za-z]{3})$/i;

function rateOf(r: EcbRates, code: string) {
  const v = r.rates.get(code);
  if (!v) throw new ServiceError(ProviderCallErrorCode.NOT_FOUND, `the ECB published no ${code} rate on ${r.date}`);
  return v;
}

const source = (r: EcbRates) => ({ provider: 'European Central Bank euro foreign exchange reference rates', date: r.date, base: 'EUR', note: 'Reference rates for information; published around 16:00 CET on TARGET working days.' });

async function run(ctx: ServiceContext, input: unknown) {
  const text = typeof input === 'string' && input !== '' ? input : DEFAULT_BASE;
  const r = await callProvider(ctx, 'fx', (p) => p.fx.daily(ctx.signal));
  const m = CONVERT.exec(text);
  if (m) {
    const amount = parseDecimal(m[1])!;
    const from = m[2].toUpperCase();
    const to = m[3].toUpperCase();
    const rf = rateOf(r, from);
    const rt = rateOf(r, to);
    // EUR base: 1 FROM = rt / rf TO.
    return {
      mode: 'convert',
      amount: m[1],
      from,
      to,
      result: mulDiv(amount, rt, rf, AMOUNT_DECIMALS),
      rate: mulDiv(ONE, rt, rf, RATE_DECIMALS),
      inverseRate: mulDiv(ONE, rf, rt, RATE_DECIMALS),
      date: r.date,
      source: source(r),
    };
  }
  const base = text.toUpperCase();
  const rb = rateOf(r, base);
  const rates: Record<string, string> = {};
  for (const [code, v] of [...r.rates].sort(([a], [b]) => a.localeCompare(b))) if (code !== base) rates[code] = mulDiv(ONE, v, rb, RATE_DECIMALS);
  return { mode: 'rates', base, date: r.date, count: Object.keys(rates).length, rates, source: source(r) };
}

/** native-fx-rates. */
export const fxRates = defineService({
  id: 'native-fx-rates',
  name: 'FX Rates',
  category: 'market-data',
  priceBase: 200_000n,
  description: 'fiat conversion across 30+ currencies or list of rates',
  tags: ['fx', 'currency', 'exchange-rates', 'fiat', 'conversion'],
  requestFormat: '"amount CUR to CUR" (e.g. "100 EUR to USD") or a base currency code (e.g. EUR); empty: USD rates. Currencies of the ECB reference rates: ' + ECB_CURRENCIES.join(', '),
  requestRequired: false,
  inputSchema: { type: 'string', maxLength: 40, pattern: `^([0-9]{1,15}(\\.[0-9]{1,8})?\\s+(${cur})\\s+[Tt][Oo]\\s+(${cur})|(${cur}))$`, description: 'Amount CUR to CUR, or a base currency code.' },
  timeoutMs: EXTERNAL_TIMEOUT_MS,
  run,
  health: providersHealth('fx'),
  precheck: providersReady('fx'),
});
