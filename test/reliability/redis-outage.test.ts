/**
 * Redis gone and back (docs/deployment.md, "When a dependency fails"), on a private redis-server
 * the test starts and stops: log-in, failed log-ins, `me` and refresh keep working while it is
 * gone, limits count in the instance (they still hold), one warning and a metric say so, and once
 * Redis is back the counters are in Redis again and nothing repeats in the log.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { logIn, PASSWORD, signUp, uniqueEmail } from '../support/auth.js';
import { waitFor } from '../support/child-server.js';
import { freePort } from '../support/net.js';
import { startRedis, stopRedis } from '../support/private-redis.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

if (process.env.CI === 'true' && !process.env.TEST_REDIS_URL)
  throw new Error('CI=true requires Redis (TEST_REDIS_URL): the Redis outage test must not be skipped');

describe('Redis gone and back', () => {
  let port: number;
  let redis: ChildProcess;
  let t: TestSystem;
  const metrics = { port: 0 };
  before(async () => {
    port = await freePort();
    metrics.port = await freePort();
    redis = await startRedis(port);
    t = await startSystem(testDatabases()[0], {
      REDIS_URL: `redis://127.0.0.1:${port}`,
      METRICS_PORT: String(metrics.port),
      LOGIN_LIMIT_EMAIL: '3/60',
      LOGIN_LIMIT_ADDRESS: '0',
    });
  });
  after(async () => {
    await t?.stop();
    if (redis) await stopRedis(redis);
  });

  const fallbackCount = async () => {
    const text = await (await fetch(`http://127.0.0.1:${metrics.port}/metrics`)).text();
    return Number(/^saas_rate_limit_fallback_total (\d+)/m.exec(text)?.[1] ?? NaN);
  };

  it('keeps log-in, failed log-ins, me and refresh working, limits counting here; counts in Redis again once it is back', async () => {
    const email = uniqueEmail();
    await signUp(t.client, email);
    assert.equal((await logIn(t.client, email)).status, 200);
    assert.equal(await fallbackCount(), 0);

    await stopRedis(redis);
    for (let round = 0; round < 3; round++) {
      const res = await logIn(t.client, email);
      assert.equal(res.status, 200, `log-in while Redis is gone: ${res.text}`);
      const token = (res.body as { 'access-token': string })['access-token'];
      assert.equal((await t.client('GET', '/api/account/me', { headers: { authorization: `Bearer ${token}` } })).status, 200);
      const refreshed = await t.client('POST', '/api/account/refresh', {
        body: { 'refresh-token': (res.body as { 'refresh-token': string })['refresh-token'] },
      });
      assert.equal(refreshed.status, 200, refreshed.text);
    }
    // the limit still holds, counted in this instance: 3 failures, then 429
    const other = uniqueEmail();
    await signUp(t.client, other);
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await t.client('POST', '/api/account/log-in', { body: { email: other, password: 'wrong password' } })).status);
    assert.deepEqual(statuses, [401, 401, 401, 429]);
    assert.ok((await fallbackCount()) > 0, 'the fallback is counted');

    // a while gone: ioredis keeps trying, and none of it repeats in the log
    await sleep(3_000);
    redis = await startRedis(port);
    await waitFor(async () => (await t.logEntries()).some((e) => e.id === 'rate-limit/redis-back'), 10_000);
    const fallbacksBefore = await fallbackCount();
    const third = uniqueEmail();
    await signUp(t.client, third);
    assert.equal((await t.client('POST', '/api/account/log-in', { body: { email: third, password: 'wrong password' } })).status, 401);
    assert.equal(await fallbackCount(), fallbacksBefore, 'counted in Redis again');
    const direct = new Redis({ port, host: '127.0.0.1' });
    try {
      assert.ok((await direct.keys('login-failures-email*')).length > 0, 'the failure counter is in Redis');
    } finally {
      direct.disconnect();
    }

    const entries = await t.logEntries();
    const said = (id: string) => entries.filter((e) => e.id === id).length;
    assert.equal(said('rate-limit/redis-unavailable'), 1, 'one warning for the outage');
    assert.ok(said('ioredis/error') <= 1, `ioredis errors said once per outage, not at every attempt (${said('ioredis/error')})`);
    assert.equal(entries.filter((e) => e.level === 'error' || e.level === 'fatal').length, 0, JSON.stringify(entries.filter((e) => e.level === 'error')));
    assert.equal(entries.filter((e) => (e.data as { status?: number }).status === 500).length, 0, 'no request failed');
  });

  it('starts while Redis is down, counting here until it appears', async () => {
    const downPort = await freePort();
    const late = await startSystem(testDatabases()[0], { REDIS_URL: `redis://127.0.0.1:${downPort}`, LOGIN_LIMIT_ADDRESS: '0' });
    try {
      const email = uniqueEmail();
      await signUp(late.client, email);
      assert.equal((await logIn(late.client, email, PASSWORD)).status, 200);
      const lateRedis = await startRedis(downPort);
      try {
        await waitFor(async () => (await late.logEntries()).some((e) => e.id === 'rate-limit/redis-back'), 10_000);
      } finally {
        await stopRedis(lateRedis);
      }
    } finally {
      await late.stop();
    }
  });
});
