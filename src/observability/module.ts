/**
 * Observability's module: the Prometheus `/metrics` listener on METRICS_PORT, apart from the
 * public port (not in a cluster worker: the primary serves every worker's metrics). Metrics and
 * traces themselves are infrastructure (runtime/infrastructure.ts): the database and the HTTP
 * app use them before any module starts. Base layer: it knows no feature.
 */
import { defineModule } from '../runtime/module.js';

export interface ObservabilityServices {
  /** `http://host:port` of the `/metrics` listener, when it runs */
  metricsUrl: string | undefined;
}

export const observabilityModule = defineModule<ObservabilityServices>({
  name: 'observability',
  async start(ctx) {
    const { config, metrics } = ctx;
    if (!metrics || !config.metrics || ctx.clusterWorker) return { services: { metricsUrl: undefined } };
    const { startMetricsServer } = await import('./metrics-server.js');
    const log = ctx.logs.logger('saas.metrics');
    const server = await startMetricsServer(
      config.metrics.host,
      config.metrics.port,
      {
        contentType: metrics.contentType,
        body: () => metrics.scrape(),
      },
      (err) => log.error('metrics/scrape-failed', `Collecting the metrics failed: ${err.message}`),
    );
    log.info('metrics/listening', `Metrics on ${server.url}/metrics`, { address: server.url });
    return { services: { metricsUrl: server.url }, stop: () => server.close() };
  },
});
