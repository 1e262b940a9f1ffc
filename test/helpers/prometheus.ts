/**
 * Reading a node's `GET /metrics` in tests: scraped and parsed with a Prometheus text-format
 * parser (`parse-prometheus-text-format`, which throws on malformed text), and summed by labels.
 */
import { expect } from '@jest/globals';
import parsePrometheusTextFormat, { type PrometheusFamily } from 'parse-prometheus-text-format';

/** One scrape: the parsed families by name and the raw text (histogram series are read from it: the parser merges their label sets). */
export interface Scrape {
  readonly families: Map<string, PrometheusFamily>;
  readonly text: string;
}

/** Scrapes `url` (the `/metrics` address) and parses it. */
export async function scrapeMetrics(url: string): Promise<Scrape> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  return { families: new Map(parsePrometheusTextFormat(text).map((f) => [f.name, f])), text };
}

/** Sum of the samples of `name` whose labels include `labels`. */
export function metricSample(families: Map<string, PrometheusFamily>, name: string, labels: Record<string, string> = {}): number {
  const f = families.get(name);
  if (!f) return 0;
  return f.metrics.filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v)).reduce((s, m) => s + Number(m.value ?? m.count ?? 0), 0);
}

/** One series of the histogram `name` (`suffix` `count`, `sum` or `bucket`), its labels written as in the exposition (`rail="native",outcome="settled"`). */
export function histogramSeries(text: string, name: string, suffix: 'count' | 'sum' | 'bucket', labels: string): number {
  const escaped = labels.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return Number(new RegExp(`^${name}_${suffix}\\{${escaped}\\} (\\S+)$`, 'm').exec(text)?.[1]);
}
