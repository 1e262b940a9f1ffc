/** Types of `parse-prometheus-text-format` 1.1 (the package ships none): prom2json-shaped families. */
declare module 'parse-prometheus-text-format' {
  /** One sample of a counter or gauge (`value` as text), or of a histogram/summary (`buckets`/`quantiles`, `count`, `sum`). */
  export interface PrometheusSample {
    readonly labels?: Record<string, string>;
    readonly value?: string;
    readonly buckets?: Record<string, string>;
    readonly quantiles?: Record<string, string>;
    readonly count?: string;
    readonly sum?: string;
  }
  /** One metric family. */
  export interface PrometheusFamily {
    readonly name: string;
    readonly help: string;
    readonly type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    readonly metrics: readonly PrometheusSample[];
  }
  /** Parses the Prometheus text exposition format; throws on malformed input. */
  export default function parsePrometheusTextFormat(text: string): PrometheusFamily[];
}
