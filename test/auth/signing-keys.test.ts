/**
 * Signing keys (DESIGN.md, "OAuth 2.1 / OpenID Connect provider"): EdDSA access tokens with a
 * `kid`, the JWKS, tokens signed with JWT_SECRET before the upgrade, rotation (by the running
 * server and through a PGlite directory's lock socket), and a development server without
 * JWT_SECRET that keeps its sessions across a restart (PostgreSQL: the database outlives both).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import { authModule, type AuthServices } from '../../src/auth/module.js';
import { loadConfig } from '../../src/config.js';
import { lockDirectory, requestCommand } from '../../src/db/lock.js';
import { buildSystem } from '../../src/system.js';
import { logIn, signUp } from '../support/auth.js';
import { makeClient } from '../support/http.js';
import { startSystem, TEST_JWT_SECRET, testDatabases, type TestSystem } from '../support/system.js';

describe('Signing keys on pglite', () => {
  let t: TestSystem;
  before(async () => {
    t = await startSystem(testDatabases()[0]);
  });
  after(() => t?.stop());

  const keysOf = () => t.system.services<AuthServices>(authModule).signingKeys;

  it('publishes the public keys of every algorithm, never a private member, cached at most 5 minutes', async () => {
    const res = await t.client('GET', '/.well-known/jwks.json');
    assert.equal(res.status, 200);
    assert.match(String(res.headers['cache-control']), /public, max-age=(\d+)/);
    assert.ok(Number(/max-age=(\d+)/.exec(String(res.headers['cache-control']))![1]) <= 300);
    assert.deepEqual(new Set(res.body.keys.map((k: { alg: string }) => k.alg)), new Set(['EdDSA', 'RS256', 'ES256']));
    for (const key of res.body.keys) {
      assert.equal(key.use, 'sig');
      for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi']) assert.equal(key[member], undefined, `no private ${member}`);
    }
    const rows = await t.system.database.db.selectFrom('signing_key').select(['private_sealed', 'public_jwk']).execute();
    for (const row of rows) assert.doesNotMatch(row.private_sealed, /"d"/, 'the private part is sealed');
  });

  it('signs access tokens with EdDSA and a kid that third parties verify with the JWKS; an HS256 token from before still works', async () => {
    const { email, id } = await signUp(t.client);
    const token = (await logIn(t.client, email)).body['access-token'] as string;
    const header = decodeProtectedHeader(token);
    assert.equal(header.alg, 'EdDSA');
    const jwks = createRemoteJWKSet(new URL(`${t.url}/.well-known/jwks.json`));
    const { payload } = await jwtVerify(token, jwks, { algorithms: ['EdDSA'] });
    assert.equal(payload.sub, id);

    // a token the server signed with JWT_SECRET before the upgrade: its session is a real one
    const sid = (payload as { sid: string }).sid;
    const now = Math.floor(Date.now() / 1000);
    const legacy = await new SignJWT({ email, sid, auth_time: now })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(id)
      .setIssuedAt(now)
      .setExpirationTime(now + 600)
      .setIssuer('saas-app')
      .setAudience('saas-app')
      .setJti(randomUUID())
      .sign(new TextEncoder().encode(TEST_JWT_SECRET));
    assert.equal((await t.client('GET', '/api/account/me', { headers: { authorization: `Bearer ${legacy}` } })).status, 200);
    // one signed with another secret, or with alg none, is refused
    const forged = await new SignJWT({ email, sid })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(id)
      .setIssuedAt(now)
      .setExpirationTime(now + 600)
      .setIssuer('saas-app')
      .setAudience('saas-app')
      .setJti(randomUUID())
      .sign(new TextEncoder().encode('another-secret-0123456789abcdefghijklmnop'));
    const refused = await t.client('GET', '/api/account/me', { headers: { authorization: `Bearer ${forged}` } });
    assert.equal(refused.status, 401);
    assert.match(String(refused.headers['www-authenticate']), /resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource\/api"/);
  });

  it('rotates: the new key is published at once and signs later; tokens of the previous key stay valid', async () => {
    const { email } = await signUp(t.client);
    const before = (await logIn(t.client, email)).body['access-token'] as string;
    const oldKid = decodeProtectedHeader(before).kid;
    const kids = await keysOf().rotate();
    assert.equal(kids.length, 3);
    const published = (await t.client('GET', '/.well-known/jwks.json')).body.keys.map((k: { kid: string }) => k.kid);
    for (const kid of [...kids, oldKid]) assert.ok(published.includes(kid), `${kid} is published`);
    // the new key waits (5 minutes, or the access-token lifetime): the same key signs meanwhile
    const after = (await logIn(t.client, email)).body['access-token'] as string;
    assert.equal(decodeProtectedHeader(after).kid, oldKid);
    assert.equal((await t.client('GET', '/api/account/me', { headers: { authorization: `Bearer ${before}` } })).status, 200);
    // once its time comes, every instance signs with it
    const newEdDsa = kids.find((kid) => keysOf().find(kid)?.alg === 'EdDSA')!;
    assert.equal(keysOf().current('EdDSA', Date.now() + 301_000)?.kid, newEdDsa);
  });
});

describe('keys:rotate through a PGlite directory held by a server', () => {
  it('asks the holder over the lock socket, proving it knows the token', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'saas-keys-'));
    const lock = await lockDirectory(dir);
    try {
      let runs = 0;
      lock.serveCommand('keys:rotate', async () => `rotated ${++runs}`);
      assert.equal(await requestCommand(dir, 'keys:rotate'), 'rotated 1');
      await assert.rejects(requestCommand(dir, 'unknown'), /does not serve unknown/);
    } finally {
      await lock.release();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

const postgres = testDatabases().find((db) => db.name === 'postgres');

describe('A development server without JWT_SECRET', { skip: postgres ? false : 'TEST_DATABASE_URL not set' }, () => {
  it('keeps its sessions across a restart: the keys are in the database', async () => {
    const { url: databaseUrl, drop } = await postgres!.create();
    const env = { APP_ENV: 'dev', PORT: '0', HOST: '127.0.0.1', DATABASE_URL: databaseUrl, LOG_CONSOLE: 'off', SIGNUP_LIMIT_ADDRESS: '0' };
    try {
      const first = await buildSystem(loadConfig(env));
      let token: string;
      try {
        const client = makeClient(await first.listen());
        const { email } = await signUp(client);
        token = (await logIn(client, email)).body['access-token'];
      } finally {
        await first.stop();
      }
      const second = await buildSystem(loadConfig(env));
      try {
        const client = makeClient(await second.listen());
        assert.equal((await client('GET', '/api/account/me', { headers: { authorization: `Bearer ${token}` } })).status, 200);
      } finally {
        await second.stop();
      }
    } finally {
      await drop();
    }
  });
});
