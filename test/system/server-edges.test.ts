/**
 * The real process at its edges (issue 25, items 14-15): a busy port stops start-up with one
 * line naming the port and what to do; SHUTDOWN_DELAY keeps the listener open, answering, with
 * readiness at 503, before the drain closes it.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../../src/config.js';
import { makeClient } from '../support/http.js';
import { databaseEnv, runProcess, startServer } from '../db/processes.js';

describe('the server process', () => {
  it('answers a busy port with one line naming it and what to do, and exit status 1', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as { port: number };
    try {
      const result = await runProcess('src/server.ts', [], { ...databaseEnv({ url: 'memory://' }), PORT: String(port) });
      assert.equal(result.code, 1);
      const lines = result.stderr.split('\n').filter((line) => line.trim() !== '');
      assert.equal(lines.length, 1, result.stderr);
      assert.match(
        lines[0],
        new RegExp(`^Start-up failed: port ${port} on 127\\.0\\.0\\.1 is already in use by another process: stop that process, or set PORT`),
      );
      assert.doesNotMatch(result.stderr + result.stdout, /\n\s+at /, 'no stack');
    } finally {
      taken.close();
    }
  });

  it('keeps serving for SHUTDOWN_DELAY with readiness at 503, then drains and exits 0', async () => {
    const server = await startServer({ ...databaseEnv({ url: 'memory://' }), SHUTDOWN_DELAY: '3' });
    try {
      const client = makeClient(server.url);
      assert.equal((await client('GET', '/api/health/ready')).status, 200);
      server.child.kill('SIGTERM');
      // the child handles the signal on its next loop turn: on a busy machine a request sent at
      // once may come first, so readiness is asked until it turns (well within the 3 s delay)
      let ready = await client('GET', '/api/health/ready', { freshConnection: true });
      for (let i = 0; i < 20 && ready.status === 200; i++) {
        await sleep(50);
        ready = await client('GET', '/api/health/ready', { freshConnection: true });
      }
      assert.equal(ready.status, 503, 'the load balancer is told to stop sending');
      const live = await client('GET', '/api/health/live', { freshConnection: true });
      assert.equal(live.status, 200, 'a connection made during the delay is accepted and answered');
      assert.equal(live.headers.connection, 'close', 'and asked to go elsewhere next time');
      assert.equal(await server.exited, 0);
    } finally {
      server.child.kill('SIGKILL');
    }
  });

  it('reads SHUTDOWN_DELAY in seconds: 0 by default, 5 in prod', () => {
    assert.equal(loadConfig({ APP_ENV: 'test' }).shutdownDelayMs, 0);
    assert.equal(loadConfig({ APP_ENV: 'dev' }).shutdownDelayMs, 0);
    assert.equal(loadConfig({ APP_ENV: 'prod', JWT_SECRET: 'x'.repeat(40), MAIL_URL: 'smtp://127.0.0.1:2525' }).shutdownDelayMs, 5000);
    assert.equal(loadConfig({ APP_ENV: 'test', SHUTDOWN_DELAY: '12' }).shutdownDelayMs, 12_000);
    assert.throws(() => loadConfig({ APP_ENV: 'test', SHUTDOWN_DELAY: '2.5' }), /SHUTDOWN_DELAY/);
  });
});
