/**
 * The notice of a sign-in from a new browser (docs/sign-in.md, "Security notices"):
 * the device cookie (signed, HttpOnly, long-lived) names the browser; an account's first sign-in
 * is not news, a later one from a browser it has not used is told by email (what, when, which
 * browser and address, where to look), whatever the first factor; a tampered cookie is a new
 * browser; a two-factor sign-in is told once it is complete.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountModule } from '../../src/account/module.js';
import { cookiesOf, PASSWORD, signUp } from '../support/auth.js';
import { mailedLink } from '../support/mailbox.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import type { TestResponse } from '../support/http.js';

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';

for (const db of testDatabases()) {
  describe(`New-browser notices on ${db.name}`, () => {
    let t: TestSystem;
    before(async () => {
      t = await startSystem(db, { LOGIN_LIMIT_EMAIL: '0' });
    });
    after(async () => t?.stop());

    const notices = async (email: string) =>
      (await t.system.mail.mailbox.list({ to: email, kind: 'security-notice', limit: 50 })).filter((m) => /New sign-in/.test(m.subject));
    const deviceOf = (res: TestResponse) => cookiesOf(res).device;
    const logInFrom = (email: string, device?: string) =>
      t.client('POST', '/api/account/log-in', {
        body: { email, password: PASSWORD },
        headers: { 'user-agent': FIREFOX, ...(device ? { cookie: `device=${device}` } : {}) },
      });

    it('the first sign-in is not news; a new browser is; a known one is not', async () => {
      const account = await signUp(t.client);
      const first = await logInFrom(account.email);
      assert.equal(first.status, 200, first.text);
      const cookie = deviceOf(first);
      assert.ok(cookie, 'the device cookie is set');
      assert.match(cookie.attributes, /HttpOnly/i);
      assert.match(cookie.attributes, /Max-Age=\d{8}/i, 'long-lived');
      assert.equal((await notices(account.email)).length, 0, "an account's very first sign-in");

      assert.equal((await logInFrom(account.email, cookie.value)).status, 200);
      assert.equal((await notices(account.email)).length, 0, 'the same browser again');

      const elsewhere = await logInFrom(account.email);
      assert.equal(elsewhere.status, 200);
      const [notice] = await notices(account.email);
      assert.ok(notice, 'a browser the account has not used');
      assert.match(notice.text ?? '', /Firefox on Linux/, 'which browser');
      assert.match(notice.text ?? '', /127\.0\.0\.1/, 'from which address');
      assert.match(notice.text ?? '', /UTC/, 'when');
      assert.match(notice.text ?? '', /\/settings\/sessions/, 'where to look if it was not the owner');

      const tampered = `${cookie.value.slice(0, -3)}abc`;
      assert.equal((await logInFrom(account.email, tampered)).status, 200);
      assert.equal((await notices(account.email)).length, 2, 'a tampered cookie is a new browser');
    });

    it("names the browser in the recipient's language, in the email and the notification; English as it was", async () => {
      const bodies = async (token: string) =>
        ((await t.client('GET', '/api/notifications', { headers: { authorization: `Bearer ${token}` } })).body.notifications as Array<{ body: string }>).map(
          (n) => n.body,
        );
      const english = await signUp(t.client);
      assert.equal((await logInFrom(english.email)).status, 200);
      const englishAgain = await logInFrom(english.email);
      assert.match((await bodies(englishAgain.body['access-token'])).join('\n'), /\(Firefox on Linux, 127\.0\.0\.1\)/);

      const email = `de-${english.email}`;
      const signedUp = await t.client('POST', '/api/account/sign-up', { headers: { 'accept-language': 'de' }, body: { email, password: PASSWORD } });
      assert.equal(signedUp.body.account.locale, 'de', signedUp.text);
      assert.equal((await logInFrom(email)).status, 200);
      const again = await logInFrom(email);
      assert.equal(again.status, 200);
      const [mail] = await t.system.mail.mailbox.list({ to: email, kind: 'security-notice', limit: 5 });
      assert.ok(mail, 'the notice went out');
      assert.match(mail.text ?? '', /über Firefox unter Linux von der Adresse 127\.0\.0\.1/);
      assert.doesNotMatch(mail.text ?? '', /Firefox on Linux/);
      const notes = (await bodies(again.body['access-token'])).join('\n');
      assert.match(notes, /\(Firefox unter Linux, 127\.0\.0\.1\)/);
      assert.doesNotMatch(notes, /Firefox on Linux/);
    });

    it('every first factor counts: an email sign-in from a new browser is told', async () => {
      const account = await signUp(t.client);
      assert.equal((await logInFrom(account.email)).status, 200);
      assert.equal((await t.client('POST', '/api/auth/email/start', { body: { email: account.email } })).status, 202);
      await t.system.services(accountModule).emailSignIn.settle();
      const { token } = await mailedLink(t.system, account.email, 'email-sign-in');
      const res = await t.client('POST', '/api/auth/email/verify', { body: { token } });
      assert.equal(res.status, 200, res.text);
      assert.ok(deviceOf(res));
      assert.equal((await notices(account.email)).length, 1);
    });
  });
}
