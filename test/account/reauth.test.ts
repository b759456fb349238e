/**
 * Re-authentication on every sensitive route (docs/sign-in.md, "Re-authentication"):
 * the password for an account with one, a sign-in within 10 minutes for one without (access
 * tokens minted with an old `auth_time`); backup-code regeneration; the security notices of
 * two-factor and backup codes, queued with the change. One system per database.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { claimsOf, logIn, mintAccessToken, PASSWORD, signUpVerified } from '../support/auth.js';
import { mailCount } from '../support/mailbox.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { awayFromStepEdge, totpCode } from '../support/totp.js';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const now = () => Math.floor(Date.now() / 1000);

/** Every sensitive route: method, path, and a body that is otherwise acceptable (without the password). */
const SENSITIVE: Array<[string, string, Record<string, unknown>, string]> = [
  ['POST', '/api/account/change-email', { 'new-email': 'someone-new@example.com' }, 'password'],
  ['POST', '/api/account/2fa/enable', { code: '000000' }, 'password'],
  ['POST', '/api/account/2fa/disable', { code: '000000' }, 'password'],
  ['POST', '/api/account/2fa/backup-codes', { code: '000000' }, 'password'],
  ['POST', '/api/account/passkeys/register/options', {}, 'password'],
  ['DELETE', `/api/account/passkeys/${randomUUID()}`, {}, 'password'],
  ['DELETE', `/api/account/identities/${randomUUID()}`, {}, 'password'],
  // last but one: it changes the password; last: it deletes the account
  ['POST', '/api/account/change-password', { password: 'a brand new passphrase' }, 'current-password'],
  ['POST', '/api/account/delete', {}, 'password'],
];

