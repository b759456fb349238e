/**
 * Static files are listed once at start: a path that is not a file is answered without touching
 * the filesystem (scanners send mostly such paths; each used to cost a stat and a readdir).
 * Counted, not timed: every function of `node:fs` and `node:fs/promises` is wrapped while the
 * requests run, and the calls given a path are recorded.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

/** Wraps every function of `fs` and `fs.promises`; returns the calls given a path (as text) and a restore function. */
function countFsCalls(): { calls: string[]; restore(): void } {
  const calls: string[] = [];
  const originals: Array<[Record<string, unknown>, string, unknown]> = [];
  for (const target of [fs, fs.promises] as unknown as Array<Record<string, unknown>>) {
    for (const name of Object.keys(target)) {
      const original = target[name];
      // functions only, not classes (Stats, ReadStream, ...) or constants
      if (typeof original !== 'function' || !/^[a-z]/.test(name)) continue;
      originals.push([target, name, original]);
      target[name] = function (this: unknown, ...args: unknown[]) {
        const [first] = args;
        if (typeof first === 'string' || first instanceof URL || Buffer.isBuffer(first)) calls.push(`${name}(${String(first)})`);
        return (original as (...a: unknown[]) => unknown).apply(this, args);
      };
    }
  }
  // the ES module bindings (`import { readFile } from 'node:fs/promises'`) follow the objects
  syncBuiltinESMExports();
  return {
    calls,
    restore() {
      for (const [target, name, original] of originals) target[name] = original;
      syncBuiltinESMExports();
    },
  };
}

describe('static files', () => {
  let t: TestSystem;
  let publicDir: string;
  before(async () => {
    publicDir = await mkdtemp(join(tmpdir(), 'saas-public-'));
    await mkdir(join(publicDir, 'assets'));
    await writeFile(join(publicDir, 'index.html'), '<!doctype html><html><body><p>client</p></body></html>');
    await writeFile(join(publicDir, 'assets', 'app.js'), 'console.log("app")');
    t = await startSystem(testDatabases()[0], { PUBLIC_DIR: publicDir });
    // the log file is open before anything is counted (opening it stats and creates it)
    assert.equal((await t.client('GET', '/api/health')).status, 200);
    await t.logEntries();
  });
  after(async () => {
    await t?.stop();
    await rm(publicDir, { recursive: true, force: true });
  });

  it('answers paths that are not files, and the page, without touching the filesystem', async () => {
    const counted = countFsCalls();
    try {
      const answers = [];
      for (const path of ['/no-such', '/wp-login.php', '/.env', '/assets/missing.js', '/assets', '/api/no-such', '/openapi/nope', '/%E0%A4%A', '/a//b']) {
        answers.push([path, (await t.client('GET', path)).status]);
      }
      answers.push(['HEAD /x.php', (await t.client('HEAD', '/x.php')).status]);
      // client routes and the page itself come from memory
      answers.push(['/account (page)', (await t.client('GET', '/account', { headers: { accept: 'text/html' } })).status]);
      answers.push(['/ (page)', (await t.client('GET', '/', { headers: { accept: 'text/html' } })).status]);
      assert.deepEqual(answers, [
        ['/no-such', 404],
        ['/wp-login.php', 404],
        ['/.env', 404],
        ['/assets/missing.js', 404],
        ['/assets', 404],
        ['/api/no-such', 404],
        ['/openapi/nope', 404],
        ['/%E0%A4%A', 400],
        ['/a//b', 403],
        ['HEAD /x.php', 404],
        ['/account (page)', 200],
        ['/ (page)', 200],
      ]);
      assert.deepEqual([...counted.calls], [], 'no filesystem call for a path that is not a file');

      // the count sees the static layer: a file that is there is read from the disk
      const file = await t.client('GET', '/assets/app.js');
      assert.equal(file.status, 200);
      assert.equal(file.text, 'console.log("app")');
      assert.ok(
        counted.calls.some((c) => c.includes(join(publicDir, 'assets', 'app.js'))),
        counted.calls.join(', '),
      );
    } finally {
      counted.restore();
    }
  });

  it('serves the page listed at start from memory with the session token in it', async () => {
    const page = await t.client('GET', '/account', { headers: { accept: 'text/html' } });
    assert.equal(page.status, 200);
    assert.equal(page.headers['cache-control'], 'no-store');
    assert.match(page.text, /<p>client<\/p>/);
    assert.match(page.text, /<input type="hidden" id="__anti-forgery-token" value="[A-Za-z0-9_-]{20,}">/);
  });

  it('does not serve a file added after start: the build output is fixed while the server runs', async () => {
    await writeFile(join(publicDir, 'later.txt'), 'too late');
    assert.equal((await t.client('GET', '/later.txt')).status, 404);
  });
});
