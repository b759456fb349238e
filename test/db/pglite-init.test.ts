/** A new PGlite directory is created by a child process, so initdb's memory never stays with the server. */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openPgliteDirectory, PGLITE_SETTINGS } from '../../src/db/database.js';
import { initializePgliteDirectory, needsInitdb } from '../../src/db/pglite-init.js';

describe('creating a PGlite directory', () => {
  it('runs initdb in a child process: the directory is ready and this process did not grow by initdb', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pglite-init-'));
    try {
      assert.equal(needsInitdb(dir), true);
      const before = process.memoryUsage().rss;
      await initializePgliteDirectory(dir, PGLITE_SETTINGS);
      // initdb in this process adds ~300 MB of resident WebAssembly memory (measured); in a
      // child it adds nothing here
      const grown = (process.memoryUsage().rss - before) / 1048576;
      assert.ok(grown < 100, `this process grew by ${grown.toFixed(0)} MB`);
      assert.equal(needsInitdb(dir), false);

      const { pglite, lock } = await openPgliteDirectory(dir);
      try {
        const { rows } = await pglite.query<{ shared_buffers: string }>('show shared_buffers');
        assert.equal(rows[0].shared_buffers, '16MB');
      } finally {
        await pglite.close();
        await lock.release();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('names the directory when initdb cannot run there', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'pglite-init-'));
    const file = join(parent, 'not-a-directory');
    await writeFile(file, 'x');
    try {
      await assert.rejects(initializePgliteDirectory(file, PGLITE_SETTINGS), (err: Error) => err.message.includes(file));
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });
});
