/**
 * The 402 answers of plain quotes (no payment presented), kept rendered: the JSON body, the x402
 * v2 `PAYMENT-REQUIRED` header and the `WWW-Authenticate: Payment` challenges are built once per
 * quote × base URL × request × option choice, and served again while they are what a fresh
 * rendering would write at that moment, byte for byte.
 *
 * What an answer depends on, and how each is kept right:
 * - the quote (both options, their prices, payees and signed offers): an entry keeps the quote
 *   object it was rendered from and serves only that very object (x402/core/quoteMemo.ts hands
 *   out a new one whenever a price, a payee, the USD rate, the resource URL or an offer
 *   signature changes, so a price change or a new offer window is never served stale);
 * - the base URL (the realm of the challenges), the request text (the native option's v2
 *   `extra.request`) and the USDC-only choice (`?rail=usdc`, `Prefer: rail=usdc`): the key;
 * - the time: the challenges name their expiry to the second (and their HMAC id covers it), so
 *   they are kept for the second they were made in; the sign-in-with-x declaration inside
 *   `PAYMENT-REQUIRED` names its issue time to the millisecond (and its nonce is an HMAC of it),
 *   so it is made per millisecond and set between the header's kept JSON before and after it.
 *
 * Bounded by entries and bytes (least recently used out first); requests longer than
 * `maxRequestBytes` are rendered each time and never kept.
 */
import { randomBytes } from 'node:crypto';
import { narrowOfferExtension } from '../../x402/core/offers.js';
import { outcomeBody } from '../../x402/core/outcome.js';
import type { PaymentRequirements, QuoteBody } from '../../x402/core/quote.js';
import { SIGN_IN_WITH_X, type SiwxChallenges } from '../../x402/usdc/siwx.js';
import { paymentRequiredV2Of, type PaymentAuth } from './paymentDialects.js';

/** Limits of the kept answers. */
export interface QuoteAnswerOptions {
  /** Answers kept at most (0: none kept, every answer rendered). */
  readonly maxEntries: number;
  /** Bytes of kept answers at most (bodies, headers and keys, as UTF-8). */
  readonly maxBytes: number;
  /** Longest request text (UTF-8 bytes) whose answer is kept. */
  readonly maxRequestBytes: number;
}

/** Defaults of QuoteAnswerOptions: about 10 kB per answer of a service with both rails. */
export const defaultQuoteAnswerOptions: QuoteAnswerOptions = { maxEntries: 2048, maxBytes: 16 * 1024 * 1024, maxRequestBytes: 2048 };

/** How the caller asked for the USDC option alone (x402Routes.ts): by query, by `Prefer`, or not. */
export type UsdcOnly = 'query' | 'prefer' | undefined;

/** What a 402 answer of a plain quote is made of. */
export interface QuoteAnswerInput {
  /** The outcome's quote (with its signed offers). */
  readonly quote: QuoteBody;
  readonly baseUrl: string;
  /** The call's request text (the core's), undefined without one. */
  readonly requestText: string | undefined;
  readonly only: UsdcOnly;
}

/** The rendered answer: headers in the order they are set, then the JSON body (status 402, `application/json; charset=utf-8`). */
export interface QuoteAnswer {
  /** Whether the quote has a USDC option (the answer varies with `Prefer`). */
  readonly varyPrefer: boolean;
  readonly paymentRequired: string;
  readonly wwwAuthenticate: readonly string[];
  readonly body: Buffer;
}

/** Counters of the kept answers (the node's metrics). */
export interface QuoteAnswerStats {
  /** Answers served from a kept rendering. */
  readonly hits: number;
  /** Answers rendered (nothing kept, a different quote, or too large to keep). */
  readonly misses: number;
  readonly entries: number;
  readonly bytes: number;
}

/** The headers a 402 lets browsers read. */
export const EXPOSED_402_HEADERS = 'PAYMENT-REQUIRED, WWW-Authenticate';

/** The second of a time (ms): all the challenges depend on (their `expires`, to the second). */
export const secondOf = (nowMs: number): number => Math.floor(nowMs / 1000) * 1000;

/** The realm of the challenges at a base URL: its host. */
export const realmOf = (baseUrl: string): string => new URL(baseUrl).host;

/** A value no request can hold (a random mark between NULs): where the sign-in declaration goes in the kept `PAYMENT-REQUIRED` JSON. */
const SIGN_IN_MARK = `\u0000sign-in-${randomBytes(12).toString('hex')}\u0000`;
const SIGN_IN_MARK_JSON = JSON.stringify(SIGN_IN_MARK);

/**
 * Base64 of `head ‖ middle ‖ tail` from kept pieces: base64 maps each 3 bytes alone, so the
 * 3-aligned start of `head`, and the end of `tail` past the cut that realigns after a middle of
 * the last middle's length, are encoded once; each answer encodes only the bytes around the
 * middle (the sign-in declaration, whose length stays the same from one millisecond to the next).
 */
