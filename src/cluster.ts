/**
 * Several worker processes on one port (`WEB_CONCURRENCY=N`, node:cluster). The primary
 * migrates the database once, forks the workers, owns the JSON log file (workers send it
 * their lines), keeps the log-in counters when there is no Redis, restarts a worker that dies,
 * and on SIGTERM stops the workers gracefully before it exits. Workers share PostgreSQL, so
 * the embedded PGlite database (which one process owns) is refused.
 */
import cluster, { type Worker } from 'node:cluster';
import { RateLimiterClusterMaster } from 'rate-limiter-flexible';
import type { Config, MetricsSettings } from './config.js';
import { openDatabase } from './db/database.js';
import { RotatingFileHandler } from './logging/file-handler.js';
import { createLogging } from './logging/index.js';
import type { Logger } from './logging/logger.js';
import { isLogMessage } from './logging/primary-file-handler.js';
import type { MetricsServer } from './observability/metrics-server.js';

/**
 * METRICS_PORT in a cluster: the primary listens and answers each scrape with every worker's
 * registry, aggregated by prom-client (counters and histograms summed; the outbox depth, which
 * every worker reads from the same table, by maximum). Workers do not listen themselves.
 */
async function serveClusterMetrics(settings: MetricsSettings, log: Logger): Promise<MetricsServer> {
  const { AggregatorRegistry } = await import('prom-client');
  const { startMetricsServer } = await import('./observability/metrics-server.js');
  const aggregator = new AggregatorRegistry();
  const server = await startMetricsServer(
    settings.host,
    settings.port,
    {
      contentType: aggregator.contentType,
      body: () => aggregator.clusterMetrics(),
    },
    (err) => log.error('metrics/scrape-failed', `Collecting the workers' metrics failed: ${err.message}`),
  );
  log.info('metrics/listening', `Metrics of all workers on ${server.url}/metrics`, { address: server.url });
  return server;
}

export function clusterProblem(config: Config): string | undefined {
  if (config.webConcurrency <= 1) return undefined;
  if (!config.databaseUrl?.startsWith('postgres')) {
    return 'WEB_CONCURRENCY > 1 needs PostgreSQL (DATABASE_URL=postgres://...): the embedded PGlite database belongs to one process';
  }
  return undefined;
}

/** Runs the primary: migrate, fork, supervise, stop. Resolves when everything has stopped. */
export async function runPrimary(config: Config): Promise<void> {
  const { backend } = createLogging({ ...config, logFile: undefined });
  const log = backend.logger('saas.cluster');
  const file = config.logFile ? new RotatingFileHandler(config.logFile) : undefined;
  if (file) backend.addHandler(file);

  // once, before the workers: they then find nothing to migrate
  const database = await openDatabase(config, backend);
  await database.close();
  if (!config.redisUrl) new RateLimiterClusterMaster();

  // every worker must sign and check with the same keys
  const env: Record<string, string> = { SAAS_CLUSTER_WORKER: '1', JWT_SECRET: config.jwtSecret, SESSION_SECRET: config.sessionSecret };
  let stopping = false;
  const fork = (index: number): Worker => {
    const worker = cluster.fork({ ...env, WORKER_INDEX: String(index) });
    worker.on('message', (msg: unknown) => {
      if (isLogMessage(msg)) file?.writeLine(msg.line);
    });
    worker.on('exit', (code, signal) => {
      if (stopping) return;
      log.error('cluster/worker-died', `Worker ${index} exited (${signal ?? code}); starting another`, { worker: index, 'exit-status': code, signal });
      setTimeout(() => {
        if (!stopping) fork(index);
      }, 1000);
    });
    return worker;
  };
  // before the workers: a metrics port already taken stops start-up with nothing left running
  const metricsServer = config.metrics ? await serveClusterMetrics(config.metrics, log) : undefined;
  for (let i = 0; i < config.webConcurrency; i++) fork(i);
  log.info('cluster/started', `Started ${config.webConcurrency} workers`, { workers: config.webConcurrency });

  await new Promise<void>((resolve) => {
    const stop = () => {
      if (stopping) return;
      stopping = true;
      log.info('cluster/stopping', 'Stopping the workers');
      const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => Boolean(w));
      let left = workers.length;
      if (left === 0) resolve();
      const deadline = setTimeout(() => {
        for (const w of workers) w.process.kill('SIGKILL');
      }, config.shutdownTimeoutMs + 2000);
      for (const w of workers) {
        w.once('exit', () => {
          if (--left === 0) {
            clearTimeout(deadline);
            resolve();
          }
        });
        w.process.kill('SIGTERM');
      }
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
  await metricsServer?.close();
  log.info('cluster/stopped', 'All workers stopped');
  await backend.close();
}
