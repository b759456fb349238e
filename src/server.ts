/**
 * Entry point: read config (and `.env` in dev), build the system, listen, stop on signals.
 * With WEB_CONCURRENCY > 1 this process becomes the cluster's primary (`cluster.ts`).
 */
import cluster from 'node:cluster';
import { existsSync } from 'node:fs';
import { clusterProblem, runPrimary } from './cluster.js';
import { loadConfig, ConfigError } from './config.js';
import { buildSystem } from './system.js';

if ((process.env.APP_ENV ?? 'dev') === 'dev' && existsSync('.env')) {
  const dotenv = await import('dotenv');
  dotenv.config({ quiet: true });
}

let config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
  throw err;
}

const problem = clusterProblem(config);
if (problem) {
  process.stderr.write(`Invalid configuration: ${problem}\n`);
  process.exit(1);
}
if (config.webConcurrency > 1 && cluster.isPrimary) {
  await runPrimary(config).then(() => process.exit(0), (err: Error) => {
    process.stderr.write(`Cluster failed: ${err.message}\n`);
    process.exit(1);
  });
}

const system = await buildSystem(config, { clusterWorker: cluster.isWorker }).catch((err: Error) => {
  process.stderr.write(`Start-up failed: ${err.message}\n`);
  process.exit(1);
});
await system.listen();

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    system.stop().then(
      () => process.exit(0),
      (err: Error) => {
        process.stderr.write(`Shutdown failed: ${err.message}\n`);
        process.exit(1);
      },
    );
  });
}
