/**
 * The observability component: Prometheus metrics (METRICS_PORT) and OpenTelemetry traces
 * (OTEL_EXPORTER_OTLP_ENDPOINT). Each is loaded only when it is on: with both off, neither
 * prom-client nor OpenTelemetry is imported, and a request pays one boolean check.
 * See docs/observability.md.
 */
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { AppObservability } from '../http/app.js';
import type { ResponseObserver } from './http.js';
import type { Metrics } from './metrics.js';
import type { Tracing } from './tracing.js';

export type { Metrics } from './metrics.js';
export type { Tracing } from './tracing.js';

/** Starts tracing when OTEL_EXPORTER_OTLP_ENDPOINT is set; undefined otherwise. */
export async function startTracing(config: Config): Promise<Tracing | undefined> {
  if (!config.tracing) return undefined;
  const { Tracing } = await import('./tracing.js');
  const tracing = new Tracing(config.tracing, { version: config.version });
  tracing.start();
  return tracing;
}

/** Metrics when METRICS_PORT is set; undefined otherwise. */
export async function createMetrics(config: Config, database: Database, logDrops?: () => Partial<Record<string, number>>): Promise<Metrics | undefined> {
  if (!config.metrics) return undefined;
  const { Metrics } = await import('./metrics.js');
  return new Metrics({ pool: database.poolStats, logDrops });
}

/** What the HTTP app needs of metrics and tracing; undefined when both are off. */
export function appObservability(metrics: Metrics | undefined, tracing: Tracing | undefined): AppObservability | undefined {
  if (!metrics && !tracing) return undefined;
  const observeResponse: ResponseObserver =
    metrics && tracing
      ? (req, method, route, status, seconds) => {
          tracing.setRoute(req, route);
          metrics.observeRequest(method, route, status, seconds);
        }
      : metrics
        ? (_req, method, route, status, seconds) => metrics.observeRequest(method, route, status, seconds)
        : (req, _method, route) => tracing!.setRoute(req, route);
  return { observeResponse, aroundRequest: tracing?.wrapRequest };
}
