/**
 * `npm run keys:rotate`: adds a new signing key of each algorithm (signing-key-rotation.ts),
 * with the server's environment. Every instance publishes it within seconds (NOTIFY); it signs
 * 5 minutes later (or one access-token lifetime, when shorter). On a PGlite directory a running
 * server holds, the server rotates (through the directory's lock socket, as `db:dump` does).
 */
import '../runtime/node-version.js';
import { commandConfig, runCommand } from '../db/cli.js';
import { openDatabase } from '../db/database.js';
import { DirectoryLockedError, requestCommand } from '../db/lock.js';
import { createLogging } from '../logging/index.js';
import { activationDelay, authModule, ROTATE_KEYS_COMMAND, signingKeyBox } from './module.js';
import { rotateSigningKeys } from './signing-key-rotation.js';

await runCommand('keys:rotate', async () => {
  if (process.argv.length > 2) throw new Error('usage: npm run keys:rotate');
  const config = await commandConfig();
  if (config.databaseUrl === 'memory://') throw new Error('DATABASE_URL=memory:// is an in-memory database: its keys live and die with its process');
  const { accessTokenTtl } = authModule.settings!(config.vars, config);
  const { backend } = createLogging({ ...config, logConsole: 'off', logFile: undefined });
  try {
    let database: Awaited<ReturnType<typeof openDatabase>>;
    try {
      database = await openDatabase(config, backend);
    } catch (err) {
      if (err instanceof DirectoryLockedError) return await requestCommand(config.pgliteDir, ROTATE_KEYS_COMMAND);
      throw err;
    }
    try {
      const kids = await rotateSigningKeys(database.db, signingKeyBox(config.encryptionKey), activationDelay(accessTokenTtl));
      return `New signing keys ${kids.join(', ')}: published now, signing in ${activationDelay(accessTokenTtl)} s`;
    } finally {
      await database.close();
    }
  } finally {
    await backend.close();
  }
});
