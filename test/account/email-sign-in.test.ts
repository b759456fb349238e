/**
 * Email sign-in over HTTP (docs/sign-in.md, "Email sign-in"), one system per
 * database: the link and the code, single use and 15 minutes, the fifth wrong code voiding the
 * message, an unknown address made an account (EMAIL_SIGN_UP on) or sent nothing (off), the
 * address proven (what was added before removed), two-factor as the second step, the limits, the
 * same answer whatever the address, and no token or code in the log. The messages go through a
 * real SMTP server. Timing: the known and unknown answers run the same code before the answer
 * (the work is queued after it); compared with a generous median ratio, never a wall-clock bound.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { accountModule } from '../../src/account/module.js';
import { logIn, PASSWORD, signUp, uniqueEmail } from '../support/auth.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { awayFromStepEdge, totpCode } from '../support/totp.js';
import { smtpServer, type TestSmtpServer } from '../mail/smtp.js';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

for (const db of testDatabases()) {
  describe(`Email sign-in on ${db.name}`, () => {
    let t: TestSystem;
    let closed: TestSystem | undefined;
    let smtp: TestSmtpServer;
    const secrets: string[] = [];
    before(async () => {
      smtp = await smtpServer();
      await smtp.listen();
      t = await startSystem(db, { MAIL_URL: smtp.url, EMAIL_SIGN_IN_LIMIT_EMAIL: '3/3600', EMAIL_SIGN_IN_LIMIT_ADDRESS: '0', LOGIN_LIMIT_EMAIL: '0' });
    });
    after(async () => {
      await t?.stop();
      await closed?.stop();
      await smtp?.close();
    });

    const settle = () => t.system.services(accountModule).emailSignIn.settle();
    const start = (email: string, sys = t) => sys.client('POST', '/api/auth/email/start', { body: { email } });
    const signInMails = (to: string) => smtp.received.filter((m) => m.envelopeTo.includes(to) && /\/auth\/email\?token=/.test(m.parsed.text ?? ''));
    /** Asks for a sign-in, and the link's token and the code of the message it sends, as the SMTP server received it. */
    const startAndReceive = async (to: string): Promise<{ token: string; code: string; text: string }> => {
      const before = signInMails(to).length;
      const res = await start(to);
      assert.equal(res.status, 202, res.text);
      await settle();
      for (let i = 0; i < 400; i++) {
        const mails = signInMails(to);
        if (mails.length > before) {
          const text = mails[mails.length - 1].parsed.text ?? '';
          const link = /https?:\/\/\S+\/auth\/email\?token=(\S+)/.exec(text);
          const code = /code[^\d]*(\d{6})/.exec(text);
          assert.ok(link && code, 'the message has the link and the code');
          const token = decodeURIComponent(link[1]);
          secrets.push(token, code[1]);
          return { token, code: code[1], text };
        }
        await sleep(25);
      }
      throw new Error(`no email sign-in message to ${to}`);
    };
    const messagesTo = (to: string) => smtp.received.filter((m) => m.envelopeTo.includes(to)).length;

    it('signs a known account in with the link, once; the address becomes verified', async () => {
      const account = await signUp(t.client);
      const { token, text } = await startAndReceive(account.email);
      assert.match(text, /15 minutes/);
      const signedIn = await t.client('POST', '/api/auth/email/verify', { body: { token } });
      assert.equal(signedIn.status, 200, signedIn.text);
      assert.equal(signedIn.body.account.id, account.id);
      assert.equal(signedIn.body.account['email-verified'], true, 'a first proof of the address');
      assert.ok(String(signedIn.headers['set-cookie']).includes('refresh-token='), 'the refresh cookie, as a log-in');
      const again = await t.client('POST', '/api/auth/email/verify', { body: { token } });
      assert.deepEqual([again.status, again.body.type], [400, 'invalid-token'], 'single use');
      const foreign = await t.client('POST', '/api/auth/email/verify', { body: { token: 'x'.repeat(43) } });
      assert.deepEqual([foreign.status, foreign.body.type], [400, 'invalid-token']);
    });

    it('signs in with the code; the fifth wrong code voids the message, link included', async () => {
      const account = await signUp(t.client);
      const first = await startAndReceive(account.email);
      const ok = await t.client('POST', '/api/auth/email/verify', { body: { email: account.email.toUpperCase(), code: first.code } });
      assert.equal(ok.status, 200, ok.text);

      const second = await startAndReceive(account.email);
      const wrong = second.code === '000000' ? '000001' : '000000';
      for (let i = 1; i <= 5; i++) {
        const res = await t.client('POST', '/api/auth/email/verify', { body: { email: account.email, code: wrong } });
        assert.deepEqual([res.status, res.body.type], [401, 'invalid-code'], `wrong code ${i}`);
      }
      const late = await t.client('POST', '/api/auth/email/verify', { body: { email: account.email, code: second.code } });
      assert.deepEqual([late.status, late.body.type], [401, 'invalid-code'], 'the right code after the fifth wrong one');
      const link = await t.client('POST', '/api/auth/email/verify', { body: { token: second.token } });
      assert.deepEqual([link.status, link.body.type], [400, 'invalid-token'], 'and its link');
      const both = await t.client('POST', '/api/auth/email/verify', { body: { token: second.token, code: second.code } });
      assert.deepEqual([both.status, both.body.type], [400, 'request-coercion']);
    });

    it('expires after 15 minutes', async () => {
      const account = await signUp(t.client);
      const { token } = await startAndReceive(account.email);
      await t.system.database.db
        .updateTable('email_sign_in')
        .set({ expires_at: new Date(Date.now() - 1000) })
        .where('email', '=', account.email)
        .execute();
      assert.equal((await t.client('POST', '/api/auth/email/verify', { body: { token } })).status, 400);
    });

    it('makes an account for an unknown address (EMAIL_SIGN_UP on), verified, without a password', async () => {
      const email = uniqueEmail('new');
      const { token } = await startAndReceive(email);
      assert.equal(
        (await t.system.database.db.selectFrom('account').select('id').where('email', '=', email).execute()).length,
        0,
        'no account until the address is proven',
      );
      const res = await t.client('POST', '/api/auth/email/verify', { body: { token } });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.account.email, email);
      assert.equal(res.body.account['email-verified'], true);
      assert.equal((await logIn(t.client, email, PASSWORD)).status, 401, 'no password');
    });

    it("is a first proof: a squatter's sessions and password end; two-factor is asked after the link", async () => {
      const account = await signUp(t.client);
      const squatter = await logIn(t.client, account.email);
      const proof = await startAndReceive(account.email);
      const proven = await t.client('POST', '/api/auth/email/verify', { body: { token: proof.token } });
      assert.equal(proven.status, 200, proven.text);
      assert.equal(
        (await t.client('GET', '/api/account/me', { headers: bearer(squatter.body['access-token']) })).status,
        401,
        'sessions from before the proof end',
      );
      assert.equal((await logIn(t.client, account.email)).status, 401, 'the password from before the proof is gone');
      secrets.push(proven.body['password-reset-token']);
      assert.equal(
        (await t.client('POST', '/api/account/reset-password', { body: { token: proven.body['password-reset-token'], password: PASSWORD } })).status,
        204,
      );

      // two-factor on: the link is the first factor only
      const access = (await logIn(t.client, account.email)).body['access-token'] as string;
      const setup = await t.client('POST', '/api/account/2fa/setup', { headers: bearer(access), body: {} });
      secrets.push(setup.body.secret);
      await awayFromStepEdge();
      assert.equal(
        (await t.client('POST', '/api/account/2fa/enable', { headers: bearer(access), body: { code: totpCode(setup.body.secret, -1), password: PASSWORD } }))
          .status,
        200,
      );
      const { token } = await startAndReceive(account.email);
      const pending = await t.client('POST', '/api/auth/email/verify', { body: { token } });
      assert.equal(pending.status, 200, pending.text);
      assert.equal(pending.body['mfa-required'], true);
      assert.equal(pending.body['access-token'], undefined, 'no tokens before the second factor');
      assert.ok(!String(pending.headers['set-cookie'] ?? '').includes('refresh-token='));
      secrets.push(pending.body['mfa-token']);
      const done = await t.client('POST', '/api/account/log-in/mfa', { body: { 'mfa-token': pending.body['mfa-token'], code: totpCode(setup.body.secret) } });
      assert.equal(done.status, 200, done.text);
    });

    it('answers the same whatever the address; limits per email', async () => {
      const known = await signUp(t.client);
      const unknown = uniqueEmail('nobody');
      const a = await start(known.email);
      const b = await start(unknown);
      assert.deepEqual([a.status, a.body], [b.status, b.body], 'one answer');
      await start(known.email);
      await start(known.email);
      const limited = await start(known.email);
      assert.deepEqual([limited.status, limited.body.type], [429, 'rate-limited']);
      assert.ok(limited.headers['retry-after']);
      await settle();
    });

    it('known and unknown addresses run the same work before the answer (median time within a generous ratio)', async () => {
      const durations = { known: [] as number[], unknown: [] as number[] };
      const timed = await startSystem(db, { EMAIL_SIGN_IN_LIMIT_EMAIL: '0', EMAIL_SIGN_IN_LIMIT_ADDRESS: '0' });
      closed = timed;
      const known = await signUp(timed.client);
      const work = () => timed.system.services(accountModule).emailSignIn.settle();
      for (let i = 0; i < 30; i++) {
        for (const kind of i % 2 ? (['known', 'unknown'] as const) : (['unknown', 'known'] as const)) {
          const began = performance.now();
          const res = await start(kind === 'known' ? known.email : uniqueEmail('x'), timed);
          durations[kind].push(performance.now() - began);
          assert.equal(res.status, 202);
          await work();
        }
      }
      const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
      const ratio = median(durations.known) / median(durations.unknown);
      assert.ok(ratio > 0.33 && ratio < 3, `median known/unknown ${ratio.toFixed(2)}: the lookup is after the answer, for both`);
      const sent = await timed.system.mail.mailbox.list({ to: known.email, kind: 'email-sign-in', limit: 100 });
      assert.equal(sent.length, 30, 'the known address got every message');
      await timed.stop();
      closed = undefined;
    });

    it('EMAIL_SIGN_UP=off: an unknown address gets nothing and no account', async () => {
      const off = await startSystem(db, { EMAIL_SIGN_UP: 'off' });
      closed = off;
      const email = uniqueEmail('off');
      const res = await start(email, off);
      assert.equal(res.status, 202);
      await off.system.services(accountModule).emailSignIn.settle();
      assert.equal((await off.system.mail.mailbox.list({ to: email, limit: 5 })).length, 0, 'nothing sent');
      const known = await signUp(off.client);
      await start(known.email, off);
      await off.system.services(accountModule).emailSignIn.settle();
      assert.equal(
        (await off.system.mail.mailbox.list({ to: known.email, kind: 'email-sign-in', limit: 5 })).length,
        1,
        'an existing account still signs in by email',
      );
      await off.stop();
      closed = undefined;
    });

    it('no link token or code reaches the log', async () => {
      await settle();
      const log = await t.logText();
      for (const secret of secrets) assert.ok(!log.includes(secret), 'a secret of the run is in the log');
      assert.ok(messagesTo('nobody@example.com') === 0);
    });
  });
}
