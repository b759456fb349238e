// test-run: alone (it measures time, or loads the machine on purpose: see scripts/run-tests.mjs)
/**
 * PostgreSQL restarted, stopped and started again, unreachable at start-up (docs/deployment.md,
 * "When a dependency fails"), on a private PostgreSQL the test starts in a temporary directory:
 * requests that need it answer 503 `service-unavailable` within DATABASE_TIMEOUT, health and
 * readiness say so, the process stays up, and once it is back every route works without a
 * restart, nothing acknowledged is lost, and a session ended on one instance is refused on the
 * other within a second (LISTEN re-established, what was missed caught up). At start-up the
 * server waits for it up to DATABASE_CONNECT_TIMEOUT, then exits with one line naming it.
 */
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { logIn, signUp, uniqueEmail } from '../support/auth.js';
import { get, startChildServer, terminate, waitFor } from '../support/child-server.js';
import { PrivatePostgres } from '../support/private-postgres.js';
import { startSystem, type TestDatabase, type TestSystem } from '../support/system.js';

/** seconds; requests that need the database answer within it */
const DATABASE_TIMEOUT = 2;
/** the bound a test client waits for an answer: the timeout, and room for a busy machine */
const ANSWER_WITHIN_MS = (DATABASE_TIMEOUT + 3) * 1000;

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('PostgreSQL gone and back', () => {
  let postgres: PrivatePostgres;
  let a: TestSystem;
  let b: TestSystem;
  before(async () => {
    postgres = await PrivatePostgres.create();
    await postgres.start();
    const url = await postgres.createDatabase('outage');
    const database: TestDatabase = { name: 'postgres', create: async () => ({ url, drop: async () => undefined }) };
    const env = { DATABASE_TIMEOUT: String(DATABASE_TIMEOUT) };
    a = await startSystem(database, env);
    b = await startSystem(database, env);
  });
  after(async () => {
    await a?.stop().catch(() => undefined);
    await b?.stop().catch(() => undefined);
    await postgres?.dispose();
  });

  it('answers 503 within DATABASE_TIMEOUT while it is gone, and everything works again once it is back', async () => {
    const before = await signUp(a.client, uniqueEmail('kept'));
    await postgres.restart();
    await waitFor(async () => (await a.client('GET', '/api/health')).status === 200, 10_000);
    assert.equal((await logIn(b.client, before.email)).status, 200, 'after a fast restart');

    await postgres.stop();
    const signUpWhileDown = await a.client('POST', '/api/account/sign-up', {
      body: { email: uniqueEmail(), password: 'correct horse battery staple' },
      timeoutMs: ANSWER_WITHIN_MS,
    });
    assert.equal(signUpWhileDown.status, 503, signUpWhileDown.text);
    assert.equal((signUpWhileDown.body as { type: string }).type, 'service-unavailable');
    assert.ok(Number(signUpWhileDown.headers['retry-after']) > 0);
    const logInWhileDown = await b.client('POST', '/api/account/log-in', {
      body: { email: before.email, password: before.password },
      timeoutMs: ANSWER_WITHIN_MS,
    });
    assert.equal(logInWhileDown.status, 503);
    // health answers are cached for 500 ms: one from before the stop may still be served
    await waitFor(async () => (await a.client('GET', '/api/health', { timeoutMs: ANSWER_WITHIN_MS })).status === 503, ANSWER_WITHIN_MS);
    await waitFor(async () => (await a.client('GET', '/api/health/ready', { timeoutMs: ANSWER_WITHIN_MS })).status === 503, ANSWER_WITHIN_MS);
    assert.equal((await a.client('GET', '/api/health/live')).status, 200, 'the process is up');

    await postgres.start();
    await waitFor(
      async () => (await a.client('GET', '/api/health/ready')).status === 200 && (await b.client('GET', '/api/health/ready')).status === 200,
      10_000,
    );
    const after = await signUp(a.client, uniqueEmail('after'));
    assert.equal((await logIn(b.client, after.email)).status, 200);
    assert.equal((await logIn(a.client, before.email)).status, 200, 'the account answered 201 before the outage is there');
  });

  it('refuses on every instance, within a second, a session ended on one after the database restarted', async () => {
    const account = await signUp(a.client, uniqueEmail('revoked'));
    await postgres.restart();
    await waitFor(async () => (await b.client('GET', '/api/health/ready')).status === 200, 10_000);
    const session = (await logIn(a.client, account.email)).body as { 'access-token': string; 'refresh-token': string };
    assert.equal((await b.client('GET', '/api/account/me', { headers: bearer(session['access-token']) })).status, 200);
    assert.equal((await a.client('POST', '/api/account/log-out', { body: { 'refresh-token': session['refresh-token'] } })).status, 204);
    await waitFor(async () => (await b.client('GET', '/api/account/me', { headers: bearer(session['access-token']) })).status === 401, 1_000);
  });
});