class SplitBase64 {
  private readonly headB64: string;
  private readonly headRest: Buffer;
  private planned = -1;
  private tailStart: Buffer = Buffer.alloc(0);
  private tailB64 = '';

  constructor(
    private readonly head: Buffer,
    private readonly tail: Buffer,
  ) {
    const cut = head.length - (head.length % 3);
    this.headB64 = head.subarray(0, cut).toString('base64');
    this.headRest = head.subarray(cut);
  }

  /** base64 of head ‖ middle ‖ tail. */
  encode(middle: string): string {
    const m = Buffer.from(middle, 'utf8');
    if (m.length !== this.planned) {
      // The bytes of the tail that complete the middle's last group; the rest is encoded once.
      const take = Math.min((3 - ((this.headRest.length + m.length) % 3)) % 3, this.tail.length);
      this.tailStart = this.tail.subarray(0, take);
      this.tailB64 = this.tail.subarray(take).toString('base64');
      this.planned = m.length;
    }
    // A tail too short to realign ends the string anyway: its padding is the string's own.
    return this.headB64 + Buffer.concat([this.headRest, m, this.tailStart]).toString('base64') + this.tailB64;
  }

  /** Bytes kept (the pieces and their base64). */
  get bytes(): number {
    return 2 * (this.head.length + this.tail.length);
  }
}

interface Entry {
  readonly quote: QuoteBody;
  readonly bytes: number;
  readonly varyPrefer: boolean;
  readonly body: Buffer;
  /** The options shown, and the resource of the USDC one (the sign-in declaration's). */
  readonly accepts: readonly PaymentRequirements[];
  readonly signInResource: string | undefined;
  /** `PAYMENT-REQUIRED` without a sign-in declaration (no USDC option), or its pieces around one. */
  readonly fixedPaymentRequired: string | undefined;
  readonly split: SplitBase64 | undefined;
  readonly realm: string;
  /** The last millisecond's `PAYMENT-REQUIRED`, and the last second's challenges. */
  prMs: number;
  pr: string;
  challengeSecond: number;
  challenges: readonly string[];
}

/** The 402 answers of plain quotes, rendered and kept (see module comment). */
export class QuoteAnswers {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  private hits = 0;
  private misses = 0;

  constructor(
    private readonly auth: PaymentAuth,
    private readonly siwx: SiwxChallenges,
    private readonly opts: QuoteAnswerOptions = defaultQuoteAnswerOptions,
  ) {}

  /** The answer to `a` at `nowMs` (unix ms): byte for byte what `renderQuoteAnswer` writes then. */
  answer(a: QuoteAnswerInput, nowMs: number): QuoteAnswer {
    const keep = this.opts.maxEntries > 0 && (a.requestText === undefined || a.requestText.length * 3 <= this.opts.maxRequestBytes || Buffer.byteLength(a.requestText, 'utf8') <= this.opts.maxRequestBytes);
    if (!keep) {
      this.misses++;
      return renderQuoteAnswer(a, this.auth, this.siwx, nowMs);
    }
    // One slot per resource (the service), base URL, option choice and request; no request and
    // the empty one differ (the v2 native option says `request: null` or `""`).
    const key = `${a.only ?? '-'}\n${a.baseUrl}\n${a.quote.accepts[0]?.resource ?? ''}\n${a.requestText === undefined ? '\u0000' : `=${a.requestText}`}`;
    let e = this.entries.get(key);
    if (e && e.quote === a.quote) {
      this.hits++;
      // Least recently used out first: a hit moves to the end.
      this.entries.delete(key);
      this.entries.set(key, e);
    } else {
      this.misses++;
      if (e) this.drop(key, e);
      e = this.render(a, key);
      if (!e) return renderQuoteAnswer(a, this.auth, this.siwx, nowMs);
      if (e.bytes <= this.opts.maxBytes) {
        this.entries.set(key, e);
        this.bytes += e.bytes;
        for (const [k, old] of this.entries) {
          if (this.entries.size <= this.opts.maxEntries && this.bytes <= this.opts.maxBytes) break;
          this.drop(k, old);
        }
      }
    }
    return this.fill(e, nowMs);
  }

  /** The counters (hits, misses, entries, bytes). */
  stats(): QuoteAnswerStats {
    return { hits: this.hits, misses: this.misses, entries: this.entries.size, bytes: this.bytes };
  }

  private drop(key: string, e: Entry): void {
    this.entries.delete(key);
    this.bytes -= e.bytes;
  }

