/**
 * Account pre-hijacking (issue 25, item 1): someone signs up with another person's address and
 * never verifies it. They cannot add a lasting way in (two-factor, a passkey, a provider link,
 * an API key: 403 `email-not-verified`); and what an account holds from before that rule is
 * removed when the owner first proves the address (a reset link, a verification link), in the
 * proof's transaction, the owner told by email what went. On both databases.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { accountModule } from '../../src/account/module.js';
import { PASSWORD, cookiesOf, logIn, signUp, uniqueEmail } from '../support/auth.js';
import { mailedLink } from '../support/mailbox.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { awayFromStepEdge, totpCode } from '../support/totp.js';
import { SoftwareAuthenticator } from '../support/webauthn.js';

const APP_URL = 'https://app.example.com';
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const NEW_PASSWORD = "the owner's own passphrase";
/** an address of ADMIN_EMAILS: a squatter keeping its password there would be a platform admin once the owner proves it */
const ADMIN = uniqueEmail('platform-owner');

for (const db of testDatabases()) {
  describe(`Account pre-hijacking on ${db.name}`, () => {
    let t: TestSystem;
    before(async () => {
      t = await startSystem(db, { APP_URL, ADMIN_EMAILS: ADMIN });
    });
    after(async () => t?.stop());

    const personalOrg = async (token: string) => {
      const orgs = await t.client('GET', '/api/orgs', { headers: bearer(token) });
      return (orgs.body.organizations as Array<{ id: string; personal: boolean }>).find((o) => o.personal)!.id;
    };
    const setVerified = (id: string, verified: boolean) =>
      t.system.database.db.updateTable('account').set({ email_verified: verified }).where('id', '=', id).execute();

    /**
     * A squatter's account on `email` holding every kind of credential, as an account made
     * before the rule could: the address is marked verified for the set-up, then unverified again.
     */
    const squat = async (email: string) => {
      const { id } = await signUp(t.client, email);
      const login = await logIn(t.client, email);
      const access = login.body['access-token'] as string;
      const refresh = login.body['refresh-token'] as string;
      await setVerified(id, true);
      const authenticator = new SoftwareAuthenticator({ origin: APP_URL });
      const options = await t.client('POST', '/api/account/passkeys/register/options', { headers: bearer(access), body: { password: PASSWORD } });
      const passkey = await t.client('POST', '/api/account/passkeys/register/verify', {
        headers: bearer(access),
        body: { response: authenticator.register(options.body) },
      });
      assert.equal(passkey.status, 201, passkey.text);
      const setup = await t.client('POST', '/api/account/2fa/setup', { headers: bearer(access), body: {} });
      await awayFromStepEdge();
      const enabled = await t.client('POST', '/api/account/2fa/enable', {
        headers: bearer(access),
        body: { code: totpCode(setup.body.secret), password: PASSWORD },
      });
      assert.equal(enabled.status, 200, enabled.text);
      const key = await t.client('POST', `/api/orgs/${await personalOrg(access)}/api-keys`, {
        headers: bearer(access),
        body: { name: 'squatter', role: 'admin' },
      });
      assert.equal(key.status, 201, key.text);
      // a provider identity (what linking leaves behind) and a pending move of the address to the squatter's
      await t.system.database.db.insertInto('account_identity').values({ account_id: id, provider: 'acme', subject: randomUUID(), email: null }).execute();
      const move = await t.client('POST', '/api/account/change-email', {
        headers: bearer(access),
        body: { password: PASSWORD, 'new-email': uniqueEmail('squatter') },
      });
      assert.equal(move.status, 202, move.text);
      await setVerified(id, false);
      return { id, access, refresh, authenticator, apiKey: key.body.key as string, orgId: await personalOrg(access), moveTo: move.body };
    };

    const passkeySignIn = async (authenticator: SoftwareAuthenticator) => {
      const options = await t.client('POST', '/api/auth/passkey/options', { body: {} });
      return t.client('POST', '/api/auth/passkey/verify', {
        body: { 'challenge-id': options.body['challenge-id'], response: authenticator.assert(options.body.options) },
      });
    };

    it('refuses every lasting credential to an unverified account: 403 email-not-verified', async () => {
      const email = uniqueEmail('victim');
      const { id } = await signUp(t.client, email);
      const access = (await logIn(t.client, email)).body['access-token'] as string;
      const attempts: Array<[string, unknown]> = [
        ['/api/account/2fa/setup', {}],
        ['/api/account/2fa/enable', { code: '123456', password: PASSWORD }],
        ['/api/account/passkeys/register/options', { password: PASSWORD }],
        [
          '/api/account/passkeys/register/verify',
          {
            response: new SoftwareAuthenticator({ origin: APP_URL }).register({
              challenge: 'AAAA',
              rp: { id: 'app.example.com', name: 'App' },
              user: { id: 'AAAA', name: 'someone' },
            }),
          },
        ],
        [`/api/orgs/${await personalOrg(access)}/api-keys`, { name: 'k', role: 'admin' }],
      ];
      for (const [path, body] of attempts) {
        const res = await t.client('POST', path, { headers: bearer(access), body });
        assert.deepEqual([res.status, res.body.type], [403, 'email-not-verified'], `${path}: ${res.text}`);
      }
      for (const table of ['totp_credential', 'passkey', 'webauthn_challenge'] as const) {
        assert.equal((await t.system.database.db.selectFrom(table).select('account_id').where('account_id', '=', id).execute()).length, 0, table);
      }
      const doc = (await t.client('GET', '/openapi/openapi.json')).body;
      assert.equal(doc.paths['/api/account/2fa/setup'].post['x-verified-email'], true, 'the rule is route data, in the document');
    });

    it('removes every credential added before the first proof when the owner resets the password, and says what in an email', async () => {
      const email = uniqueEmail('owner');
      const squatter = await squat(email);
      assert.equal((await passkeySignIn(squatter.authenticator)).status, 200, "before the proof the squatter's passkey signs in");

      // the owner: "email taken", so forgot-password, then the link
      assert.equal((await t.client('POST', '/api/account/sign-up', { body: { email, password: NEW_PASSWORD } })).status, 409);
      assert.equal((await t.client('POST', '/api/account/forgot-password', { body: { email } })).status, 202);
      const { token } = await mailedLink(t.system, email, 'reset-password');
      const reset = await t.client('POST', '/api/account/reset-password', { body: { token, password: NEW_PASSWORD } });
      assert.equal(reset.status, 204, reset.text);

      assert.equal((await passkeySignIn(squatter.authenticator)).status, 401, 'the passkey signs nobody in');
      const withKey = await t.client('GET', `/api/orgs/${squatter.orgId}`, { headers: bearer(squatter.apiKey) });
      assert.equal(withKey.status, 401, 'the API key is revoked');
      assert.equal((await t.client('GET', '/api/account/export', { headers: bearer(squatter.access) })).status, 401, 'the session ended');
      assert.equal((await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': squatter.refresh } })).status, 401);
      const owner = await logIn(t.client, email, NEW_PASSWORD);
      assert.equal(owner.status, 200, owner.text);
      assert.ok(owner.body['access-token'], "no second factor is asked: the squatter's two-factor is gone");
      assert.equal(owner.body.account['email-verified'], true);
      assert.equal(owner.body.account['two-factor-enabled'], false);
      const db = t.system.database.db;
      for (const table of ['passkey', 'account_identity', 'totp_credential', 'backup_code'] as const) {
        assert.equal((await db.selectFrom(table).select('account_id').where('account_id', '=', squatter.id).execute()).length, 0, table);
      }
      const moves = await db
        .selectFrom('action_token')
        .select('id')
        .where('account_id', '=', squatter.id)
        .where('purpose', '=', 'email-change')
        .where('used_at', 'is', null)
        .execute();
      assert.equal(moves.length, 0, 'the pending move of the address is void');

      const [notice] = await t.system.mail.mailbox.list({ to: email, kind: 'credentials-removed-notice' });
      assert.ok(notice, 'the owner is told');
      for (const line of [
        '1 passkey',
        'sign-in through acme',
        'two-factor authentication',
        '1 API key',
        "a pending change of the account's address",
        'signed-in session',
      ]) {
        assert.ok(notice.text?.includes(line), `the notice names ${line}: ${notice.text}`);
      }
      assert.match(notice.text ?? '', /by resetting the password/);
      const entry = await db
        .selectFrom('audit_entry')
        .select(['details'])
        .where('account_id', '=', squatter.id)
        .where('action', '=', 'account.credentials-removed')
        .executeTakeFirstOrThrow();
      // the squatter's log-in and its passkey sign-in
      assert.deepEqual(entry.details, {
        via: 'password-reset',
        password: false,
        passkeys: 1,
        identities: 1,
        'two-factor': true,
        'api-keys': 1,
        'email-change': true,
        sessions: 2,
      });
      const revoked = await db
        .selectFrom('audit_entry')
        .select('details')
        .where('action', '=', 'api-key.revoked')
        .where('account_id', '=', squatter.id)
        .executeTakeFirstOrThrow();
      assert.equal(revoked.details.reason, 'address-proven');

      // a second reset is no first proof: nothing more to remove, no second notice
      await t.client('POST', '/api/account/forgot-password', { body: { email } });
      let again: string | undefined;
      for (let i = 0; i < 150 && !again; i++) {
        const links = await t.system.mail.mailbox.list({ to: email, kind: 'reset-password' });
        if (links.length === 2) again = new URL(/https?:\/\/\S+\?token=\S+/.exec(links[0].text ?? '')![0]).searchParams.get('token')!;
        else await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.ok(again, 'a second reset link');
      assert.equal((await t.client('POST', '/api/account/reset-password', { body: { token: again, password: PASSWORD } })).status, 204);
      assert.equal((await t.system.mail.mailbox.list({ to: email, kind: 'credentials-removed-notice' })).length, 1);
    });

    /** The newest email sign-in message to `email`: its link's token and its code. */
    const emailSignInMessage = async (email: string) => {
      assert.equal((await t.client('POST', '/api/auth/email/start', { body: { email } })).status, 202);
      await t.system.services(accountModule).emailSignIn.settle();
      const { token } = await mailedLink(t.system, email, 'email-sign-in');
      const [message] = await t.system.mail.mailbox.list({ to: email, kind: 'email-sign-in', limit: 1 });
      const code = /code[^\d]*(\d{6})/.exec(message.text ?? '')?.[1];
      assert.ok(code, 'the message has a code');
      return { token, code };
    };

    for (const form of ['code', 'link'] as const) {
      it(`removes the squatter's password when the owner first signs in by email ${form}; the answer lets the owner set one`, async () => {
        const email = uniqueEmail(`owner-${form}`);
        const squatter = await signUp(t.client, email);
        assert.equal((await logIn(t.client, email)).status, 200, "before the proof the squatter's password signs in");
        const message = await emailSignInMessage(email);
        const signedIn = await t.client('POST', '/api/auth/email/verify', { body: form === 'code' ? { email, code: message.code } : { token: message.token } });
        assert.equal(signedIn.status, 200, signedIn.text);
        assert.equal(signedIn.body.account['email-verified'], true);
        assert.equal((await logIn(t.client, email)).status, 401, "the squatter's password is gone");
        const row = await t.system.database.db.selectFrom('account').select('password_hash').where('id', '=', squatter.id).executeTakeFirstOrThrow();
        assert.equal(row.password_hash, null);
        const [notice] = await t.system.mail.mailbox.list({ to: email, kind: 'credentials-removed-notice' });
        assert.match(notice?.text ?? '', /• the password/);
        const entry = await t.system.database.db
          .selectFrom('audit_entry')
          .select('details')
          .where('account_id', '=', squatter.id)
          .where('action', '=', 'account.credentials-removed')
          .executeTakeFirstOrThrow();
        assert.equal(entry.details.password, true);
        // the page the sign-in lands on sets a password at once, as a reset link does
        const token = signedIn.body['password-reset-token'];
        assert.equal(typeof token, 'string');
        assert.equal((await t.client('POST', '/api/account/reset-password', { body: { token, password: NEW_PASSWORD } })).status, 204);
        assert.equal((await logIn(t.client, email, NEW_PASSWORD)).status, 200);
        // a later email sign-in is no first proof: the owner's password stays, no token
        const later = await emailSignInMessage(email);
        const again = await t.client('POST', '/api/auth/email/verify', { body: { token: later.token } });
        assert.equal(again.status, 200, again.text);
        assert.equal(again.body['password-reset-token'], undefined);
        assert.equal((await logIn(t.client, email, NEW_PASSWORD)).status, 200);
      });
    }

    it('leaves the squatter of an ADMIN_EMAILS address no way in once the owner signs in by email', async () => {
      const squatter = await signUp(t.client, ADMIN);
      const before = await logIn(t.client, ADMIN);
      assert.equal(before.body.account['platform-admin'], false, 'unverified: not an admin yet');
      const { code } = await emailSignInMessage(ADMIN);
      const owner = await t.client('POST', '/api/auth/email/verify', { body: { email: ADMIN, code } });
      assert.equal(owner.status, 200, owner.text);
      assert.equal(owner.body.account['platform-admin'], true, 'the owner is the admin');
      assert.equal((await logIn(t.client, ADMIN)).status, 401, "the squatter's password does not make it one");
      assert.equal((await t.client('GET', '/api/account/me', { headers: bearer(before.body['access-token']) })).status, 401, 'its session ended');
      assert.equal(
        (await t.client('GET', '/api/admin/stats', { headers: bearer(owner.body['access-token']) })).status,
        200,
        "the owner's session is the admin's",
      );
      assert.equal(squatter.id, owner.body.account.id);
    });

    it('removes them on the verification link too; the session that opened it stays', async () => {
      const email = uniqueEmail('verifier');
      const squatter = await squat(email);
      // the link went to the address: its owner opens it, signed out
      const { token } = await mailedLink(t.system, email, 'verify-email');
      const verified = await t.client('POST', '/api/account/verify-email', { body: { token } });
      assert.equal(verified.status, 200, verified.text);
      assert.equal(verified.body['email-verified'], true);
      assert.equal((await passkeySignIn(squatter.authenticator)).status, 401);
      assert.equal((await t.client('GET', `/api/orgs/${squatter.orgId}`, { headers: bearer(squatter.apiKey) })).status, 401);
      assert.equal((await t.client('GET', '/api/account/me', { headers: bearer(squatter.access) })).status, 401, 'every session ended');
      const [notice] = await t.system.mail.mailbox.list({ to: email, kind: 'credentials-removed-notice' });
      assert.match(notice?.text ?? '', /through the verification link/);
      // opened with no session of the account: the squatter's password goes too, and the page can set a new one
      assert.match(notice?.text ?? '', /the password/);
      assert.equal((await logIn(t.client, email)).status, 401, 'the password set before the proof signs nobody in');
      assert.ok(verified.body['password-reset-token'], 'the answer carries a reset token');
      assert.equal(
        (await t.client('POST', '/api/account/reset-password', { body: { token: verified.body['password-reset-token'], password: NEW_PASSWORD } })).status,
        204,
      );
      assert.equal((await logIn(t.client, email, NEW_PASSWORD)).status, 200, 'the owner set a password at once');

      // an ordinary sign-up opening its own link in the browser it signed in with keeps that session
      const ann = uniqueEmail('ann');
      await signUp(t.client, ann);
      const here = await logIn(t.client, ann);
      const elsewhere = await logIn(t.client, ann);
      const link = await mailedLink(t.system, ann, 'verify-email');
      const page = await t.client('GET', '/', { headers: { accept: 'text/html' } });
      const csrf = /id="__anti-forgery-token" value="([^"]+)"/.exec(page.text)![1];
      const cookie = `session=${cookiesOf(page).session.value}; refresh-token=${here.body['refresh-token']}`;
      const opened = await t.client('POST', '/api/account/verify-email', { headers: { cookie, 'x-csrf-token': csrf }, body: { token: link.token } });
      assert.equal(opened.status, 200, opened.text);
      assert.equal(
        (await t.client('GET', '/api/account/me', { headers: bearer(here.body['access-token']) })).status,
        200,
        'the browser that opened the link stays signed in',
      );
      assert.equal(
        (await t.client('GET', '/api/account/me', { headers: bearer(elsewhere.body['access-token']) })).status,
        401,
        'a session from before the proof ends',
      );
      const [annNotice] = await t.system.mail.mailbox.list({ to: ann, kind: 'credentials-removed-notice' });
      assert.match(annNotice?.text ?? '', /1 other signed-in session/);
      assert.doesNotMatch(annNotice?.text ?? '', /the password/);
      assert.equal(opened.body['password-reset-token'], undefined, 'the password stays: whoever set it holds the address');
      assert.equal((await logIn(t.client, ann)).status, 200);
    });
  });
}
