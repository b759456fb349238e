/**
 * `http_requests_total` and `http_request_duration_seconds`, counted per request on the hot path.
 *
 * Why not prom-client's Counter and Histogram: their `labels(...)` children re-validate and
 * re-hash the label object on every `inc` and `observe` (about 2 µs per request for the pair,
 * measured), which is a visible share of a cheap request. Here a request costs three Map
 * lookups (route, method, status: strings the router and the HTTP parser hand over are the
 * same objects every time, so nothing is built or hashed anew), a bucket search over 13 bounds
 * and three additions; the label objects are built once per series. At scrape time the two metrics hand prom-client's registry the same
 * values a Counter and a Histogram would (`get()` in prom-client's shape), so the text format,
 * the cluster aggregation (summed over workers) and the other metrics stay prom-client's.
 */
type RequestLabel = 'method' | 'route' | 'status';
type Labels = Record<RequestLabel, string>;

interface Series {
  labels: Labels;
  count: number;
  sum: number;
  /** observations per bucket, not cumulative; the last slot is above the highest bound */
  buckets: Float64Array;
}

interface CollectedValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/**
 * The part of prom-client's metric interface its Registry and AggregatorRegistry use at run
 * time (`get`, `reset`; `type` is the exposition's string, as prom-client's own metrics have it).
 */
export interface CollectedMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  get(): Promise<{ name: string; help: string; type: 'counter' | 'histogram'; aggregator: 'sum'; values: CollectedValue[] }>;
  reset(): void;
}

export class RequestMetrics {
  /** route -> method -> status -> series */
  private readonly byRoute = new Map<string, Map<string, Map<number, Series>>>();
  private readonly series: Series[] = [];

  constructor(private readonly bounds: readonly number[]) {}

  observe(method: string, route: string, status: number, seconds: number): void {
    let byMethod = this.byRoute.get(route);
    if (!byMethod) this.byRoute.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (!series) {
      series = { labels: { method, route, status: String(status) }, count: 0, sum: 0, buckets: new Float64Array(this.bounds.length + 1) };
      byStatus.set(status, series);
      this.series.push(series);
    }
    series.count++;
    series.sum += seconds;
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && seconds > bounds[i]) i++;
    series.buckets[i]++;
  }

  /** The request counter, as prom-client's registry reads it. */
  counter(name: string, help: string): CollectedMetric {
    return {
      name,
      help,
      type: 'counter',
      aggregator: 'sum',
      get: async () => ({
        name,
        help,
        type: 'counter',
        aggregator: 'sum',
        values: this.series.map((s) => ({ labels: { ...s.labels }, value: s.count })),
      }),
      reset: () => this.reset(),
    };
  }

  /** The duration histogram, as prom-client's registry reads it: cumulative `le` buckets, `_sum` and `_count`. */
  histogram(name: string, help: string): CollectedMetric {
    return {
      name,
      help,
      type: 'histogram',
      aggregator: 'sum',
      get: async () => {
        const values: CollectedValue[] = [];
        for (const s of this.series) {
          let cumulative = 0;
          this.bounds.forEach((bound, i) => {
            cumulative += s.buckets[i];
            values.push({ labels: { le: bound, ...s.labels }, value: cumulative, metricName: `${name}_bucket` });
          });
          values.push({ labels: { le: '+Inf', ...s.labels }, value: s.count, metricName: `${name}_bucket` });
          values.push({ labels: { ...s.labels }, value: s.sum, metricName: `${name}_sum` });
          values.push({ labels: { ...s.labels }, value: s.count, metricName: `${name}_count` });
        }
        return { name, help, type: 'histogram', aggregator: 'sum', values };
      },
      reset: () => this.reset(),
    };
  }

  private reset(): void {
    this.byRoute.clear();
    this.series.length = 0;
  }
}
