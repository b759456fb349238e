/**
 * The account lifecycle's routes (issue 17, "The account routes"): verification, resend,
 * forgot / reset password, change password, change email and its confirmation, the name.
 * Sessions, export and deletion are in lifecycle-sessions.test.ts; forgot-password's timing in
 * forgot-password-timing.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { browserSession, cookiesOf, logIn, PASSWORD, signUp, uniqueEmail } from '../support/auth.js';
import { ALL_FORMATS, FORMAT_BY_NAME } from '../support/http.js';
import { mailCount, mailedLink } from '../support/mailbox.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const NEW_PASSWORD = 'a brand new passphrase';

for (const db of testDatabases()) {
  describe(`Account lifecycle on ${db.name}`, () => {
    let t: TestSystem;
    before(async () => {
      t = await startSystem(db, { LOG_LEVELS: 'saas.*=trace,fastify=trace', REFRESH_REUSE_GRACE: '0' });
    });
    after(async () => t?.stop());

    const session = async (email: string, password = PASSWORD) => {
      const res = await logIn(t.client, email, password);
      assert.equal(res.status, 200, res.text);
      return { access: res.body['access-token'] as string, refresh: res.body['refresh-token'] as string };
    };

    for (const format of ALL_FORMATS) {
      it(`verifies the address from the link sign-up sends, in ${format.name}`, async () => {
        const email = uniqueEmail();
        const created = await t.client('POST', '/api/account/sign-up', { format, body: { email, password: PASSWORD, name: 'Vera' } });
        assert.equal(created.status, 201, created.text);
        assert.equal(created.body.account['email-verified'], false);
        const link = await mailedLink(t.system, email, 'verify-email');
        assert.equal(link.url.pathname, '/verify-email');
        assert.equal(link.url.origin, t.system.config.appUrl);
        assert.ok(link.token.length >= 43, 'at least 256 bits, base64url');

        // opened in the browser that signed up (signed in): the password stays
        const { access } = await session(email);
        const verified = await t.client('POST', '/api/account/verify-email', { format, headers: bearer(access), body: { token: link.token } });
        assert.equal(verified.status, 200, verified.text);
        assert.equal(verified.headers['content-type'], format.mime);
        assert.equal(verified.body.id, created.body.account.id);
        assert.equal(verified.body['email-verified'], true);
        assert.equal(verified.body['password-reset-token'], undefined);
        assert.equal((await t.client('GET', '/api/account/me', { format, headers: bearer(access) })).body['email-verified'], true);

        const again = await t.client('POST', '/api/account/verify-email', { format, body: { token: link.token } });
        assert.equal(again.status, 400);
        assert.equal(again.headers['content-type'], format.mime);
        assert.equal(again.body.type, 'invalid-token');
      });
    }

    it('stores only the hash of a link token, and refuses unknown, expired and wrong-purpose tokens alike', async () => {
      const { email, id } = await signUp(t.client);
      const { token } = await mailedLink(t.system, email, 'verify-email');
      const rows = await t.system.database.db.selectFrom('action_token').selectAll().where('account_id', '=', id).execute();
      assert.equal(rows.length, 1);
      assert.notEqual(rows[0].token_hash, token);
      assert.match(rows[0].token_hash, /^[0-9a-f]{64}$/);

      for (const bad of ['nope', token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A')]) {
        const res = await t.client('POST', '/api/account/verify-email', { body: { token: bad } });
        assert.deepEqual([res.status, res.body.type], [400, 'invalid-token']);
      }
      // a verification token is no reset or email-change token
      assert.equal((await t.client('POST', '/api/account/reset-password', { body: { token, password: NEW_PASSWORD } })).body.type, 'invalid-token');
      assert.equal((await t.client('POST', '/api/account/confirm-email', { body: { token } })).body.type, 'invalid-token');

      await t.system.database.db.updateTable('action_token').set({ expires_at: sql`now() - interval '1 second'` }).where('account_id', '=', id).execute();
      const expired = await t.client('POST', '/api/account/verify-email', { body: { token } });
      assert.deepEqual([expired.status, expired.body.type], [400, 'invalid-token']);

      for (const body of [{}, { token: '' }, { token: 'x'.repeat(201) }, { token: 'ok', extra: 1 }]) {
        const res = await t.client('POST', '/api/account/verify-email', { body });
        assert.deepEqual([res.status, res.body.type], [400, 'request-coercion'], JSON.stringify(body));
      }
    });

    it('lets two racing uses of one verification token succeed once', async () => {
      const { email } = await signUp(t.client);
      const { token } = await mailedLink(t.system, email, 'verify-email');
      const answers = await Promise.all([1, 2, 3, 4].map(() => t.client('POST', '/api/account/verify-email', { body: { token } })));
      assert.deepEqual(answers.map((a) => a.status).sort(), [200, 400, 400, 400]);
    });

    it('resends a verification link to a signed-in, unverified account; nothing once verified; limited per account', async () => {
      const limited = await startSystem(db, { RESEND_LIMIT_ACCOUNT: '2/3600' });
      try {
        const { email } = await signUp(limited.client);
        const access = (await logIn(limited.client, email)).body['access-token'] as string;
        assert.equal((await limited.client('POST', '/api/account/resend-verification', { body: {} })).status, 401);
        for (const format of ALL_FORMATS.slice(0, 2)) {
          const res = await limited.client('POST', '/api/account/resend-verification', { format, headers: bearer(access), body: {} });
          assert.equal(res.status, 202, res.text);
          assert.equal(typeof res.body.message, 'string');
        }
        assert.equal(await mailCount(limited.system, email, 'verify-email'), 3);
        const over = await limited.client('POST', '/api/account/resend-verification', { format: FORMAT_BY_NAME.transit, headers: bearer(access), body: {} });
        assert.equal(over.status, 429);
        assert.equal(over.body.type, 'rate-limited');
        assert.ok(Number(over.headers['retry-after']) > 0);

        // every link sent works until one is used
        const { token } = await mailedLink(limited.system, email, 'verify-email');
        assert.equal((await limited.client('POST', '/api/account/verify-email', { body: { token } })).status, 200);
        const other = await signUp(limited.client);
        const otherAccess = (await logIn(limited.client, other.email)).body['access-token'];
        const link = await mailedLink(limited.system, other.email, 'verify-email');
        // opened while signed in (the access token comes with it): that session stays
        assert.equal((await limited.client('POST', '/api/account/verify-email', { headers: bearer(otherAccess), body: { token: link.token } })).status, 200);
        assert.equal((await limited.client('POST', '/api/account/resend-verification', { headers: bearer(otherAccess), body: {} })).status, 202);
        assert.equal(await mailCount(limited.system, other.email, 'verify-email'), 1, 'a verified address gets no new link');
      } finally {
        await limited.stop();
      }
    });

    for (const format of ALL_FORMATS) {
      it(`resets a forgotten password from the emailed link and ends every session, in ${format.name}`, async () => {
        const { email } = await signUp(t.client);
        const before1 = await session(email);
        const before2 = await session(email);
        assert.equal((await t.client('GET', '/api/account/me', { headers: bearer(before1.access) })).status, 200);

        const known = await t.client('POST', '/api/account/forgot-password', { format, body: { email: email.toUpperCase() } });
        const unknown = await t.client('POST', '/api/account/forgot-password', { format, body: { email: uniqueEmail('nobody') } });
        assert.equal(known.status, 202);
        assert.deepEqual([unknown.status, unknown.text], [known.status, known.text], 'the same answer whether the email exists or not');
        const link = await mailedLink(t.system, email, 'reset-password');
        assert.equal(link.url.pathname, '/reset-password');

        const short = await t.client('POST', '/api/account/reset-password', { format, body: { token: link.token, password: 'short' } });
        assert.deepEqual([short.status, short.body.type], [400, 'request-coercion']);
        const reset = await t.client('POST', '/api/account/reset-password', { format, body: { token: link.token, password: NEW_PASSWORD } });
        assert.equal(reset.status, 204, reset.text);

        for (const old of [before1, before2]) {
          assert.equal((await t.client('GET', '/api/account/me', { headers: bearer(old.access) })).status, 401, 'old access tokens die');
          assert.equal((await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': old.refresh } })).status, 401);
        }
        assert.equal((await logIn(t.client, email)).status, 401, 'the old password no longer works');
        const after = await session(email, NEW_PASSWORD);
        const me = await t.client('GET', '/api/account/me', { headers: bearer(after.access) });
        assert.equal(me.body['email-verified'], true, 'the link reached the address: it is verified');

        const reused = await t.client('POST', '/api/account/reset-password', { format, body: { token: link.token, password: 'another passphrase' } });
        assert.deepEqual([reused.status, reused.body.type], [400, 'invalid-token']);
      });
    }

    it('limits forgot-password per email and per address, known email or not', async () => {
      const limited = await startSystem(db, { FORGOT_PASSWORD_LIMIT_EMAIL: '2/3600', FORGOT_PASSWORD_LIMIT_ADDRESS: '5/3600', TRUST_PROXY: '1' });
      try {
        const from = (address: string, email: string) =>
          limited.client('POST', '/api/account/forgot-password', { headers: { 'x-forwarded-for': address }, body: { email } });
        const { email } = await signUp(limited.client);
        const nobody = uniqueEmail('nobody');
        for (const target of [email, nobody]) {
          assert.equal((await from('198.51.100.1', target)).status, 202);
          assert.equal((await from('198.51.100.2', target.toUpperCase())).status, 202);
          const over = await from('198.51.100.3', target);
          assert.deepEqual([over.status, over.body.type], [429, 'rate-limited'], 'per email, whoever asks');
        }
        for (let i = 0; i < 5; i++) assert.equal((await from('198.51.100.9', uniqueEmail())).status, 202);
        assert.equal((await from('198.51.100.9', uniqueEmail())).status, 429, 'per address, whatever the email');
        await new Promise((r) => setTimeout(r, 100));
        assert.equal(await mailCount(limited.system, email, 'reset-password'), 2);
      } finally {
        await limited.stop();
      }
    });

    for (const format of ALL_FORMATS) {
      it(`changes the password, keeping the caller's session and ending the others, in ${format.name}`, async () => {
        const { email } = await signUp(t.client);
        const mine = await session(email);
        const other = await session(email);
        const wrong = await t.client('POST', '/api/account/change-password', {
          format,
          headers: bearer(mine.access),
          body: { 'current-password': 'not the password', password: NEW_PASSWORD },
        });
        assert.equal(wrong.status, 403, 'forbidden, not 401: the client would refresh and retry a 401');
        assert.equal(wrong.body.type, 'forbidden');
        assert.deepEqual(wrong.body.errors, [{ path: '/current-password', message: 'is wrong' }]);
        assert.equal((await t.client('GET', '/api/account/me', { headers: bearer(other.access) })).status, 200, 'nothing ended');

        const changed = await t.client('POST', '/api/account/change-password', {
          format,
          headers: bearer(mine.access),
          body: { 'current-password': PASSWORD, password: NEW_PASSWORD },
        });
        assert.equal(changed.status, 204, changed.text);
        assert.equal((await t.client('GET', '/api/account/me', { headers: bearer(mine.access) })).status, 200, 'the caller stays');
        assert.equal((await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': mine.refresh } })).status, 200);
        assert.equal((await t.client('GET', '/api/account/me', { headers: bearer(other.access) })).status, 401, 'the others end');
        assert.equal((await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': other.refresh } })).status, 401);
        assert.equal((await logIn(t.client, email, NEW_PASSWORD)).status, 200);
        const [notice] = await t.system.mail.mailbox.list({ to: email, kind: 'password-changed-notice' });
        assert.ok(notice, 'a notice is emailed');
        assert.match(notice.text ?? '', /password .* was just changed/);
      });
    }

    it('retires a reset link mailed before a password change', async () => {
      const { email } = await signUp(t.client);
      assert.equal((await t.client('POST', '/api/account/forgot-password', { body: { email } })).status, 202);
      const link = await mailedLink(t.system, email, 'reset-password');
      const mine = await session(email);
      const changed = await t.client('POST', '/api/account/change-password', {
        headers: bearer(mine.access),
        body: { 'current-password': PASSWORD, password: NEW_PASSWORD },
      });
      assert.equal(changed.status, 204);
      const reset = await t.client('POST', '/api/account/reset-password', { body: { token: link.token, password: 'attacker passphrase' } });
      assert.deepEqual([reset.status, reset.body.type], [400, 'invalid-token']);
    });

    it('counts wrong current passwords like failed log-ins', async () => {
      const limited = await startSystem(db, { LOGIN_LIMIT_EMAIL: '3/900' });
      try {
        const { email } = await signUp(limited.client);
        const access = (await logIn(limited.client, email)).body['access-token'];
        const attempt = (current: string) =>
          limited.client('POST', '/api/account/change-password', {
            headers: bearer(access),
            body: { 'current-password': current, password: NEW_PASSWORD },
          });
        for (let i = 0; i < 3; i++) assert.equal((await attempt(`guess number ${i}`)).status, 403);
        const over = await attempt(PASSWORD);
        assert.deepEqual([over.status, over.body.type], [429, 'rate-limited'], 'even the right one, once the guesses are used up');
        assert.equal((await logIn(limited.client, email)).status, 429, 'and log-in shares the counter');
      } finally {
        await limited.stop();
      }
    });

    for (const format of ALL_FORMATS) {
      it(`changes the email once the new address confirms, in ${format.name}`, async () => {
        const { email, id } = await signUp(t.client);
        const { access } = await session(email);
        const newEmail = uniqueEmail('New.Address');
        const wrong = await t.client('POST', '/api/account/change-email', {
          format,
          headers: bearer(access),
          body: { password: 'wrong password', 'new-email': newEmail },
        });
        assert.deepEqual([wrong.status, wrong.body.type], [403, 'forbidden']);
        const taken = await signUp(t.client);
        const conflict = await t.client('POST', '/api/account/change-email', {
          format,
          headers: bearer(access),
          body: { password: PASSWORD, 'new-email': taken.email.toUpperCase() },
        });
        assert.deepEqual([conflict.status, conflict.body.type], [409, 'conflict']);
        const invalid = await t.client('POST', '/api/account/change-email', {
          format,
          headers: bearer(access),
          body: { password: PASSWORD, 'new-email': 'not an email' },
        });
        assert.deepEqual([invalid.status, invalid.body.type], [400, 'request-coercion']);
        const same = await t.client('POST', '/api/account/change-email', { format, headers: bearer(access), body: { password: PASSWORD, 'new-email': email } });
        assert.deepEqual([same.status, same.body.errors?.[0]?.path], [400, '/new-email']);

        const asked = await t.client('POST', '/api/account/change-email', {
          format,
          headers: bearer(access),
          body: { password: PASSWORD, 'new-email': newEmail },
        });
        assert.equal(asked.status, 202, asked.text);
        const link = await mailedLink(t.system, newEmail.toLowerCase(), 'confirm-email-change');
        assert.equal(link.url.pathname, '/confirm-email');
        const [notice] = await t.system.mail.mailbox.list({ to: email, kind: 'email-changed-notice' });
        assert.ok(notice?.text?.includes(newEmail.toLowerCase()), 'the old address is told');
        assert.equal((await t.client('GET', '/api/account/me', { headers: bearer(access) })).body.email, email, 'nothing changes before the confirmation');

        const confirmed = await t.client('POST', '/api/account/confirm-email', { format, body: { token: link.token } });
        assert.equal(confirmed.status, 200, confirmed.text);
        assert.deepEqual([confirmed.body.id, confirmed.body.email, confirmed.body['email-verified']], [id, newEmail.toLowerCase(), true]);
        assert.equal((await logIn(t.client, newEmail)).status, 200);
        assert.equal((await logIn(t.client, email)).status, 401);
        const reused = await t.client('POST', '/api/account/confirm-email', { format, body: { token: link.token } });
        assert.deepEqual([reused.status, reused.body.type], [400, 'invalid-token']);
      });
    }

    it('answers 409 when the new address was taken before the confirmation, and only the latest request confirms', async () => {
      const { email } = await signUp(t.client);
      const { access } = await session(email);
      const first = uniqueEmail('first');
      const second = uniqueEmail('second');
      for (const target of [first, second]) {
        assert.equal(
          (await t.client('POST', '/api/account/change-email', { headers: bearer(access), body: { password: PASSWORD, 'new-email': target } })).status,
          202,
        );
      }
      const superseded = await mailedLink(t.system, first, 'confirm-email-change');
      assert.equal((await t.client('POST', '/api/account/confirm-email', { body: { token: superseded.token } })).body.type, 'invalid-token');

      const link = await mailedLink(t.system, second, 'confirm-email-change');
      await signUp(t.client, second);
      const late = await t.client('POST', '/api/account/confirm-email', { body: { token: link.token } });
      assert.deepEqual([late.status, late.body.type], [409, 'conflict']);
      assert.equal((await t.client('GET', '/api/account/me', { headers: bearer(access) })).body.email, email);
    });

    for (const format of ALL_FORMATS) {
      it(`updates the name with PATCH /api/account/me, in ${format.name}`, async () => {
        const { email } = await signUp(t.client);
        const { access } = await session(email);
        const named = await t.client('PATCH', '/api/account/me', { format, headers: bearer(access), body: { name: 'Renamed' } });
        assert.equal(named.status, 200, named.text);
        assert.equal(named.body.name, 'Renamed');
        const trimmed = await t.client('PATCH', '/api/account/me', { format, headers: bearer(access), body: { name: '  Ann  ' } });
        assert.equal(trimmed.body.name, 'Ann');
        for (const clearing of [null, '', '   ']) {
          await t.client('PATCH', '/api/account/me', { format, headers: bearer(access), body: { name: 'Someone' } });
          const cleared = await t.client('PATCH', '/api/account/me', { format, headers: bearer(access), body: { name: clearing } });
          assert.deepEqual([cleared.status, cleared.body.name], [200, null], JSON.stringify(clearing));
        }
        for (const body of [{ name: 'x'.repeat(101) }, { email: 'a@b.example' }, {}]) {
          const res = await t.client('PATCH', '/api/account/me', { format, headers: bearer(access), body });
          assert.deepEqual([res.status, res.body.type], [400, 'request-coercion']);
        }
        // a nullable field too long: one entry, the string's own reason (not also "must be null")
        const long = await t.client('PATCH', '/api/account/me', { format, headers: bearer(access), body: { name: 'x'.repeat(101) } });
        assert.deepEqual(
          long.body.errors.map((e: { path: string; message: string }) => [e.path, e.message]),
          [['/name', 'must NOT have more than 100 characters']],
          long.text,
        );
        assert.equal((await t.client('PATCH', '/api/account/me', { format, body: { name: 'x' } })).status, 401);
      });
    }

    it('requires the CSRF token on cookie-bearing unsafe lifecycle requests', async () => {
      const { email } = await signUp(t.client);
      const login = await logIn(t.client, email);
      const refreshCookie = `refresh-token=${cookiesOf(login)['refresh-token'].value}`;
      const access = login.body['access-token'];
      const routes: Array<[string, string, unknown]> = [
        ['PATCH', '/api/account/me', { name: 'x' }],
        ['POST', '/api/account/change-password', { 'current-password': PASSWORD, password: NEW_PASSWORD }],
        ['POST', '/api/account/delete', { password: PASSWORD }],
        ['POST', '/api/account/forgot-password', { email }],
      ];
      for (const [method, path, body] of routes) {
        const res = await t.client(method, path, { headers: { ...bearer(access), cookie: refreshCookie }, body });
        assert.deepEqual([res.status, res.body.reason], [403, 'csrf'], `${method} ${path}`);
      }
      const { cookie, csrf } = await browserSession(t.client);
      const ok = await t.client('PATCH', '/api/account/me', {
        headers: { ...bearer(access), cookie: `${cookie}; ${refreshCookie}`, 'x-csrf-token': csrf },
        body: { name: 'With token' },
      });
      assert.equal(ok.status, 200, ok.text);
      const cross = await t.client('POST', '/api/account/forgot-password', { headers: { origin: 'https://evil.example' }, body: { email } });
      assert.deepEqual([cross.status, cross.body.reason], [403, 'origin']);
    });

    it('never logs a link token, a link or a password of these routes', async () => {
      const { email } = await signUp(t.client);
      const verify = await mailedLink(t.system, email, 'verify-email');
      await t.client('POST', '/api/account/verify-email', { body: { token: verify.token } });
      await t.client('POST', '/api/account/forgot-password', { body: { email } });
      const reset = await mailedLink(t.system, email, 'reset-password');
      await t.client('POST', '/api/account/reset-password', { body: { token: reset.token, password: NEW_PASSWORD } });
      const { access } = await session(email, NEW_PASSWORD);
      const newEmail = uniqueEmail('logged');
      await t.client('POST', '/api/account/change-email', { headers: bearer(access), body: { password: NEW_PASSWORD, 'new-email': newEmail } });
      const confirm = await mailedLink(t.system, newEmail, 'confirm-email-change');
      await t.client('POST', '/api/account/confirm-email', { body: { token: confirm.token } });
      await t.client('POST', '/api/account/change-password', {
        headers: bearer(access),
        body: { 'current-password': NEW_PASSWORD, password: 'third passphrase here' },
      });
      // a token in a URL, as a browser might send one
      await t.client('GET', `/api/account/verify-email?token=${verify.token}`);

      const text = await t.logText();
      for (const secret of [verify.token, reset.token, confirm.token, NEW_PASSWORD, 'third passphrase here', PASSWORD]) {
        assert.ok(!text.includes(secret), `the log does not contain ${secret.slice(0, 6)}…`);
      }
      const entries = await t.logEntries();
      const params = entries.filter((e) => JSON.stringify(e).includes('/api/account/reset-password'));
      assert.ok(params.length > 0, 'the requests were logged (at trace)');
      assert.ok(text.includes('[REDACTED]'));
    });
  });
}
