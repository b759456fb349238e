/** `npm run migrate`: applies pending migrations to the configured database and exits. */
import '../runtime/node-version.js';
import { loadConfig } from '../config.js';
import { createLogging } from '../logging/index.js';
import { openDatabase } from './database.js';

const config = loadConfig();
const { backend } = createLogging({ ...config, logConsole: config.logConsole === 'off' ? 'pretty' : config.logConsole });
try {
  // opening the database runs the migrations, under the migration lock
  const database = await openDatabase(config, backend);
  await database.close();
} catch (err) {
  backend.logger('saas.db').error('db/migrate-failed', (err as Error).message);
  process.exitCode = 1;
} finally {
  await backend.close();
}
