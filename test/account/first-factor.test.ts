/**
 * The one place every first factor passes (docs/sign-in.md "How the methods compose"): the
 * policies registered with `useFirstFactorPolicy` on the account module's services are asked
 * with the account and the method after the factor succeeded and before a session or a second
 * step is issued; an HttpError they throw is the answer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountModule } from '../../src/account/module.js';
import { forbidden } from '../../src/http/errors.js';
import type { FirstFactorMethod } from '../../src/account/service.js';
import { cookiesOf, logIn, PASSWORD, signUpVerified } from '../support/auth.js';
import { mailedLink } from '../support/mailbox.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

for (const db of testDatabases()) {
  describe(`First-factor policies on ${db.name}`, () => {
    let t: TestSystem;
    const asked: Array<{ id: string; email: string; method: FirstFactorMethod }> = [];
    let refuse: string | undefined;
    before(async () => {
      t = await startSystem(db, { LOGIN_LIMIT_EMAIL: '0' });
      t.system.services(accountModule).useFirstFactorPolicy(async (account, method) => {
        asked.push({ ...account, method });
        if (account.email === refuse && method !== 'email-link')
          throw forbidden('This organization signs in with its single sign-on', { reason: 'sso-required' });
      });
    });
    after(async () => t?.stop());

    it('asks every policy with the account and the method; a refusal leaves no session and no second step', async () => {
      // verified: the email link below is then no first proof (which would remove the password)
      const account = await signUpVerified(t);
      asked.length = 0;
      assert.equal((await logIn(t.client, account.email)).status, 200);
      assert.deepEqual(asked, [{ id: account.id, email: account.email, method: 'password' }]);
      assert.equal((await logIn(t.client, account.email, 'wrong password')).status, 401);
      assert.equal(asked.length, 1, 'not asked for a factor that failed');

      refuse = account.email;
      const refused = await logIn(t.client, account.email);
      assert.deepEqual([refused.status, refused.body.reason], [403, 'sso-required']);
      assert.equal(refused.body['access-token'], undefined);
      assert.equal(cookiesOf(refused)['refresh-token'], undefined, 'no session');

      // an email link is asked as `email-link` (this policy lets it through)
      assert.equal((await t.client('POST', '/api/auth/email/start', { body: { email: account.email } })).status, 202);
      await t.system.services(accountModule).emailSignIn.settle();
      const { token } = await mailedLink(t.system, account.email, 'email-sign-in');
      assert.equal((await t.client('POST', '/api/auth/email/verify', { body: { token } })).status, 200);
      assert.deepEqual(asked.at(-1), { id: account.id, email: account.email, method: 'email-link' });
      refuse = undefined;
      assert.equal((await logIn(t.client, account.email, PASSWORD)).status, 200);
    });
  });
}