for (const db of testDatabases()) {
  describe(`Re-authentication on ${db.name}`, () => {
    let t: TestSystem;
    before(async () => {
      // wrong passwords here are many on purpose: the log-in failure limits have their own tests
      t = await startSystem(db, { LOGIN_LIMIT_EMAIL: '0', LOGIN_LIMIT_ADDRESS: '0' });
    });
    after(async () => t?.stop());

    const session = async () => {
      const account = await signUpVerified(t);
      const res = await logIn(t.client, account.email);
      assert.equal(res.status, 200, res.text);
      const access = res.body['access-token'] as string;
      return { ...account, access, sid: claimsOf(access).sid as string };
    };

    it('every sensitive route asks an account with a password for it, and refuses a wrong one', async () => {
      const a = await session();
      let password = PASSWORD;
      for (const [method, path, body, field] of SENSITIVE) {
        const missing = await t.client(method, path, { headers: bearer(a.access), body });
        assert.deepEqual(
          [missing.status, missing.body.type, missing.body.method],
          [403, 'reauthentication-required', 'password'],
          `${method} ${path} without the password`,
        );
        assert.equal(missing.body.errors?.[0].path, `/${field}`);
        const wrong = await t.client(method, path, { headers: bearer(a.access), body: { ...body, [field]: 'not the password' } });
        assert.deepEqual([wrong.status, wrong.body.type], [403, 'forbidden'], `${method} ${path} with a wrong password`);
        const right = await t.client(method, path, { headers: bearer(a.access), body: { ...body, [field]: password } });
        assert.notEqual(right.body?.type, 'reauthentication-required', `${method} ${path} with the password passes the gate`);
        assert.notEqual(right.body?.type, 'forbidden', `${method} ${path} with the password passes the gate`);
        if (path === '/api/account/change-password') {
          assert.equal(right.status, 204, right.text);
          password = body.password as string;
        }
        if (path === '/api/account/delete') assert.equal(right.status, 204, 'and the account is gone');
      }
      const doc = (await t.client('GET', '/openapi/openapi.json')).body;
      const paths = [
        '/api/account/change-password',
        '/api/account/change-email',
        '/api/account/2fa/enable',
        '/api/account/2fa/disable',
        '/api/account/2fa/backup-codes',
        '/api/account/passkeys/register/options',
        '/api/account/delete',
        '/api/auth/oauth/{provider}/link',
      ];
      for (const p of paths) assert.ok(doc.paths[p].post['x-reauthentication'], `${p} documents its re-authentication`);
      for (const p of ['/api/account/passkeys/{id}', '/api/account/identities/{id}']) assert.ok(doc.paths[p].delete['x-reauthentication'], `DELETE ${p}`);
    });

    it('an account without a password needs a sign-in within the last 10 minutes', async () => {
      const a = await session();
      await t.system.database.db.updateTable('account').set({ password_hash: null }).where('id', '=', a.id).execute();
      const old = await mintAccessToken(t.system, { id: a.id, email: a.email, sessionId: a.sid, authTime: now() - 11 * 60 });
      const recent = await mintAccessToken(t.system, { id: a.id, email: a.email, sessionId: a.sid, authTime: now() - 60 });
      for (const [method, path, body] of SENSITIVE) {
        const stale = await t.client(method, path, { headers: bearer(old), body: { ...body, password: 'anything' } });
        assert.deepEqual(
          [stale.status, stale.body.type, stale.body.method, stale.body['max-age']],
          [403, 'reauthentication-required', 'recent-sign-in', 600],
          `${method} ${path} long after the sign-in`,
        );
        if (path === '/api/account/delete' || path === '/api/account/change-password') continue;
        const fresh = await t.client(method, path, { headers: bearer(recent), body });
        assert.notEqual(fresh.body?.type, 'reauthentication-required', `${method} ${path} right after a sign-in`);
      }
      // its first password, set after a recent sign-in without any current one
      const first = await t.client('POST', '/api/account/change-password', { headers: bearer(recent), body: { password: 'a first passphrase here' } });
      assert.equal(first.status, 204, first.text);
      assert.equal((await logIn(t.client, a.email, 'a first passphrase here')).status, 200);
      const nowWithPassword = await t.client('POST', '/api/account/delete', { headers: bearer(recent), body: {} });
      assert.deepEqual([nowWithPassword.status, nowWithPassword.body.method], [403, 'password'], 'from then on the password is asked');
    });

    it('regenerates backup codes with a current code only; the old ones stop working; each change is told by email', async () => {
      const a = await session();
      const setup = await t.client('POST', '/api/account/2fa/setup', { headers: bearer(a.access), body: {} });
      await awayFromStepEdge();
      const enabled = await t.client('POST', '/api/account/2fa/enable', {
        headers: bearer(a.access),
        body: { code: totpCode(setup.body.secret, -1), password: PASSWORD },
      });
      assert.equal(enabled.status, 200, enabled.text);
      const oldCodes = enabled.body['backup-codes'] as string[];
      assert.equal(await mailCount(t.system, a.email, 'security-notice'), 1, 'two-factor on is told');

      const regenerate = (body: Record<string, unknown>) =>
        t.client('POST', '/api/account/2fa/backup-codes', { headers: bearer(a.access), body: { password: PASSWORD, ...body } });
      const withBackup = await regenerate({ code: oldCodes[0] });
      assert.deepEqual([withBackup.status, withBackup.body.errors?.[0].path], [403, '/code'], 'a backup code does not mint more');
      assert.equal((await regenerate({ 'backup-code': oldCodes[0] })).status, 400);
      const fresh = await regenerate({ code: totpCode(setup.body.secret) });
      assert.equal(fresh.status, 200, fresh.text);
      const newCodes = fresh.body['backup-codes'] as string[];
      assert.equal(newCodes.length, 10);
      assert.equal(newCodes.filter((c) => oldCodes.includes(c)).length, 0);
      const replay = await regenerate({ code: totpCode(setup.body.secret) });
      assert.equal(replay.status, 403, 'a used code is refused');

      const mfaToken = async () => (await logIn(t.client, a.email)).body['mfa-token'] as string;
      const oldOne = await t.client('POST', '/api/account/log-in/mfa', { body: { 'mfa-token': await mfaToken(), 'backup-code': oldCodes[1] } });
      assert.equal(oldOne.status, 401, 'the old codes are void');
      const newOne = await t.client('POST', '/api/account/log-in/mfa', { body: { 'mfa-token': await mfaToken(), 'backup-code': newCodes[0] } });
      assert.equal(newOne.status, 200, newOne.text);

      // (the log-ins above came without the device cookie: new browsers, told too, test/account/new-browser.test.ts)
      const notices = (await t.system.mail.mailbox.list({ to: a.email, kind: 'security-notice', limit: 10 })).filter((n) => !/New sign-in/.test(n.subject));
      assert.deepEqual(
        notices
          .map((n) => n.subject)
          .reverse()
          .map((s) => (/backup codes/i.test(s) ? 'codes' : /turned on/.test(s) ? 'on' : s)),
        ['on', 'codes'],
      );
      assert.match(notices[0].text ?? '', /\/sessions/, 'says where to look if it was not the owner');
      assert.match(notices[0].text ?? '', /127\.0\.0\.1/, 'and from which address');
      const actions = await t.system.database.db.selectFrom('audit_entry').select('action').where('account_id', '=', a.id).execute();
      assert.ok(actions.some((e) => e.action === 'account.backup-codes-regenerated'));

      const off = await t.client('POST', '/api/account/2fa/backup-codes', {
        headers: bearer((await session()).access),
        body: { password: PASSWORD, code: '123456' },
      });
      assert.equal(off.status, 409, 'two-factor off: nothing to regenerate');
    });
  });
}
