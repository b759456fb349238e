import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createInterface } from 'node:readline';
import { PROD_CHILD_ENV } from '../support/child-server.js';
import { makeClient } from '../support/http.js';
import { startProxy, type TcpProxy } from '../support/proxy.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

describe('graceful shutdown of the real process', () => {
  it('finishes in-flight requests on SIGTERM, flushes whole log lines and exits 0', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'saas-shutdown-'));
    const logFile = join(dir, 'saas-app.json');
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: {
        ...process.env,
        ...PROD_CHILD_ENV,
        PORT: '0',
        LOG_FILE: logFile,
        LOG_CONSOLE: 'json',
        LOGIN_LIMIT_ADDRESS: '0',
        LOGIN_LIMIT_EMAIL: '0',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the server did not start')), 90_000);
        createInterface({ input: child.stdout! }).on('line', (line) => {
          const entry = JSON.parse(line) as { id: string; data: { address?: string } };
          if (entry.id === 'system/listening' && entry.data.address) {
            clearTimeout(timer);
            resolve(entry.data.address);
          }
        });
      });
      const client = makeClient(url);
      assert.equal((await client('POST', '/api/account/sign-up', { body: { email: 'down@example.com', password: 'password123' } })).status, 201);
      // log-ins take tens of milliseconds each (argon2): these are in flight when the signal comes.
      // Each has its own connection: a request written onto an idle keep-alive connection at the
      // moment the server closes it was never accepted (see docs/deployment.md).
      const inFlight = Array.from({ length: 12 }, () =>
        client('POST', '/api/account/log-in', { body: { email: 'down@example.com', password: 'password123' }, freshConnection: true }),
      );
      await sleep(150);
      const started = Date.now();
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      const results = await Promise.all(inFlight);
      assert.deepEqual(
        results.map((r) => r.status),
        Array(12).fill(200),
      );
      assert.equal(await exited, 0);
      assert.ok(Date.now() - started < 10_000);
      const text = await readFile(logFile, 'utf8');
      assert.ok(text.endsWith('\n'));
      const entries = text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { id: string });
      assert.equal(entries.filter((e) => e.id === 'api-call/response').length, 13);
      assert.ok(entries.some((e) => e.id === 'system/stopping'));
    } finally {
      child.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('health when the embedded database does not answer', () => {
  let t: TestSystem;
  before(async () => {
    t = await startSystem(testDatabases()[0]);
  });
  after(async () => t?.stop());

  it('reports 503 degraded within the second, and 200 by itself afterwards', async () => {
    // hold PGlite's single connection for 1.6 s
    const busy = t.system.database.db.transaction().execute(async () => {
      await sleep(1600);
    });
    await sleep(50);
    const started = Date.now();
    const degraded = await t.client('GET', '/api/health');
    assert.equal(degraded.status, 503);
    assert.deepEqual({ status: degraded.body.status, db: degraded.body.db }, { status: 'degraded', db: 'down' });
    assert.ok(Date.now() - started < 1500);
    await busy;
    assert.equal((await t.client('GET', '/api/health')).status, 200);
  });
});

const pgUrl = process.env.TEST_DATABASE_URL;
describe('PostgreSQL connection cut', { skip: pgUrl ? false : 'TEST_DATABASE_URL not set' }, () => {
  let t: TestSystem;
  let proxy: TcpProxy;
  before(async () => {
    const db = testDatabases().find((d) => d.name === 'postgres')!;
    const { url, drop } = await db.create();
    const target = new URL(url);
    proxy = await startProxy(target.hostname, Number(target.port || 5432));
    const viaProxy = new URL(url);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    t = await startSystem({ name: 'postgres', create: async () => ({ url: viaProxy.toString(), drop }) });
  });
  after(async () => {
    await t?.stop();
    await proxy?.close();
  });

  it('answers 503 while the database is unreachable and recovers by itself', async () => {
    assert.equal((await t.client('GET', '/api/health')).status, 200);
    await proxy.cut();
    const cutAt = Date.now();
    let health = await t.client('GET', '/api/health');
    while (health.status !== 503 && Date.now() - cutAt < 2000) {
      await sleep(50);
      health = await t.client('GET', '/api/health');
    }
    assert.equal(health.status, 503);
    assert.ok(Date.now() - cutAt <= 1500, 'degraded within the second (plus the ping cache)');
    assert.equal(health.body.db, 'down');
    const signUp = await t.client('POST', '/api/account/sign-up', { body: { email: 'cut@example.com', password: 'password123' } });
    assert.equal(signUp.status, 503);
    assert.equal(signUp.body.type, 'service-unavailable');
    await proxy.restore();
    let status = 0;
    for (let i = 0; i < 20 && status !== 200; i++) {
      status = (await t.client('GET', '/api/health')).status;
      if (status !== 200) await sleep(200);
    }
    assert.equal(status, 200);
    assert.equal((await t.client('POST', '/api/account/sign-up', { body: { email: 'cut@example.com', password: 'password123' } })).status, 201);
  });
});

describe('a bug that escapes every handler', () => {
  it('is logged as fatal through the backend, and the process exits 1', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'saas-crash-'));
    const logFile = join(dir, 'saas-app.json');
    // a preloaded module throws an uncaught exception shortly after the server starts listening
    const preload =
      'import http from "node:http"; const listen = http.Server.prototype.listen; ' +
      'http.Server.prototype.listen = function (...args) { this.once("listening", () => setTimeout(() => { throw new RangeError("escaped"); }, 300)); return listen.apply(this, args); };';
    const child = spawn(process.execPath, ['--import', 'tsx', '--import', `data:text/javascript,${encodeURIComponent(preload)}`, 'src/server.ts'], {
      env: { ...process.env, APP_ENV: 'test', DATABASE_URL: 'memory://', PORT: '0', LOG_FILE: logFile },
      stdio: 'ignore',
    });
    try {
      const code = await new Promise((resolve) => child.on('exit', resolve));
      assert.equal(code, 1);
      const entries = (await readFile(logFile, 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { id: string; level: string; msg: string });
      const fatal = entries.find((e) => e.id === 'system/uncaught-exception');
      assert.ok(fatal);
      assert.equal(fatal.level, 'fatal');
      assert.equal(fatal.msg, 'RangeError: escaped');
    } finally {
      child.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  });
});
