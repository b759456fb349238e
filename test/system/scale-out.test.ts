/**
 * Several instances against one PostgreSQL and one Redis, and the cluster on one machine.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import Stripe from 'stripe';
import { logIn, signUp } from '../support/auth.js';
import { freePort } from '../support/net.js';
import { makeClient } from '../support/http.js';
import { startSystem, testDatabases, type TestDatabase, type TestSystem } from '../support/system.js';
import { MIGRATIONS } from '../../src/db/migrate.js';

const pgUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;
if (process.env.CI === 'true' && (!pgUrl || !redisUrl)) throw new Error('CI=true requires TEST_DATABASE_URL and TEST_REDIS_URL');
const skip = pgUrl && redisUrl ? false : 'TEST_DATABASE_URL and TEST_REDIS_URL are needed';
const SECRET = 'whsec_scale_out_0123';

describe('two instances on one PostgreSQL and one Redis', { skip }, () => {
  let a: TestSystem;
  let b: TestSystem;
  let dropDatabase: () => Promise<void>;

  before(async () => {
    const postgres = testDatabases().find((d) => d.name === 'postgres')!;
    const { url, drop } = await postgres.create({ empty: true });
    dropDatabase = drop;
    const shared: TestDatabase = { name: 'postgres', create: async () => ({ url, drop: async () => undefined }) };
    const env = { REDIS_URL: redisUrl!, REFRESH_REUSE_GRACE: '0', STRIPE_WEBHOOK_SECRET: SECRET, LOGIN_LIMIT_EMAIL: '6/60', LOGIN_LIMIT_ADDRESS: '0' };
    // both at the same moment on an empty database: the migration lock lets one migrate
    [a, b] = await Promise.all([startSystem(shared, env), startSystem(shared, env)]);
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await dropDatabase?.();
  });

  it('both came up on the empty database, migrated once', async () => {
    assert.equal((await a.client('GET', '/api/health')).status, 200);
    assert.equal((await b.client('GET', '/api/health')).status, 200);
    const migrations = await a.system.database.db
      .selectFrom('kysely_migration' as never)
      .selectAll()
      .execute();
    assert.equal(migrations.length, Object.keys(MIGRATIONS).length);
  });

  it('signs up on one and logs in on the other; tokens work on both', async () => {
    const { email } = await signUp(a.client);
    const login = await logIn(b.client, email);
    assert.equal(login.status, 200);
    const auth = { authorization: `Bearer ${login.body['access-token']}` };
    assert.equal((await a.client('GET', '/api/account/me', { headers: auth })).status, 200);
  });

  it('lets exactly one of two instances rotate the same refresh token', async () => {
    for (let round = 0; round < 5; round++) {
      const { email } = await signUp(a.client);
      const token = (await logIn(a.client, email)).body['refresh-token'];
      const results = await Promise.all([a, b].map((s) => s.client('POST', '/api/account/refresh', { body: { 'refresh-token': token } })));
      assert.deepEqual(results.map((r) => r.status).sort(), [200, 401]);
    }
  });

  it('applies one webhook event delivered to both, many times, once', async () => {
    const stripe = new Stripe('sk_test_not_used');
    const { email, id } = await signUp(a.client);
    const deliver = (s: TestSystem, payload: string) =>
      s.client('POST', '/api/webhooks/stripe', {
        headers: { 'content-type': 'application/json', 'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET }) },
        body: payload,
      });
    await deliver(
      a,
      JSON.stringify({
        id: 'evt_link_scale',
        type: 'checkout.session.completed',
        created: 1,
        data: { object: { client_reference_id: id, customer: 'cus_scale' } },
      }),
    );
    const payload = JSON.stringify({ id: 'evt_scale_once', type: 'invoice.payment_failed', created: 2, data: { object: { customer: 'cus_scale' } } });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => deliver(i % 2 ? a : b, payload)));
    assert.deepEqual(
      results.map((r) => r.status),
      Array(20).fill(200),
    );
    assert.equal(results.filter((r) => r.body.duplicate === false).length, 1);
    const me = await b.client('GET', '/api/account/me', { headers: { authorization: `Bearer ${(await logIn(b.client, email)).body['access-token']}` } });
    assert.equal(me.body.subscription.status, 'past-due');
  });

  it('counts log-in attempts on both against one limit', async () => {
    const { email } = await signUp(a.client);
    for (let i = 0; i < 6; i++) assert.equal((await logIn(i % 2 ? a.client : b.client, email, 'wrong-password')).status, 401);
    assert.equal((await logIn(a.client, email)).status, 429);
    assert.equal((await logIn(b.client, email)).status, 429);
  });
});

describe('WEB_CONCURRENCY', () => {
  it('refuses the embedded database with a clear message', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: { ...process.env, WEB_CONCURRENCY: '2', DATABASE_URL: 'memory://', APP_ENV: 'test', PORT: '0' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d) => {
      stderr += d;
    });
    const code = await new Promise((resolve) => child.on('exit', resolve));
    assert.equal(code, 1);
    assert.match(stderr, /WEB_CONCURRENCY > 1 needs PostgreSQL/);
  });

  it('runs two workers on one port, one log file, one shared limit, and stops cleanly', { skip: pgUrl ? false : 'TEST_DATABASE_URL not set' }, async () => {
    const postgres = testDatabases().find((d) => d.name === 'postgres')!;
    const { url, drop } = await postgres.create();
    const dir = await mkdtemp(join(tmpdir(), 'saas-cluster-'));
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: {
        ...process.env,
        WEB_CONCURRENCY: '2',
        DATABASE_URL: url,
        APP_ENV: 'test',
        PORT: String(port),
        LOG_FILE: join(dir, 'saas-app.json'),
        LOGIN_LIMIT_EMAIL: '4/60',
        REDIS_URL: '',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    try {
      const client = makeClient(`http://127.0.0.1:${port}`);
      let up = false;
      for (let i = 0; i < 300 && !up; i++) {
        up = await client('GET', '/api/health').then(
          (r) => r.status === 200,
          () => false,
        );
        if (!up) await sleep(200);
      }
      assert.ok(up, 'the cluster answers');
      await sleep(1500); // let the second worker finish starting
      const { email } = await signUp(client);
      // fresh connections spread the attempts over both workers; the primary keeps the count
      for (let i = 0; i < 4; i++)
        assert.equal((await client('POST', '/api/account/log-in', { body: { email, password: 'wrong-password' }, freshConnection: true })).status, 401);
      assert.equal((await client('POST', '/api/account/log-in', { body: { email, password: 'wrong-password' }, freshConnection: true })).status, 429);
      const exited = new Promise((resolve) => child.on('exit', resolve));
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
      const entries = (await readFile(join(dir, 'saas-app.json'), 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { id: string; data: { pid?: number } });
      const pids = new Set(entries.filter((e) => e.id === 'system/listening').map((e) => e.data.pid));
      assert.equal(pids.size, 2, 'both workers listen and log into the one file');
      assert.ok(entries.some((e) => e.id === 'cluster/stopped'));
    } finally {
      child.kill('SIGKILL');
      await drop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
