/**
 * `npm start`'s node flags are what the server's costs were measured with; a production server
 * started without them (`node dist/server.js` in an image of one's own) says once which are
 * missing, and one started with them says nothing.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { missingStartFlags, startFlags } from '../../src/runtime/node-flags.js';
import { PROD_CHILD_ENV } from '../support/child-server.js';

interface Entry {
  id: string;
  level: string;
  data: { missing?: string[] };
}

/** The server in prod configuration with `flags`: its console entries until a moment after it listens, then SIGTERM. */
async function entriesOfStart(flags: string[]): Promise<{ entries: Entry[]; code: number | null }> {
  const child = spawn(process.execPath, [...flags, '--import', 'tsx', 'src/server.ts'], {
    env: {
      ...process.env,
      ...PROD_CHILD_ENV,
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_FILE: 'off',
      LOG_CONSOLE: 'json',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const entries: Entry[] = [];
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the server did not start')), 90_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const entry = JSON.parse(line) as Entry;
      entries.push(entry);
      if (entry.id === 'system/listening') {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  // what start-up says after listening comes in the same turn; a moment more for the pipe
  await sleep(500);
  child.kill('SIGTERM');
  return { entries, code: await exited };
}

describe("npm start's node flags", () => {
  it("are read from package.json's start script", () => {
    const start = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start;
    const flags = startFlags();
    assert.ok(flags.includes('--no-allocation-site-pretenuring'), flags.join(' '));
    assert.ok(start.includes(`node ${flags.join(' ')} dist/server.js`), start);
  });

  it('are compared by name: a value of their own and underscores count as given', () => {
    const wanted = ['--max-semi-space-size=8', '--no-allocation-site-pretenuring', '--liftoff-only'];
    assert.deepEqual(missingStartFlags(['--max-semi-space-size=16', '--no_allocation_site_pretenuring', '--liftoff-only'], wanted), []);
    assert.deepEqual(missingStartFlags(['--liftoff-only', '--import', 'tsx'], wanted), ['--max-semi-space-size=8', '--no-allocation-site-pretenuring']);
    assert.deepEqual(missingStartFlags([], []), []);
  });

  it('missing, a production server says which once; given, it says nothing', { timeout: 200_000 }, async () => {
    const without = await entriesOfStart([]);
    const said = without.entries.filter((e) => e.id === 'system/node-flags');
    assert.equal(said.length, 1, 'said once');
    assert.equal(said[0].level, 'warn');
    assert.deepEqual(said[0].data.missing, startFlags());
    assert.equal(without.code, 0);

    const withFlags = await entriesOfStart(startFlags());
    assert.deepEqual(
      withFlags.entries.filter((e) => e.id === 'system/node-flags'),
      [],
    );
    assert.equal(withFlags.code, 0);
  });
});
