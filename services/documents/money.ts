/**
 * Document arithmetic in integer minor units (cents), exact: quantities and prices arrive as JSON
 * numbers, are read as the decimals they print as, and are multiplied as BigInts.
 *
 * Rounding (stated in the agents' guide): each line total is rounded to the currency's minor unit,
 * half away from zero; net is the sum of the rounded lines; VAT is computed once on the net
 * (per document, not per line) and rounded the same way; gross = net + VAT.
 */

/** One item of a document, as validated by its schema. */
export interface DocumentItem {
  readonly description: string;
  readonly qty: number;
  readonly unitPrice: number;
}

/** A priced line, minor units. */
export interface PricedLine extends DocumentItem {
  readonly unitMinor: bigint;
  readonly totalMinor: bigint;
}

/** Totals of a document in minor units, plus the currency's number of decimals. */
export interface DocumentTotals {
  readonly lines: readonly PricedLine[];
  readonly netMinor: bigint;
  readonly vatMinor: bigint;
  readonly grossMinor: bigint;
  readonly currency: string;
  readonly digits: number;
}

/** `n` as an exact scaled integer: 19.99 → {int: 1999n, scale: 2}; 1e-7 → {int: 1n, scale: 7}. */
export function toScaled(n: number): { int: bigint; scale: number } {
  if (!Number.isFinite(n)) throw new RangeError(`not a finite number: ${n}`);
  const [mant, expText] = String(n).toLowerCase().split('e');
  const exp = expText === undefined ? 0 : Number(expText);
  const neg = mant.startsWith('-');
  const [whole, frac = ''] = (neg ? mant.slice(1) : mant).split('.');
  let int = BigInt(whole + frac);
  let scale = frac.length - exp;
  if (scale < 0) {
    int *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { int: neg ? -int : int, scale };
}

/** `num / den` rounded half away from zero (den > 0). */
export function divRound(num: bigint, den: bigint): bigint {
  const neg = num < 0n;
  const a = neg ? -num : num;
  const q = (a * 2n + den) / (2n * den);
  return neg ? -q : q;
}

/** Decimals of a currency's minor unit from ICU (EUR 2, JPY 0, BHD 3); 2 when ICU does not know it. */
export function currencyDigits(currency: string): number {
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    return 2;
  }
}

/** `x` major units expressed in minor units (rounded half away from zero). */
function toMinor(x: number, digits: number): bigint {
  const s = toScaled(x);
  return divRound(s.int * 10n ** BigInt(digits), 10n ** BigInt(s.scale));
}

/** Line totals, net, VAT at `vatRate` percent and gross, in minor units (see module comment for rounding). */
export function computeTotals(items: readonly DocumentItem[], vatRate: number, currency: string): DocumentTotals {
  const digits = currencyDigits(currency);
  const unitScale = 10n ** BigInt(digits);
  let netMinor = 0n;
  const lines = items.map((it) => {
    const q = toScaled(it.qty);
    const p = toScaled(it.unitPrice);
    // qty × unitPrice × 10^digits, exactly, then one rounding.
    const totalMinor = divRound(q.int * p.int * unitScale, 10n ** BigInt(q.scale + p.scale));
    netMinor += totalMinor;
    return { ...it, unitMinor: toMinor(it.unitPrice, digits), totalMinor };
  });
  const r = toScaled(vatRate);
  const vatMinor = divRound(netMinor * r.int, 100n * 10n ** BigInt(r.scale));
  return { lines, netMinor, vatMinor, grossMinor: netMinor + vatMinor, currency, digits };
}

/** Minor units as a decimal string with the currency's decimals: 123456n, 2 → "1234.56"; -5n → "-0.05". */
export function formatMinor(minor: bigint, digits: number): string {
  const neg = minor < 0n;
  const s = (neg ? -minor : minor).toString().padStart(digits + 1, '0');
  const body = digits === 0 ? s : `${s.slice(0, -digits)}.${s.slice(-digits)}`;
  return neg ? `-${body}` : body;
}

/** A major-unit number for display with thousands separators: "1,234.56". */
export function displayMinor(minor: bigint, digits: number): string {
  const plain = formatMinor(minor, digits);
  const [whole, frac] = plain.replace('-', '').split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${minor < 0n ? '-' : ''}${grouped}${frac === undefined ? '' : `.${frac}`}`;
}

/**
 * `n` as the exact decimal it was given, with at least the currency's `digits` decimals and
 * thousands separators: 33.335, 2 → "33.335"; 5, 2 → "5.00". Unit prices print this way, so
 * that qty × unit price on paper gives the line total after the stated rounding (33.335 printed
 * as 33.34 beside a total of 50.00 for 1.5 units did not add up).
 */
export function displayExact(n: number, digits: number): string {
  const s = toScaled(n);
  const scale = Math.max(s.scale, digits);
  const int = s.int * 10n ** BigInt(scale - s.scale);
  return displayMinor(int, scale);
}
