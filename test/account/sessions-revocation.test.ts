/**
 * Ending a session refuses its access tokens at once on this instance, within a second on the
 * others, after a listener drop, and after a restart (issue 14, item 4).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it, mock } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { RefreshTokens } from '../../src/auth/refresh-tokens.js';
import { RevokedSessions } from '../../src/auth/revoked-sessions.js';
import { DatabaseListener, LISTENER_APPLICATION_NAME } from '../../src/db/listener.js';
import { createLogging } from '../../src/logging/index.js';
import { loadConfig } from '../../src/config.js';
import { logIn, signUp } from '../support/auth.js';
import type { TestClient } from '../support/http.js';
import { freePort } from '../support/net.js';
import { startSystem, testDatabases, TEST_JWT_SECRET, type TestDatabase, type TestSystem } from '../support/system.js';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const sidOf = (token: string): string => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).sid;

/** statuses of the account through both routes that read it */
async function meStatuses(client: TestClient, token: string): Promise<[number, number]> {
  const me = await client('GET', '/api/account/me', { headers: bearer(token) });
  const query = await client('POST', '/api/cqrs/query', { headers: bearer(token), body: { 'query/kind': 'account/me' } });
  return [me.status, query.status];
}

/** A session: log-in, plus a refreshed access token of the same family that was never used yet. */
async function session(client: TestClient, email: string) {
  const login = await logIn(client, email);
  assert.equal(login.status, 200, login.text);
  return { access: login.body['access-token'] as string, refresh: login.body['refresh-token'] as string };
}

/** Asks `client` every 50 ms (for at most `boundMs`) until the token is refused; returns how long it took. */
async function untilRefused(client: TestClient, token: string, boundMs = 3000): Promise<number> {
  const started = performance.now();
  for (;;) {
    const res = await client('GET', '/api/account/me', { headers: bearer(token) });
    if (res.status === 401) return performance.now() - started;
    assert.equal(res.status, 200);
    assert.ok(performance.now() - started < boundMs, `still accepted after ${boundMs} ms`);
    await sleep(50);
  }
}

for (const db of testDatabases()) {
  describe(`Ending a session on ${db.name}`, () => {
    let t: TestSystem;
    before(async () => {
      t = await startSystem(db, { REFRESH_REUSE_GRACE: '0' });
    });
    after(async () => t?.stop());

    it('names the session in the access token: the refresh family, kept across refreshes', async () => {
      const { email, id } = await signUp(t.client);
      const { access, refresh } = await session(t.client, email);
      const family = await t.system.database.db.selectFrom('refresh_family').select('id').where('account_id', '=', id).executeTakeFirstOrThrow();
      assert.equal(sidOf(access), family.id);
      const refreshed = await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': refresh } });
      assert.equal(refreshed.status, 200);
      assert.equal(sidOf(refreshed.body['access-token']), family.id);
      const other = await session(t.client, email);
      assert.notEqual(sidOf(other.access), family.id, 'each log-in is a session of its own');
    });

    it('refuses the access tokens of a logged-out session at once, cached or not; other sessions go on', async () => {
      const { email } = await signUp(t.client);
      const ended = await session(t.client, email);
      const kept = await session(t.client, email);
      assert.deepEqual(await meStatuses(t.client, ended.access), [200, 200], 'verified and cached before the log-out');
      assert.deepEqual(await meStatuses(t.client, kept.access), [200, 200]);
      // a second token of the session, never presented before the log-out (not cached)
      const refreshed = await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': ended.refresh } });
      const unseen = refreshed.body['access-token'] as string;

      const out = await t.client('POST', '/api/account/log-out', { body: { 'refresh-token': refreshed.body['refresh-token'] } });
      assert.equal(out.status, 204);
      assert.deepEqual(await meStatuses(t.client, ended.access), [401, 401]);
      assert.deepEqual(await meStatuses(t.client, unseen), [401, 401]);
      const body = (await t.client('GET', '/api/account/me', { headers: bearer(unseen) })).body;
      assert.equal(body.type, 'unauthorized');
      assert.match(body.message, /session has ended/);
      assert.deepEqual(await meStatuses(t.client, kept.access), [200, 200], 'the other session of the account is unaffected');
    });

    it('refuses the access tokens of a family revoked by refresh-token reuse', async () => {
      const { email } = await signUp(t.client);
      const reused = await session(t.client, email);
      const kept = await session(t.client, email);
      assert.deepEqual(await meStatuses(t.client, reused.access), [200, 200]);
      const next = await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': reused.refresh } });
      assert.equal(next.status, 200);
      assert.deepEqual(await meStatuses(t.client, next.body['access-token']), [200, 200]);

      const reuse = await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': reused.refresh } });
      assert.equal(reuse.status, 401);
      assert.deepEqual(await meStatuses(t.client, reused.access), [401, 401]);
      assert.deepEqual(await meStatuses(t.client, next.body['access-token']), [401, 401]);
      assert.deepEqual(await meStatuses(t.client, kept.access), [200, 200]);
    });

    it('ends every session of an account, or all but one, for reset, deletion and "end session"', async () => {
      const { email, id } = await signUp(t.client);
      const [one, two, three] = [await session(t.client, email), await session(t.client, email), await session(t.client, email)];
      const marked: string[] = [];
      const tokens = new RefreshTokens(
        t.system.database.db,
        { secret: TEST_JWT_SECRET, ttl: 3600, reuseGrace: 0 },
        { markRevoked: (ids) => marked.push(...ids) },
      );

      assert.equal(await tokens.revokeFamily(sidOf(one.access)), true);
      assert.equal(await tokens.revokeFamily(sidOf(one.access)), false, 'already ended');
      assert.deepEqual(marked, [sidOf(one.access)]);
      const ended = await tokens.revokeAllForAccount(id, sidOf(three.access));
      assert.deepEqual(ended, [sidOf(two.access)]);
      assert.deepEqual(await tokens.revokeAllForAccount(id), [sidOf(three.access)]);
      assert.deepEqual(marked, [sidOf(one.access), sidOf(two.access), sidOf(three.access)]);
      const live = await t.system.database.db.selectFrom('refresh_family').select('id').where('account_id', '=', id).where('revoked_at', 'is', null).execute();
      assert.deepEqual(live, []);
      if (db.name === 'postgres') {
        // this separate RefreshTokens notified; the system heard it through its listener
        for (const s of [one, two, three]) await untilRefused(t.client, s.access);
      }
    });
  });
}

