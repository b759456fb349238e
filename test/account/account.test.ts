import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { ALL_FORMATS } from '../support/http.js';
import { browserSession, cookiesOf, logIn, PASSWORD, signUp, uniqueEmail } from '../support/auth.js';
import { startSystem, testDatabases, TEST_JWT_SECRET, type TestSystem } from '../support/system.js';

const key = (secret: string) => new TextEncoder().encode(secret);
const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');

for (const db of testDatabases()) {
  describe(`Accounts on ${db.name}`, () => {
    let t: TestSystem;
    before(async () => {
      t = await startSystem(db, { LOG_LEVELS: 'saas.*=trace,fastify=trace' });
    });
    after(async () => t?.stop());

    for (const format of ALL_FORMATS) {
      it(`signs up, logs in and reads the account in ${format.name}`, async () => {
        const email = uniqueEmail('Mixed.Case');
        const signUp = await t.client('POST', '/api/account/sign-up', {
          format,
          body: { email, password: PASSWORD, 'confirm-password': PASSWORD, name: 'Ann' },
        });
        assert.equal(signUp.status, 201, signUp.text);
        assert.equal(signUp.headers['content-type'], format.mime);
        const account = signUp.body.account;
        assert.equal(account.email, email.toLowerCase());
        assert.equal(account.name, 'Ann');
        assert.deepEqual(account.subscription, { status: 'none', plan: null, 'current-period-end': null });

        const login = await t.client('POST', '/api/account/log-in', { format, body: { email: email.toUpperCase(), password: PASSWORD } });
        assert.equal(login.status, 200, login.text);
        assert.equal(login.body['token-type'], 'Bearer');
        assert.equal(login.body['expires-in'], 900);
        assert.equal(login.body.account.id, account.id);
        const cookie = cookiesOf(login)['refresh-token'];
        assert.equal(cookie.value, login.body['refresh-token']);
        assert.match(cookie.attributes, /HttpOnly/i);
        assert.match(cookie.attributes, /SameSite=Strict/i);
        assert.match(cookie.attributes, /Path=\/api\/account/i);

        const me = await t.client('GET', '/api/account/me', { format, headers: { authorization: `Bearer ${login.body['access-token']}` } });
        assert.equal(me.status, 200);
        assert.deepEqual(me.body, account);
      });
    }

    it('refuses a taken email with 409, whatever its case', async () => {
      const { email } = await signUp(t.client);
      const again = await t.client('POST', '/api/account/sign-up', { body: { email: email.toUpperCase(), password: PASSWORD } });
      assert.equal(again.status, 409);
      assert.equal(again.body.type, 'conflict');
    });

    it('validates sign-up input', async () => {
      const cases = [
        [{ email: 'not-an-email', password: PASSWORD }, '/email'],
        [{ email: uniqueEmail(), password: 'short' }, '/password'],
        [{ email: uniqueEmail(), password: 'x'.repeat(129) }, '/password'],
        [{ email: uniqueEmail(), password: PASSWORD, 'confirm-password': 'different!' }, '/confirm-password'],
        [{ email: uniqueEmail(), password: PASSWORD, name: '' }, '/name'],
        [{ password: PASSWORD }, '/email'],
      ] as const;
      for (const [body, path] of cases) {
        const res = await t.client('POST', '/api/account/sign-up', { body });
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.equal(res.body.type, 'request-coercion');
        assert.ok(
          res.body.errors.some((e: { path: string }) => e.path === path),
          `${path} in ${res.text}`,
        );
      }
    });

    it('accepts 128-character passwords without truncating them', async () => {
      const long = 'p'.repeat(127) + 'x';
      const { email } = await signUp(t.client, uniqueEmail(), long);
      assert.equal((await logIn(t.client, email, long)).status, 200);
      assert.equal((await logIn(t.client, email, 'p'.repeat(127) + 'y')).status, 401);
    });

    it('answers an unknown email and a wrong password with one identical 401', async () => {
      const { email } = await signUp(t.client);
      const wrong = await logIn(t.client, email, 'wrong password!');
      const unknown = await logIn(t.client, uniqueEmail('nobody'));
      assert.equal(wrong.status, 401);
      assert.equal(unknown.status, 401);
      assert.equal(wrong.text, unknown.text);
      assert.equal(cookiesOf(wrong)['refresh-token'], undefined);
    });

    it('requires a valid access token for /me and refuses every forged one', async () => {
      const { email, id } = await signUp(t.client);
      const now = Math.floor(Date.now() / 1000);
      // any session id: only ended sessions are refused
      const claims = { email, sid: '00000000-0000-4000-8000-00000000000a' };
      const base = () => new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setSubject(id).setJti('j').setIssuer('saas-app').setAudience('saas-app');
      const valid = await base()
        .setIssuedAt(now)
        .setExpirationTime(now + 60)
        .sign(key(TEST_JWT_SECRET));
      const [h, p, s] = valid.split('.');
      const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const publicPem = publicKey.export({ type: 'spki', format: 'pem' }) as string;
      const forged: Record<string, string> = {
        expired: await base()
          .setIssuedAt(now - 120)
          .setExpirationTime(now - 60)
          .sign(key(TEST_JWT_SECRET)),
        'not yet valid': await base()
          .setIssuedAt(now)
          .setNotBefore(now + 600)
          .setExpirationTime(now + 900)
          .sign(key(TEST_JWT_SECRET)),
        tampered: `${h}.${b64({ ...JSON.parse(Buffer.from(p, 'base64url').toString()), sub: '00000000-0000-4000-8000-000000000000' })}.${s}`,
        'alg none': `${b64({ alg: 'none', typ: 'JWT' })}.${p}.`,
        'wrong key': await base()
          .setIssuedAt(now)
          .setExpirationTime(now + 60)
          .sign(key('another-secret-0123456789abcdefghijklmnop')),
        'RS256 token': await new SignJWT(claims)
          .setProtectedHeader({ alg: 'RS256' })
          .setSubject(id)
          .setJti('j')
          .setIssuer('saas-app')
          .setAudience('saas-app')
          .setIssuedAt(now)
          .setExpirationTime(now + 60)
          .sign(privateKey),
        'HS256 keyed with the public key': await base()
          .setIssuedAt(now)
          .setExpirationTime(now + 60)
          .sign(key(publicPem)),
        'wrong issuer': await new SignJWT(claims)
          .setProtectedHeader({ alg: 'HS256' })
          .setSubject(id)
          .setJti('j')
          .setIssuer('evil')
          .setAudience('saas-app')
          .setIssuedAt(now)
          .setExpirationTime(now + 60)
          .sign(key(TEST_JWT_SECRET)),
        'wrong audience': await new SignJWT(claims)
          .setProtectedHeader({ alg: 'HS256' })
          .setSubject(id)
          .setJti('j')
          .setIssuer('saas-app')
          .setAudience('other')
          .setIssuedAt(now)
          .setExpirationTime(now + 60)
          .sign(key(TEST_JWT_SECRET)),
        oversized: await new SignJWT({ ...claims, pad: 'x'.repeat(5000) })
          .setProtectedHeader({ alg: 'HS256' })
          .setSubject(id)
          .setJti('j')
          .setIssuer('saas-app')
          .setAudience('saas-app')
          .setIssuedAt(now)
          .setExpirationTime(now + 60)
          .sign(key(TEST_JWT_SECRET)),
        garbage: 'not.a.jwt',
        // issued before access tokens named their session: it could not be revoked
        'no session (sid)': await new SignJWT({ email })
          .setProtectedHeader({ alg: 'HS256' })
          .setSubject(id)
          .setJti('j')
          .setIssuer('saas-app')
          .setAudience('saas-app')
          .setIssuedAt(now)
          .setExpirationTime(now + 60)
          .sign(key(TEST_JWT_SECRET)),
      };
      assert.equal((await t.client('GET', '/api/account/me', { headers: { authorization: `Bearer ${valid}` } })).status, 200);
      assert.equal((await t.client('GET', '/api/account/me')).status, 401);
      for (const [name, token] of Object.entries(forged)) {
        const res = await t.client('GET', '/api/account/me', { headers: { authorization: `Bearer ${token}` } });
        assert.equal(res.status, 401, name);
        assert.equal(res.body.type, 'unauthorized', name);
      }
      const expired = await t.client('GET', '/api/account/me', { headers: { authorization: `Bearer ${forged.expired}` } });
      assert.equal(expired.body.message, 'Access token expired');
      // an invalid token on a route that does not require auth is ignored, not an error
      assert.equal((await t.client('GET', '/api/health', { headers: { authorization: `Bearer ${forged.tampered}` } })).status, 200);
    });

    it('rotates refresh tokens; the cookie works as well as the body', async () => {
      const { email } = await signUp(t.client);
      const login = await logIn(t.client, email);
      const first = login.body['refresh-token'];
      const viaBody = await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': first } });
      assert.equal(viaBody.status, 200);
      const second = viaBody.body['refresh-token'];
      assert.notEqual(second, first);
      const me = await t.client('GET', '/api/account/me', { headers: { authorization: `Bearer ${viaBody.body['access-token']}` } });
      assert.equal(me.status, 200);
      // a cookie-carrying request from a browser needs the CSRF token bound to its session
      const browser = await browserSession(t.client);
      const viaCookie = await t.client('POST', '/api/account/refresh', {
        headers: { cookie: `${browser.cookie}; refresh-token=${second}`, 'x-csrf-token': browser.csrf },
      });
      assert.equal(viaCookie.status, 200, viaCookie.text);
      assert.equal(cookiesOf(viaCookie)['refresh-token'].value, viaCookie.body['refresh-token']);
    });

    it('lets ten racing refreshes of one token all succeed and mints exactly one new token', async () => {
      const { email } = await signUp(t.client);
      const token = (await logIn(t.client, email)).body['refresh-token'];
      const results = await Promise.all(Array.from({ length: 10 }, () => t.client('POST', '/api/account/refresh', { body: { 'refresh-token': token } })));
      assert.deepEqual(
        results.map((r) => r.status),
        Array(10).fill(200),
      );
      const minted = new Set(results.map((r) => r.body['refresh-token']));
      assert.equal(minted.size, 1);
      const rows = await t.system.database.db
        .selectFrom('refresh_token as t')
        .innerJoin('refresh_token as first', 'first.family_id', 't.family_id')
        .where('first.token_hash', '=', (await import('../../src/auth/refresh-tokens.js')).hashToken(token))
        .select('t.id')
        .execute();
      assert.equal(rows.length, 2, 'the log-in token and one successor');
      // the minted token keeps working
      assert.equal((await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': [...minted][0] } })).status, 200);
    });

    it('revokes the whole family when an older ancestor is presented again', async () => {
      const { email } = await signUp(t.client);
      const t0 = (await logIn(t.client, email)).body['refresh-token'];
      const t1 = (await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': t0 } })).body['refresh-token'];
      const t2 = (await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': t1 } })).body['refresh-token'];
      const reuse = await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': t0 } });
      assert.equal(reuse.status, 401);
      assert.equal((await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': t2 } })).status, 401, 'the family is revoked');
      const warning = (await t.logEntries()).find((e) => e.id === 'account/refresh-token-reuse');
      assert.ok(warning);
      assert.equal(warning.level, 'warn');
    });

    it('logs out: revokes the family and clears the cookie', async () => {
      const { email } = await signUp(t.client);
      const token = (await logIn(t.client, email)).body['refresh-token'];
      const out = await t.client('POST', '/api/account/log-out', { body: { 'refresh-token': token } });
      assert.equal(out.status, 204);
      assert.equal(out.text, '');
      assert.match(cookiesOf(out)['refresh-token'].attributes, /Expires=Thu, 01 Jan 1970/i);
      assert.equal((await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': token } })).status, 401);
      assert.equal((await t.client('POST', '/api/account/log-out')).status, 204, 'idempotent without a token');
    });

    it('enforces CSRF on cookie-carrying unsafe requests', async () => {
      const { email } = await signUp(t.client);
      const browser = await browserSession(t.client);
      const body = { email, password: PASSWORD };
      const without = await t.client('POST', '/api/account/log-in', { headers: { cookie: browser.cookie }, body });
      assert.equal(without.status, 403);
      assert.equal(without.body.type, 'forbidden');
      const wrong = await t.client('POST', '/api/account/log-in', { headers: { cookie: browser.cookie, 'x-csrf-token': 'forged' }, body });
      assert.equal(wrong.status, 403);
      const other = await browserSession(t.client);
      const foreign = await t.client('POST', '/api/account/log-in', { headers: { cookie: browser.cookie, 'x-csrf-token': other.csrf }, body });
      assert.equal(foreign.status, 403, 'a token from another session does not fit');
      const right = await t.client('POST', '/api/account/log-in', { headers: { cookie: browser.cookie, 'x-csrf-token': browser.csrf }, body });
      assert.equal(right.status, 200);
      const crossSite = await t.client('POST', '/api/account/log-in', { headers: { 'sec-fetch-site': 'cross-site' }, body });
      assert.equal(crossSite.status, 403);
    });

    it("sends security headers: the API set on /api, helmet's document set on pages", async () => {
      const api = await t.client('GET', '/api/health');
      assert.equal(api.headers['x-content-type-options'], 'nosniff');
      assert.equal(api.headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'");
      assert.equal(api.headers['x-frame-options'], 'DENY');
      assert.equal(api.headers['cache-control'], 'no-store');
      const page = await t.client('GET', '/', { headers: { accept: 'text/html' } });
      assert.match(String(page.headers['content-security-policy']), /default-src 'self'/);
      assert.equal(page.headers['x-frame-options'], 'SAMEORIGIN');
      assert.equal(page.headers['x-content-type-options'], 'nosniff');
    });

    it('never logs or echoes a password, token or hash', async () => {
      const password = 'Sup3r-Secret-Passw0rd!';
      const { email } = await signUp(t.client, uniqueEmail(), password);
      const login = await logIn(t.client, email, password);
      const access = login.body['access-token'];
      const refresh = login.body['refresh-token'];
      const me = await t.client('GET', '/api/account/me', { headers: { authorization: `Bearer ${access}` } });
      const refreshed = await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': refresh } });
      const browser = await browserSession(t.client);
      await t.client('POST', '/api/account/log-in', {
        headers: { cookie: `${browser.cookie}; refresh-token=${refresh}`, 'x-csrf-token': browser.csrf },
        body: { email, password },
      });
      for (const res of [me]) {
        for (const secret of [password, access, refresh, '$argon2']) assert.ok(!res.text.includes(secret));
      }
      const log = await t.logText();
      for (const secret of [password, access, refresh, refreshed.body['refresh-token'], refreshed.body['access-token'], browser.csrf, '$argon2']) {
        assert.ok(!log.includes(secret), `log contains ${secret.slice(0, 12)}…`);
      }
      assert.ok(log.includes('[REDACTED]'));
    });
  });

  describe(`Log-in rate limits on ${db.name}`, () => {
    let t: TestSystem;
    before(async () => {
      t = await startSystem(db, { LOGIN_LIMIT_EMAIL: '3/60', LOGIN_LIMIT_ADDRESS: '6/60' });
    });
    after(async () => t?.stop());

    it('limits failures per email + address, then per address, with Retry-After', async () => {
      const { email } = await signUp(t.client);
      for (let i = 0; i < 3; i++) assert.equal((await logIn(t.client, email, 'wrong-password')).status, 401);
      // the right password from the failing address waits too
      const limited = await logIn(t.client, email);
      assert.equal(limited.status, 429);
      assert.equal(limited.body.type, 'rate-limited');
      assert.ok(Number(limited.headers['retry-after']) > 0);
      // three more failures from the same address on other emails reach the address limit (6)
      for (let i = 0; i < 3; i++) assert.equal((await logIn(t.client, uniqueEmail())).status, 401);
      assert.equal((await logIn(t.client, uniqueEmail())).status, 429);
    });
  });
}
