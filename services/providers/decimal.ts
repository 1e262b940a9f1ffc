/** Exact decimal arithmetic over bigint for money and rates: a value is `units / 10^scale`. */

/** A non-negative decimal: `units / 10^scale`. */
export interface Decimal {
  readonly units: bigint;
  readonly scale: number;
}

/** Parses a plain decimal string (`123`, `0.5`, `1.0812`); undefined for anything else (signs, exponents, empty). */
export function parseDecimal(text: string): Decimal | undefined {
  const m = /^(\d{1,30})(?:\.(\d{1,30}))?$/.exec(text);
  if (!m) return undefined;
  const frac = m[2] ?? '';
  return { units: BigInt(m[1] + frac), scale: frac.length };
}

/** `a × b / c` rounded half-up to `places` decimals, as a plain decimal string without trailing zeros. Throws on c = 0. */
export function mulDiv(a: Decimal, b: Decimal, c: Decimal, places: number): string {
  if (c.units === 0n) throw new RangeError('division by zero');
  // value = (a.u·b.u / c.u) · 10^(c.s − a.s − b.s); scaled by 10^places before the integer division.
  const exp = c.scale - a.scale - b.scale + places;
  let num = a.units * b.units;
  let den = c.units;
  if (exp >= 0) num *= 10n ** BigInt(exp);
  else den *= 10n ** BigInt(-exp);
  const q = (2n * num + den) / (2n * den);
  return formatUnits(q, places);
}

/** `units / 10^places` as a plain decimal string without trailing zeros. */
export function formatUnits(units: bigint, places: number): string {
  const s = units.toString().padStart(places + 1, '0');
  const int = s.slice(0, s.length - places);
  const frac = s.slice(s.length - places).replace(/0+$/, '');
  return frac ? `${int}.${frac}` : int;
}

/** One, as a Decimal. */
export const ONE: Decimal = Object.freeze({ units: 1n, scale: 0 });
