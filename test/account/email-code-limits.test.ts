/**
 * Email sign-in codes are counted per address across messages (issue 37, item 6): a message's
 * five wrong codes void it, and the address's wrong codes of all its messages are limited
 * (EMAIL_SIGN_IN_CODE_FAILURES, 20 a day): then 429 for codes, right ones included, while the
 * link still works. A right code does not count; concurrent guesses cannot pass the limit.
 * `/verify` is limited per client address (EMAIL_SIGN_IN_VERIFY_LIMIT_ADDRESS), links included.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountModule } from '../../src/account/module.js';
import { signUp } from '../support/auth.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { mailCount, mailedLink } from '../support/mailbox.js';

for (const db of testDatabases()) {
  describe(`Email sign-in code and verify limits on ${db.name}`, () => {
    let t: TestSystem;
    let limited: TestSystem;
    before(async () => {
      // the defaults of the code count; messages and client addresses not limited here
      t = await startSystem(db, { EMAIL_SIGN_IN_LIMIT_EMAIL: '0', EMAIL_SIGN_IN_LIMIT_ADDRESS: '0', EMAIL_SIGN_IN_VERIFY_LIMIT_ADDRESS: '0' });
      limited = await startSystem(db, { EMAIL_SIGN_IN_LIMIT_EMAIL: '0', EMAIL_SIGN_IN_LIMIT_ADDRESS: '0', EMAIL_SIGN_IN_VERIFY_LIMIT_ADDRESS: '4/900' });
    });
    after(async () => {
      await t?.stop();
      await limited?.stop();
    });

    /** Asks for a sign-in; the new message's link token and code. */
    const message = async (sys: TestSystem, email: string): Promise<{ token: string; code: string }> => {
      const count = await mailCount(sys.system, email, 'email-sign-in');
      assert.equal((await sys.client('POST', '/api/auth/email/start', { body: { email } })).status, 202);
      await sys.system.services(accountModule).emailSignIn.settle();
      for (let i = 0; i < 200 && (await mailCount(sys.system, email, 'email-sign-in')) === count; i++) await new Promise((r) => setTimeout(r, 20));
      const [newest] = await sys.system.mail.mailbox.list({ to: email, kind: 'email-sign-in', limit: 1 });
      const code = /code[^\d]*(\d{6})/.exec(newest.text ?? '')?.[1];
      assert.ok(code, 'the message has a code');
      return { token: (await mailedLink(sys.system, email, 'email-sign-in')).token, code };
    };
    const withCode = (sys: TestSystem, email: string, code: string) => sys.client('POST', '/api/auth/email/verify', { body: { email, code } });
    const withLink = (sys: TestSystem, token: string) => sys.client('POST', '/api/auth/email/verify', { body: { token } });
    const wrongFor = (code: string) => (code === '000000' ? '000001' : '000000');

    it('counts wrong codes across messages: the 21st code of the day is 429, the link still signs in', async () => {
      const { email } = await signUp(t.client);
      // four messages, five wrong codes each (each voids its message): 20
      for (let m = 0; m < 4; m++) {
        const { code } = await message(t, email);
        for (let i = 0; i < 5; i++) assert.equal((await withCode(t, email, wrongFor(code))).status, 401, `message ${m}, wrong code ${i}`);
      }
      const fifth = await message(t, email);
      const refused = await withCode(t, email, fifth.code);
      assert.deepEqual([refused.status, refused.body.type], [429, 'rate-limited'], 'the right code of a new message too: codes are done for the day');
      assert.match(refused.body.message, /link/);
      assert.ok(Number(refused.headers['retry-after']) > 0);
      const linked = await withLink(t, fifth.token);
      assert.equal(linked.status, 200, `the link still works: ${linked.text}`);
      // another address is not held
      const other = await signUp(t.client);
      assert.equal((await withCode(t, other.email, (await message(t, other.email)).code)).status, 200);
    });

    it('does not count right codes, and concurrent wrong guesses stop at the limit', async () => {
      const { email } = await signUp(t.client);
      for (let m = 0; m < 3; m++) {
        const { code } = await message(t, email);
        for (let i = 0; i < 4; i++) assert.equal((await withCode(t, email, wrongFor(code))).status, 401);
        assert.equal((await withCode(t, email, code)).status, 200, 'a right code signs in and is not counted');
      }
      // 12 wrong so far; 20 guesses at once: 8 are judged, the rest refused before any code is compared
      const { code } = await message(t, email);
      const answers = await Promise.all(Array.from({ length: 20 }, () => withCode(t, email, wrongFor(code))));
      const statuses = answers.map((a) => a.status).sort();
      assert.equal(statuses.filter((s) => s === 401).length, 8, statuses.join(','));
      assert.equal(statuses.filter((s) => s === 429).length, 12, statuses.join(','));
    });

    it('limits /verify per client address, links included', async () => {
      const { email } = await signUp(limited.client);
      const { token } = await message(limited, email);
      for (let i = 0; i < 4; i++) assert.equal((await withLink(limited, 'x'.repeat(43))).status, 400, `bad link ${i}`);
      const refused = await withLink(limited, token);
      assert.deepEqual([refused.status, refused.body.type], [429, 'rate-limited'], 'a good link from the same address waits too');
      assert.equal((await withCode(limited, email, '123456')).status, 429);
    });
  });
}
