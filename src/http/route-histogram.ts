/**
 * The request-latency histogram of `/metrics`, as a prom-client metric of our own: prom-client's
 * `Histogram.observe` validates and hashes its label object on every call (~2 % of a small request);
 * here each (method, route, status class) series is looked up by one string key and an observation
 * is a bucket search and three additions. The exposition is the same as prom-client's histogram
 * (`_bucket` with cumulative counts per `le`, `+Inf`, `_sum`, `_count`), rendered by the registry.
 */
import type { Registry } from 'prom-client';

interface Series {
  labels: Record<string, string>;
  /** Count per bucket (not cumulative); the last entry is `+Inf`. */
  counts: number[];
  sum: number;
  count: number;
}

interface MetricValue {
  metricName: string;
  labels: Record<string, string | number>;
  value: number;
}

export class RouteHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly buckets: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** Records `seconds` for the series `key`, whose labels are made by `labels()` the first time. */
  observe(key: string, labels: () => Record<string, string>, seconds: number): void {
    let s = this.series.get(key);
    if (!s) this.series.set(key, (s = { labels: labels(), counts: new Array<number>(this.buckets.length + 1).fill(0), sum: 0, count: 0 }));
    let i = 0;
    while (i < this.buckets.length && seconds > this.buckets[i]!) i++;
    s.counts[i]!++;
    s.sum += seconds;
    s.count++;
  }

  /** prom-client's metric interface: the values the registry renders. */
  get(): { name: string; help: string; type: string; aggregator: string; values: MetricValue[] } {
    const values: MetricValue[] = [];
    for (const s of this.series.values()) {
      let cumulative = 0;
      this.buckets.forEach((le, i) => {
        cumulative += s.counts[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { le, ...s.labels }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { le: '+Inf', ...s.labels }, value: s.count });
      values.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.series.clear();
  }
}