describe('A restarted instance on PGlite loads the ended sessions', () => {
  it('refuses a token whose session ended before the restart', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'saas-revoked-'));
    const onDisk: TestDatabase = { name: 'pglite', create: async () => ({ url: '', drop: async () => undefined }) };
    const env = { PGLITE_DIR: join(dir, 'pglite') };
    try {
      let t = await startSystem(onDisk, env);
      const { email } = await signUp(t.client);
      const ended = await session(t.client, email);
      const kept = await session(t.client, email);
      assert.equal((await t.client('POST', '/api/account/log-out', { body: { 'refresh-token': ended.refresh } })).status, 204);
      await t.stop();
      t = await startSystem(onDisk, env);
      try {
        assert.deepEqual(await meStatuses(t.client, ended.access), [401, 401]);
        assert.deepEqual(await meStatuses(t.client, kept.access), [200, 200]);
      } finally {
        await t.stop();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('DATABASE_LISTEN_URL', () => {
  it('defaults to DATABASE_URL on PostgreSQL, is unset on PGlite, and refuses anything else naming the variable', () => {
    const pgDb = 'postgres://u@db:5432/app';
    assert.equal(loadConfig({ DATABASE_URL: pgDb }).databaseListenUrl, pgDb);
    assert.equal(loadConfig({ DATABASE_URL: pgDb, DATABASE_LISTEN_URL: 'postgres://u@direct:5432/app' }).databaseListenUrl, 'postgres://u@direct:5432/app');
    assert.equal(loadConfig({ DATABASE_URL: 'memory://' }).databaseListenUrl, undefined);
    assert.throws(() => loadConfig({ DATABASE_URL: pgDb, DATABASE_LISTEN_URL: 'mysql://x' }), /DATABASE_LISTEN_URL/);
    assert.throws(() => loadConfig({ DATABASE_URL: 'memory://', DATABASE_LISTEN_URL: pgDb }), /DATABASE_LISTEN_URL/);
  });
});

describe('RevokedSessions', () => {
  it('forgets a session once no access token of it can still be valid', () => {
    mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
    try {
      const { backend } = createLogging(loadConfig({ APP_ENV: 'test', LOG_FILE: '' }), {});
      const sessions = new RevokedSessions({ db: undefined as never, accessTtl: 900, log: backend.logger('test') });
      sessions.markRevoked(['s1']);
      assert.equal(sessions.isRevoked('s1'), true);
      assert.equal(sessions.isRevoked('s2'), false);
      mock.timers.tick(900_000);
      assert.equal(sessions.isRevoked('s1'), true, 'a token issued just before the revocation is still valid');
      mock.timers.tick(61_000);
      assert.equal(sessions.isRevoked('s1'), false);
    } finally {
      mock.timers.reset();
    }
  });
});

const pgUrl = process.env.TEST_DATABASE_URL;
describe('Two instances on one PostgreSQL', { skip: pgUrl ? false : 'TEST_DATABASE_URL not set' }, () => {
  let a: TestSystem;
  let b: TestSystem;
  let url: string;
  let dropDatabase: () => Promise<void>;
  let shared: TestDatabase;
  const latencies: number[] = [];

  before(async () => {
    const postgres = testDatabases().find((d) => d.name === 'postgres')!;
    ({ url, drop: dropDatabase } = await postgres.create());
    shared = { name: 'postgres', create: async () => ({ url, drop: async () => undefined }) };
    a = await startSystem(shared);
    b = await startSystem(shared);
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await dropDatabase?.();
    if (latencies.length) console.log(`# revocation reached the other instance in ${latencies.map((ms) => `${ms.toFixed(0)} ms`).join(', ')}`);
  });

  const listeners = async (terminate: boolean): Promise<number> => {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const { rows } = await admin.query(
        `select ${terminate ? 'pg_terminate_backend(pid)' : 'pid'} from pg_stat_activity where datname = current_database() and application_name = $1`,
        [LISTENER_APPLICATION_NAME],
      );
      return rows.length;
    } finally {
      await admin.end();
    }
  };

  it('a log-out on one instance refuses the access token on the other within a second', async () => {
    const { email } = await signUp(a.client);
    for (let round = 0; round < 3; round++) {
      const s = await session(a.client, email);
      assert.deepEqual(await meStatuses(b.client, s.access), [200, 200], 'cached on B');
      assert.equal((await a.client('POST', '/api/account/log-out', { body: { 'refresh-token': s.refresh } })).status, 204);
      latencies.push(await untilRefused(b.client, s.access));
      assert.deepEqual(await meStatuses(b.client, s.access), [401, 401]);
    }
  });

  it("still reaches the other instance when the listeners' connections are cut, and they come back", async () => {
    const { email } = await signUp(a.client);
    assert.equal(await listeners(false), 2, 'one listener per instance');
    const s = await session(a.client, email);
    assert.equal((await b.client('GET', '/api/account/me', { headers: bearer(s.access) })).status, 200);
    assert.equal(await listeners(true), 2);
    assert.equal((await a.client('POST', '/api/account/log-out', { body: { 'refresh-token': s.refresh } })).status, 204);
    latencies.push(await untilRefused(b.client, s.access));
    let back = 0;
    for (let i = 0; i < 60 && back < 2; i++) {
      await sleep(100);
      back = await listeners(false);
    }
    assert.equal(back, 2, 'both listeners reconnected');
    const again = await session(a.client, email);
    assert.equal((await b.client('GET', '/api/account/me', { headers: bearer(again.access) })).status, 200);
    assert.equal((await a.client('POST', '/api/account/log-out', { body: { 'refresh-token': again.refresh } })).status, 204);
    latencies.push(await untilRefused(b.client, again.access));
  });

  it('falls back to polling while no listener can connect', async () => {
    const { backend } = createLogging(loadConfig({ APP_ENV: 'test', LOG_FILE: '' }), {});
    // nothing listens on this port: the listener keeps failing, only the poll can learn
    const listener = new DatabaseListener({
      source: { kind: 'postgres', url: `postgres://postgres@127.0.0.1:${await freePort()}/nothing` },
      log: backend.logger('test'),
      pollIntervalMs: 200,
    });
    const sessions = new RevokedSessions({ db: a.system.database.db, accessTtl: 900, log: backend.logger('test'), listener });
    await sessions.start();
    await listener.start();
    try {
      assert.equal(listener.isListening, false);
      const { email } = await signUp(a.client);
      const s = await session(a.client, email);
      assert.equal((await a.client('POST', '/api/account/log-out', { body: { 'refresh-token': s.refresh } })).status, 204);
      let seen = false;
      for (let i = 0; i < 60 && !seen; i++) {
        await sleep(50);
        seen = sessions.isRevoked(sidOf(s.access));
      }
      assert.ok(seen, 'the poll found the revocation');
    } finally {
      await listener.stop();
      await sessions.stop();
    }
  });

  it('a restarted instance loads the sessions that ended while it was down', async () => {
    const { email } = await signUp(a.client);
    const ended = await session(a.client, email);
    const kept = await session(a.client, email);
    await b.stop();
    assert.equal((await a.client('POST', '/api/account/log-out', { body: { 'refresh-token': ended.refresh } })).status, 204);
    // ended minutes ago: only the start-up load (the last access-token lifetime) can find it
    await a.system.database.db
      .updateTable('refresh_family')
      .set({ revoked_at: new Date(Date.now() - 5 * 60_000) })
      .where('id', '=', sidOf(ended.access))
      .execute();
    b = await startSystem(shared);
    assert.deepEqual(await meStatuses(b.client, ended.access), [401, 401]);
    assert.deepEqual(await meStatuses(b.client, kept.access), [200, 200]);
  });
});
