/**
 * The database listener while its connection is down (src/db/listener.ts): subscribers catch up
 * every poll interval, a catch-up still under way is not started again (while the database
 * hangs, its statements wait for DATABASE_TIMEOUT: they would pile up), failures and the lost
 * connection are said once, not at every tick or reconnection attempt, and recovery once.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DatabaseListener } from '../../src/db/listener.js';
import { LevelFilter } from '../../src/logging/filter.js';
import { type LogEntry, LogBackend } from '../../src/logging/logger.js';
import { createRedactor } from '../../src/logging/redact.js';
import { freePort } from '../support/net.js';

describe('the database listener with its connection down', () => {
  it('catches up every interval, never twice at once, and says failures, the loss and recovery once', async () => {
    const entries: LogEntry[] = [];
    const log = new LogBackend(new LevelFilter([{ ns: '*', level: 'info' }]), [{ write: (e) => entries.push(structuredClone(e)) }], createRedactor()).logger(
      'saas.db',
    );
    // nothing listens there: every connection attempt is refused
    const listener = new DatabaseListener({
      source: { kind: 'postgres', url: `postgres://nobody@127.0.0.1:${await freePort()}/none` },
      log,
      pollIntervalMs: 20,
    });

    let slowCalls = 0;
    let releaseSlow: () => void = () => undefined;
    listener.subscribe({
      channel: 'slow_channel',
      onNotification: () => undefined,
      catchUp: () => {
        slowCalls++;
        return new Promise<void>((resolve) => {
          releaseSlow = resolve;
        });
      },
    });
    let failingCalls = 0;
    let failing = true;
    listener.subscribe({
      channel: 'failing_channel',
      onNotification: () => undefined,
      catchUp: async () => {
        failingCalls++;
        if (failing) throw new Error('connection refused');
      },
    });

    // one that throws at once fails like one that rejects, and holds up no other channel
    listener.subscribe({
      channel: 'throwing_channel',
      onNotification: () => undefined,
      catchUp: () => {
        throw new Error('not even a promise');
      },
    });

    // a worker's nudge: it polls by itself, so not at every tick while the connection is down
    let nudges = 0;
    listener.subscribe({
      channel: 'worker_channel',
      onNotification: () => undefined,
      catchUp: async () => {
        nudges++;
      },
      catchUpWhileDisconnected: false,
    });

    await listener.start();
    try {
      await sleep(400);
      assert.equal(slowCalls, 1, 'a catch-up under way is not started again');
      assert.ok(failingCalls >= 5, `the other channel caught up at every tick (${failingCalls})`);
      assert.equal(nudges, 0, 'a subscriber that polls by itself is not nudged at every tick');
      releaseSlow();
      await sleep(100);
      assert.ok(slowCalls >= 2, 'once done, it catches up again');

      failing = false;
      await sleep(100);
      const said = (id: string) => entries.filter((e) => e.id === id);
      const failures = said('db/catch-up-failed').map((e) => e.msg);
      assert.equal(failures.filter((m) => /failing_channel.*connection refused/.test(m)).length, 1, 'a failing catch-up said once');
      assert.equal(failures.filter((m) => /throwing_channel.*not even a promise/.test(m)).length, 1);
      assert.equal(said('db/catch-up-recovered').length, 1, 'and its recovery once');
      assert.equal(said('db/listener-lost').length, 1, 'the lost connection said once, not at every reconnection attempt');
    } finally {
      releaseSlow();
      await listener.stop();
    }
  });
});
