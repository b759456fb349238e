/**
 * Prometheus metrics (prom-client), one registry per system. Labels are bounded: HTTP requests
 * by method, route TEMPLATE (never the raw URL) and status; outcomes by a fixed set of names.
 * Gauges that need a query (outbox depth) or a pool's state are read when Prometheus scrapes.
 */
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type Metric } from 'prom-client';
import type { AppEvents, LogInOutcome, MailDeliveryOutcome, WebhookOutcome } from './events.js';
import { RequestMetrics } from './request-metrics.js';

export interface PoolStats {
  /** open connections */
  total: number;
  /** open and not checked out */
  idle: number;
  /** callers waiting for a connection */
  waiting: number;
}

export interface MetricsSources {
  /** the PostgreSQL pool's state; absent for PGlite (one in-process session, no pool) */
  pool?: () => PoolStats;
  /** entries each log sink dropped since start (src/logging/sink-failures.ts) */
  logDrops?: () => Partial<Record<string, number>>;
}

const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class Metrics implements AppEvents {
  readonly registry = new Registry();
  private readonly requests = new RequestMetrics(DURATION_BUCKETS);
  private readonly logIns: Counter<'outcome'>;
  private readonly webhooks: Counter<'provider' | 'type' | 'outcome'>;
  private readonly mail: Counter<'outcome'>;

  constructor(sources: MetricsSources = {}) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    // the request metrics keep their own counts (request-metrics.ts): registered as prom-client reads them
    for (const metric of [
      this.requests.counter('http_requests_total', 'HTTP requests answered, by method, route template and status'),
      this.requests.histogram(
        'http_request_duration_seconds',
        'Time from the request arriving to the response finishing, by method, route template and status',
      ),
    ])
      this.registry.registerMetric(metric as unknown as Metric);
    this.logIns = new Counter({
      name: 'saas_log_ins_total',
      help: 'Log-in attempts by outcome: success, failure (wrong email or password), rate-limited',
      labelNames: ['outcome'],
      registers,
    });
    for (const outcome of ['success', 'failure', 'rate-limited'] satisfies LogInOutcome[]) this.logIns.labels(outcome).inc(0);
    this.webhooks = new Counter({
      name: 'saas_webhook_events_total',
      help: 'Payment webhook deliveries by provider, event type (unknown before the signature is verified) and outcome',
      labelNames: ['provider', 'type', 'outcome'],
      registers,
    });
    this.mail = new Counter({
      name: 'saas_mail_deliveries_total',
      help: 'Outbox delivery attempts by outcome: sent, retry (failed, tried again later), failed (given up)',
      labelNames: ['outcome'],
      registers,
    });
    for (const outcome of ['sent', 'retry', 'failed'] satisfies MailDeliveryOutcome[]) this.mail.labels(outcome).inc(0);

    const logDrops = sources.logDrops;
    if (logDrops) {
      new Counter({
        name: 'saas_log_entries_dropped_total',
        help: 'Log entries a failing sink could not take (console: its reader gone or not reading; file: a full disk, no permission), by sink',
        labelNames: ['sink'],
        registers,
        collect() {
          // the sinks keep the counts (logging knows no metrics): read as Prometheus scrapes
          this.reset();
          const dropped = logDrops();
          for (const sink of ['console', 'file']) this.labels(sink).inc(dropped[sink] ?? 0);
        },
      });
    }
    const pool = sources.pool;
    if (pool) {
      new Gauge({
        name: 'saas_db_pool_connections',
        help: 'PostgreSQL pool connections by state: idle, in-use',
        labelNames: ['state'],
        registers,
        collect() {
          const stats = pool();
          this.labels('idle').set(stats.idle);
          this.labels('in-use').set(stats.total - stats.idle);
        },
      });
      new Gauge({
        name: 'saas_db_pool_waiting',
        help: 'Queries waiting for a free PostgreSQL pool connection',
        registers,
        collect() {
          this.set(pool().waiting);
        },
      });
    }
  }

  /** One answered request; `route` is the template (`/api/account/:id`) or `not-found` (src/observability/http.ts). */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.requests.observe(method, route, status, seconds);
  }

  logIn(outcome: LogInOutcome): void {
    this.logIns.labels(outcome).inc();
  }

  webhook(provider: string, type: string, outcome: WebhookOutcome): void {
    this.webhooks.labels(provider, type, outcome).inc();
  }

  mailDelivery(outcome: MailDeliveryOutcome): void {
    this.mail.labels(outcome).inc();
  }

  /**
   * A counter of a module's own, on this registry (a module's metrics live with the module).
   * `initial` label values start at 0, so every outcome shows before it first happens.
   */
  counter<L extends string>(name: string, help: string, labelNames: readonly L[], initial: ReadonlyArray<Record<L, string>> = []): Counter<L> {
    const counter = new Counter<L>({ name, help, labelNames, registers: [this.registry] });
    for (const labels of initial) counter.inc(labels as never, 0);
    return counter;
  }

  /** A histogram of a module's own, in seconds (the request buckets unless given). */
  histogram<L extends string>(name: string, help: string, labelNames: readonly L[], buckets: readonly number[] = DURATION_BUCKETS): Histogram<L> {
    return new Histogram<L>({ name, help, labelNames, buckets: [...buckets], registers: [this.registry] });
  }

  /**
   * A gauge read at scrape time, e.g. from the database; every worker of a cluster reads the
   * same table, so the aggregate is one reading (`max`), not their sum.
   */
  gauge(name: string, help: string, read: () => Promise<number>): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      aggregator: 'max',
      async collect() {
        this.set(await read());
      },
    });
  }

  /**
   * In a cluster worker: answer the primary's requests for this registry, so it serves every
   * worker's metrics aggregated on METRICS_PORT (src/cluster.ts).
   */
  shareWithClusterPrimary(): void {
    // the constructor installs prom-client's worker-side message listener
    new AggregatorRegistry();
    AggregatorRegistry.setRegistries([this.registry]);
  }

  /** The scrape body, Prometheus text format. */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