describe('PostgreSQL unreachable at start-up', () => {
  it('waits for it, saying so once, and starts when it appears', async () => {
    const postgres = await PrivatePostgres.create();
    try {
      const server = await startChildServer({
        env: { DATABASE_URL: postgres.url(), DATABASE_CONNECT_TIMEOUT: '120', LOG_CONSOLE: 'json' },
        stdio: ['ignore', 'pipe', 'pipe'],
        waitUntilLive: false,
      });
      try {
        let out = '';
        server.child.stdout!.setEncoding('utf8').on('data', (d: string) => {
          out += d;
        });
        await waitFor(
          () => out.includes('"db/waiting"'),
          60_000,
          () => server.child.exitCode !== null,
        );
        await postgres.start();
        await waitFor(
          async () => (await get(server.port, '/api/health/ready')).status === 200,
          60_000,
          () => server.child.exitCode !== null,
        );
        assert.equal(out.split('"db/waiting"').length - 1, 1, 'said once');
        assert.ok(out.includes('"db/reached"'));
        // the wait is told twice, when it starts and when it ends: no line per attempt (the shared connections' failed connects)
        const entries = out
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as { id: string; level: string });
        const untilReached = entries.slice(0, entries.findIndex((e) => e.id === 'db/reached') + 1);
        assert.deepEqual(
          untilReached.filter((e) => e.level === 'error' || e.level === 'warn' || e.id === 'db/reached').map((e) => e.id),
          ['db/waiting', 'db/reached'],
        );
        assert.equal(await terminate(server, 15_000), 0);
      } finally {
        await server.dispose();
      }
    } finally {
      await postgres.dispose();
    }
  });

  for (const [what, listen] of [
    ['refusing connections', false],
    ['accepting connections and never answering', true],
  ] as const) {
    it(`gives up after DATABASE_CONNECT_TIMEOUT with one line naming it: ${what}`, async () => {
      const sockets: Socket[] = [];
      const blackHole = createServer((socket) => {
        sockets.push(socket);
      });
      const port = await new Promise<number>((resolve) => blackHole.listen(0, '127.0.0.1', () => resolve((blackHole.address() as { port: number }).port)));
      if (!listen) await new Promise((resolve) => blackHole.close(resolve));
      try {
        const server = await startChildServer({
          env: { DATABASE_URL: `postgres://app:s3cret-password@127.0.0.1:${port}/app`, DATABASE_CONNECT_TIMEOUT: '3', DATABASE_TIMEOUT: '1' },
          stdio: ['ignore', 'ignore', 'pipe'],
          waitUntilLive: false,
        });
        try {
          let giveUp: NodeJS.Timeout | undefined;
          const code = await Promise.race([server.exited, new Promise((resolve) => (giveUp = setTimeout(() => resolve('still running'), 60_000)))]);
          clearTimeout(giveUp);
          assert.equal(code, 1);
          const lines = server.stderr().trim().split('\n');
          assert.equal(lines.length, 1, server.stderr());
          assert.match(lines[0], new RegExp(`^Start-up failed: the database at 127\\.0\\.0\\.1:${port} did not answer within 3 s`));
          assert.ok(!server.stderr().includes('s3cret'), 'never the password');
        } finally {
          await server.dispose();
        }
      } finally {
        for (const socket of sockets) socket.destroy();
        if (listen) blackHole.close();
      }
    });
  }
});