  /** The parts of an answer that hold while its quote does; undefined when they cannot be told apart from the time-bound ones. */
  private render(a: QuoteAnswerInput, key: string): Entry | undefined {
    const { accepts, offers, usdcOption } = shownOptions(a.quote, a.only);
    const body = Buffer.from(JSON.stringify(outcomeBody({ kind: 'quote', status: 402, quote: a.quote }, accepts === a.quote.accepts ? undefined : accepts)), 'utf8');
    let fixedPaymentRequired: string | undefined;
    let split: SplitBase64 | undefined;
    if (usdcOption) {
      const json = JSON.stringify(paymentRequiredV2Of(accepts, undefined, { [SIGN_IN_WITH_X]: SIGN_IN_MARK, ...offers }, a.requestText));
      const at = json.indexOf(SIGN_IN_MARK_JSON);
      // The declaration has one place in the JSON, or the header is rendered each time.
      if (at < 0 || json.indexOf(SIGN_IN_MARK_JSON, at + 1) >= 0) return undefined;
      split = new SplitBase64(Buffer.from(json.slice(0, at), 'utf8'), Buffer.from(json.slice(at + SIGN_IN_MARK_JSON.length), 'utf8'));
    } else {
      fixedPaymentRequired = Buffer.from(JSON.stringify(paymentRequiredV2Of(accepts, undefined, offers, a.requestText)), 'utf8').toString('base64');
    }
    // Beside the body, the header's pieces and the key: the challenges and one header value (about 2 kB each with both rails).
    const bytes = body.length + key.length * 3 + (split ? split.bytes : fixedPaymentRequired!.length) + 4096;
    return { quote: a.quote, bytes, varyPrefer: usdcOption !== undefined, body, accepts, signInResource: usdcOption?.resource, fixedPaymentRequired, split, realm: realmOf(a.baseUrl), prMs: -1, pr: '', challengeSecond: -1, challenges: [] };
  }

  /** The entry's answer at `nowMs`: the time-bound parts made anew when their millisecond or second passed. */
  private fill(e: Entry, nowMs: number): QuoteAnswer {
    if (e.fixedPaymentRequired !== undefined) e.pr = e.fixedPaymentRequired;
    else if (e.prMs !== nowMs) {
      e.pr = e.split!.encode(JSON.stringify(this.siwx.declaration(e.signInResource!, nowMs)));
      e.prMs = nowMs;
    }
    const second = secondOf(nowMs);
    if (e.challengeSecond !== second) {
      e.challenges = this.auth.challenges(e.accepts, e.realm, second);
      e.challengeSecond = second;
    }
    return { varyPrefer: e.varyPrefer, paymentRequired: e.pr, wwwAuthenticate: e.challenges, body: e.body };
  }
}

/** The options a 402 shows (only the USDC one when asked for and offered), their offers' extensions, and the USDC option. */
function shownOptions(quote: QuoteBody, only: UsdcOnly): { accepts: QuoteBody['accepts']; offers: Record<string, unknown> | undefined; usdcOption: PaymentRequirements | undefined } {
  const usdcOption = quote.accepts.find((x) => x.scheme === 'exact');
  const accepts = usdcOption && only ? [usdcOption] : quote.accepts;
  return { accepts, offers: narrowOfferExtension(quote.extensions, quote.accepts, accepts), usdcOption };
}

/** The headers of a 402 and the options it shows. */
export interface QuoteHeaders {
  /** The options shown: the quote's own array, or only its USDC option when asked for. */
  readonly accepts: QuoteBody['accepts'];
  readonly varyPrefer: boolean;
  readonly paymentRequired: string;
  readonly wwwAuthenticate: readonly string[];
}

/**
 * The headers of a 402 for `a` at `nowMs`: the x402 v2 `PAYMENT-REQUIRED` (with the sign-in
 * declaration and the shown options' signed offers; `error`: the code of a refused payment) and
 * the Payment challenges of the same options. Plain quotes and refused payments' 402s both.
 */
export function quoteHeaders(a: QuoteAnswerInput, error: string | undefined, auth: PaymentAuth, siwx: SiwxChallenges, nowMs: number): QuoteHeaders {
  const { accepts, offers, usdcOption } = shownOptions(a.quote, a.only);
  const signIn = usdcOption ? { [SIGN_IN_WITH_X]: siwx.declaration(usdcOption.resource, nowMs) } : undefined;
  return {
    accepts,
    varyPrefer: usdcOption !== undefined,
    paymentRequired: Buffer.from(JSON.stringify(paymentRequiredV2Of(accepts, error, { ...signIn, ...offers }, a.requestText)), 'utf8').toString('base64'),
    wwwAuthenticate: auth.challenges(accepts, realmOf(a.baseUrl), secondOf(nowMs)),
  };
}

/** The 402 answer of a plain quote rendered from scratch at `nowMs` (what `QuoteAnswers` keeps, and the reference its tests compare with). */
export function renderQuoteAnswer(a: QuoteAnswerInput, auth: PaymentAuth, siwx: SiwxChallenges, nowMs: number): QuoteAnswer {
  const { accepts, varyPrefer, paymentRequired, wwwAuthenticate } = quoteHeaders(a, undefined, auth, siwx, nowMs);
  return {
    varyPrefer,
    paymentRequired,
    wwwAuthenticate,
    body: Buffer.from(JSON.stringify(outcomeBody({ kind: 'quote', status: 402, quote: a.quote }, accepts === a.quote.accepts ? undefined : accepts)), 'utf8'),
  };
}
