/**
 * The quotes of the paid-call core, kept between calls: a call whose quote would come out the
 * same as the last one of its service and base URL gets that very object back (`buildQuote`, then
 * the signed offers of its options). Same object means same content: quotes are never mutated,
 * and the object changes whenever anything it is built from does — the service's id, price or
 * description, the payee, the seller id, the confirmations, the NATIVE price in USD (the USDC
 * amount), the USDC payee, the resource URL, or an offer signature (the offer signer's window).
 * So a transport may keep what it rendered from a quote for as long as it is handed the same
 * object (node/api/quoteAnswers.ts).
 */
import type { ServiceDefinition } from '../../services/types.js';
import type { OfferExtension, OfferSigner } from './offers.js';
import { buildQuote, type QuoteBody, type QuoteContext } from './quote.js';
import { OFFER_RECEIPT } from './wire.js';

/** Largest number of quotes kept (services × base URLs); past it the memo starts again. */
export const MAX_MEMO_QUOTES = 4096;

/** The quotes kept by the core. */
export interface QuoteMemo {
  /** The quote of `def` in context `q` for a caller at `baseUrl` (`buildQuote`); the same object as last time when nothing changed. */
  quoteOf(def: ServiceDefinition, q: QuoteContext, baseUrl: string): QuoteBody;
  /** `quote` with the signed offers of its options (a 402's); the same object as last time when neither the quote nor a signature changed. */
  offeredOf(quote: QuoteBody, baseUrl: string, offers: OfferSigner): QuoteBody;
}

interface Entry {
  readonly priceBase: bigint;
  readonly description: string;
  readonly q: QuoteContext;
  readonly baseUrl: string;
  readonly quote: QuoteBody;
  /** The quote with its offers, and the signatures it carries (undefined until a 402 asked). */
  offered?: QuoteBody;
  signatures?: readonly string[];
}

/** Whether two quote contexts build the same quote (every field `buildQuote` reads). */
function sameContext(a: QuoteContext, b: QuoteContext): boolean {
  return (
    a.resource === b.resource &&
    a.network === b.network &&
    a.chainId === b.chainId &&
    a.payTo === b.payTo &&
    a.sellerId === b.sellerId &&
    a.confirmations === b.confirmations &&
    a.microUsd === b.microUsd &&
    a.usdc?.payTo === b.usdc?.payTo
  );
}

/** `quote` with the offer extension `ext` (as the core adds it to every 402). */
const withExtension = (quote: QuoteBody, ext: OfferExtension): QuoteBody => ({ ...quote, extensions: { ...quote.extensions, [OFFER_RECEIPT]: ext } });

/** Creates the memo. */
export function createQuoteMemo(maxEntries: number = MAX_MEMO_QUOTES): QuoteMemo {
  const entries = new Map<string, Entry>();
  const byQuote = new WeakMap<QuoteBody, Entry>();
  return {
    quoteOf(def, q, baseUrl) {
      const key = `${def.id}\n${baseUrl}\n${q.resource}`;
      let e = entries.get(key);
      if (!e || e.priceBase !== def.priceBase || e.description !== def.description || !sameContext(e.q, q)) {
        if (entries.size >= maxEntries) entries.clear();
        e = { priceBase: def.priceBase, description: def.description, q, baseUrl, quote: buildQuote(def, q) };
        entries.set(key, e);
        byQuote.set(e.quote, e);
      }
      return e.quote;
    },
    offeredOf(quote, baseUrl, offers) {
      const ext = offers.extensionFor(quote.accepts, baseUrl);
      const e = byQuote.get(quote);
      // A quote of its own (not from quoteOf), or of another base URL: nothing to keep.
      if (!e || e.baseUrl !== baseUrl) return withExtension(quote, ext);
      // The signer decides when an offer is signed anew (its window): a new signature makes a new quote.
      const sigs = ext.info.offers;
      const kept = e.signatures;
      if (!e.offered || !kept || sigs.length !== kept.length || sigs.some((o, i) => o.signature !== kept[i])) {
        e.offered = withExtension(quote, ext);
        e.signatures = sigs.map((o) => o.signature);
      }
      return e.offered;
    },
  };
}
