/**
 * The percentile the benchmarks report: the sample at index ⌊p/100 · n⌋ of the sorted samples
 * (the upper of two middle samples for the median; for p99 of 200 samples, the 199th), NaN when
 * there are none. One definition for every bench, so their p50/p99 columns compare.
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
