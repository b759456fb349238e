/**
 * `npm run dev`: runs the server and restarts it when a file under src/ changes. The watcher
 * logs through the application's backend as the third-party `watcher` namespace, so its
 * output obeys the same filters (dev shows its warnings; `LOG_LEVELS=watcher=info` shows restarts).
 */
import '../src/runtime/node-version.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, realpathSync, watch } from 'node:fs';
import { loadConfig } from '../src/config.js';
import { DirectoryLockedError, lockHolder } from '../src/db/lock.js';
import { createLogging } from '../src/logging/index.js';

if (existsSync('.env')) (await import('dotenv')).config({ quiet: true });
const config = loadConfig();
const { backend } = createLogging(config);
const log = backend.logger('watcher', 'slf4j');

// the server takes the PGlite directory's lock itself; checking here as well makes a second
// `npm run dev` stop at once instead of watching for changes with no server
if (!config.databaseUrl && existsSync(config.pgliteDir)) {
  const holder = await lockHolder(config.pgliteDir);
  if (holder) {
    process.stderr.write(`${new DirectoryLockedError(realpathSync(config.pgliteDir), holder).message}\n`);
    await backend.close();
    process.exit(1);
  }
}

let child: ChildProcess | undefined;
let restartTimer: NodeJS.Timeout | undefined;

function start(): void {
  child = spawn(process.execPath, ['--liftoff-only', '--import', 'tsx', 'src/server.ts'], { stdio: 'inherit', env: process.env });
  child.on('exit', (code, signal) => {
    if (signal !== 'SIGTERM' && code !== 0) log.warn('watcher/server-exited', `The server exited with ${signal ?? code}; waiting for a change`);
  });
}

function restart(file: string): void {
  clearTimeout(restartTimer);
  restartTimer = setTimeout(() => {
    log.info('watcher/restart', `Restarting after a change to ${file}`, { file });
    const old = child;
    if (old && old.exitCode === null) {
      old.once('exit', start);
      old.kill('SIGTERM');
    } else {
      start();
    }
  }, 150);
}

watch('src', { recursive: true }, (_event, file) => {
  if (file && !file.startsWith('client/')) restart(String(file));
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    child?.kill('SIGTERM');
    child?.once('exit', () => process.exit(0));
    if (!child || child.exitCode !== null) process.exit(0);
  });
}
start();
