/**
 * The request metrics keep their own counts (src/observability/request-metrics.ts) but must
 * read exactly as prom-client's Counter and Histogram would: the same exposition text for the
 * same observations, and the same aggregate over cluster workers.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AggregatorRegistry, Counter, Histogram, Registry, type Metric } from 'prom-client';
import { RequestMetrics } from '../../src/observability/request-metrics.js';

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const NAMES = { count: 'http_requests_total', duration: 'http_request_duration_seconds' };
const HELP = { count: 'requests', duration: 'durations' };

type Observation = [method: string, route: string, status: number, seconds: number];

/** Observations on every bucket's bound, between bounds, above the last and at 0, over several series. */
function observations(seed: number): Observation[] {
  const routes = ['/api/health', '/api/account/:id', 'not-found'];
  const values = [0, ...BUCKETS, ...BUCKETS.map((b) => b * 0.7), 10.5, 123];
  const out: Observation[] = [];
  for (let i = 0; i < 400; i++) {
    const v = values[(i * 7 + seed) % values.length];
    out.push([i % 5 === 0 ? 'POST' : 'GET', routes[(i + seed) % routes.length], i % 11 === 0 ? 404 : 200, v]);
  }
  return out;
}

function withPromClient(list: Observation[]): Registry {
  const registry = new Registry();
  const labelNames = ['method', 'route', 'status'] as const;
  const counter = new Counter({ name: NAMES.count, help: HELP.count, labelNames, registers: [registry] });
  const histogram = new Histogram({ name: NAMES.duration, help: HELP.duration, labelNames, buckets: BUCKETS, registers: [registry] });
  for (const [method, route, status, seconds] of list) {
    counter.labels(method, route, String(status)).inc();
    histogram.labels(method, route, String(status)).observe(seconds);
  }
  return registry;
}

function withRequestMetrics(list: Observation[]): Registry {
  const registry = new Registry();
  const metrics = new RequestMetrics(BUCKETS);
  registry.registerMetric(metrics.counter(NAMES.count, HELP.count) as unknown as Metric);
  registry.registerMetric(metrics.histogram(NAMES.duration, HELP.duration) as unknown as Metric);
  for (const [method, route, status, seconds] of list) metrics.observe(method, route, status, seconds);
  return registry;
}

/** the exposition's lines, in a stable order (series order is insertion order in both, but need not be) */
const lines = async (registry: { metrics(): Promise<string> }) => (await registry.metrics()).split('\n').filter(Boolean).sort();

describe('request metrics', () => {
  it("expose the same text as prom-client's Counter and Histogram for the same observations", async () => {
    const list = observations(3);
    assert.deepEqual(await lines(withRequestMetrics(list)), await lines(withPromClient(list)));
  });

  it("aggregate over cluster workers as prom-client's own metrics do", async () => {
    const workers = [observations(1), observations(2)];
    const ours = AggregatorRegistry.aggregate(await Promise.all(workers.map((w) => withRequestMetrics(w).getMetricsAsJSON())));
    const theirs = AggregatorRegistry.aggregate(await Promise.all(workers.map((w) => withPromClient(w).getMetricsAsJSON())));
    assert.deepEqual(await lines(ours), await lines(theirs));
  });

  it('start empty and forget everything on reset', async () => {
    const registry = withRequestMetrics(observations(4));
    registry.resetMetrics();
    assert.deepEqual(await lines(registry), await lines(withPromClient([])));
  });
});
