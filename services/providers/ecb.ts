/**
 * The ECB's euro foreign exchange reference rates (`eurofxref-daily.xml`): one `Cube time=` day
 * with one `Cube currency= rate=` per currency, EUR base, published around 16:00 CET on TARGET
 * working days. The document is a fixed machine format; this reader checks its envelope, the
 * date and every rate, and refuses anything else as `provider_bad_response`.
 */
import type { OutboundClient } from '../outbound/types.js';
import { badResponse, providerFetch } from './call.js';
import { parseDecimal, type Decimal } from './decimal.js';
import type { FxProviderOptions } from './options.js';

const PROVIDER = 'ECB reference rates';

/** One day of reference rates: currency → units per 1 EUR (EUR itself included, rate 1). */
export interface EcbRates {
  /** Reference date, YYYY-MM-DD. */
  readonly date: string;
  readonly rates: ReadonlyMap<string, Decimal>;
  /** The rates as published (decimal strings), for display. */
  readonly text: Readonly<Record<string, string>>;
}

/** Fewer currencies than this means the document is not the daily reference set. */
const MIN_CURRENCIES = 20;

/** Parses `eurofxref-daily.xml`; throws `provider_bad_response` when it is not one. */
export function parseEcbDaily(xml: string): EcbRates {
  if (!/<(\w+:)?Envelope[\s>]/.test(xml) || !xml.includes('eurofxref')) throw badResponse(PROVIDER, 'not a eurofxref document');
  const day = /<Cube\s+time\s*=\s*["'](\d{4}-\d{2}-\d{2})["']\s*>/.exec(xml);
  if (!day) throw badResponse(PROVIDER, 'no reference date');
  const date = day[1];
  if (Number.isNaN(Date.parse(`${date}T00:00:00Z`))) throw badResponse(PROVIDER, `bad reference date ${date}`);
  const rates = new Map<string, Decimal>([['EUR', { units: 1n, scale: 0 }]]);
  const text: Record<string, string> = { EUR: '1' };
  const entry = /<Cube\s+currency\s*=\s*["']([^"']*)["']\s+rate\s*=\s*["']([^"']*)["']\s*\/>/g;
  for (const m of xml.matchAll(entry)) {
    const [, code, rate] = m;
    const value = parseDecimal(rate);
    if (!/^[A-Z]{3}$/.test(code) || !value || value.units === 0n) throw badResponse(PROVIDER, `bad rate entry ${code}=${rate}`);
    rates.set(code, value);
    text[code] = rate;
  }
  if (rates.size - 1 < MIN_CURRENCIES) throw badResponse(PROVIDER, `only ${rates.size - 1} currencies`);
  return { date, rates, text };
}

/** The ECB adapter. */
export interface Ecb {
  /** Today's reference rates (cached ten minutes: they change once a working day). */
  daily(signal?: AbortSignal): Promise<EcbRates>;
  probe(signal?: AbortSignal): Promise<void>;
}

/** Creates the adapter over the outbound client. */
export function createEcb(opts: FxProviderOptions, outbound: OutboundClient): Ecb {
  const daily = async (signal?: AbortSignal) => {
    const res = await providerFetch(outbound, PROVIDER, { url: opts.url, signal, accept: ['text/xml', 'application/xml'], maxBytes: 64 * 1024, cacheTtlMs: 600_000 });
    return parseEcbDaily(res.text());
  };
  return {
    daily,
    async probe(signal) {
      await daily(signal);
    },
  };
}
