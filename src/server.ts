/**
 * Entry point: read config (and `.env` in dev), build the system, listen, stop on signals.
 * With WEB_CONCURRENCY > 1 this process becomes the cluster's primary (`cluster.ts`).
 */
import './runtime/node-version.js';
import cluster from 'node:cluster';
import { existsSync } from 'node:fs';
import { clusterProblem, runPrimary } from './cluster.js';
import { loadConfig, ConfigError } from './config.js';
import { missingStartFlags } from './runtime/node-flags.js';
import { buildSystem, checkSettings } from './system.js';

if ((process.env.APP_ENV ?? 'dev') === 'dev' && existsSync('.env')) {
  const dotenv = await import('dotenv');
  dotenv.config({ quiet: true });
}

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig();
  // every module's own settings too: a bad one stops start-up here, before anything opens
  checkSettings(config);
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
  await runPrimary(config).then(
    () => process.exit(0),
    (err: Error) => {
      process.stderr.write(`Cluster failed: ${err.message}\n`);
      process.exit(1);
    },
  );
}

const system = await buildSystem(config, { clusterWorker: cluster.isWorker }).catch((err: Error) => {
  process.stderr.write(`Start-up failed: ${err.message}\n`);
  process.exit(1);
});
await system.listen().catch(async (err: NodeJS.ErrnoException & { port?: number; address?: string }) => {
  // a busy port is a configuration problem like the others: one line saying what to do, no stack
  const message =
    err.code === 'EADDRINUSE'
      ? `port ${err.port ?? config.port} on ${err.address ?? config.host} is already in use by another process: stop that process, or set PORT ` +
        `(or METRICS_PORT for the metrics listener) to a free port`
      : err.code === 'EACCES'
        ? `port ${err.port ?? config.port} on ${err.address ?? config.host} needs privileges this process does not have: use a port above 1023`
        : err.message;
  process.stderr.write(`Start-up failed: ${message}\n`);
  await system.stop().catch(() => undefined);
  process.exit(1);
});

const systemLog = system.logs.logger('saas.system');
const missingFlags = config.env === 'prod' ? missingStartFlags(process.execArgv) : [];
if (missingFlags.length > 0) {
  systemLog.warn(
    'system/node-flags',
    `Started without npm start's node flags ${missingFlags.join(' ')}: under load the server may spend up to twice the CPU per request (docs/deployment.md)`,
    { missing: missingFlags },
  );
}

// a bug that escapes every handler is logged through the one backend, flushed, and ends the
// process (its state is unknown); the supervisor (or the cluster's primary) starts a new one
const die = (id: string, err: unknown) => {
  const e = err instanceof Error ? err : new Error(String(err));
  systemLog.fatal(id, `${e.constructor?.name ?? 'Error'}: ${e.message}`, { class: e.constructor?.name, stack: e.stack });
  void system.logs.flush().finally(() => process.exit(1));
};
process.on('uncaughtException', (err) => die('system/uncaught-exception', err));
process.on('unhandledRejection', (reason) => die('system/unhandled-rejection', reason));

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
