/**
 * The SMTP server down, then answering 421 and 451, then well (docs/deployment.md, "When a
 * dependency fails"): sign-ups answer 201 at once all along (their messages wait in the outbox),
 * and once the server takes mail every message is delivered exactly once, on the MAIL_RETRY_BASE_MS
 * / MAIL_RETRY_MAX_MS backoff.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { PASSWORD, uniqueEmail } from '../support/auth.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { smtpServer, waitFor, type TestSmtpServer } from '../mail/smtp.js';

const FAST = { MAIL_POLL_MS: '50', MAIL_RETRY_BASE_MS: '20', MAIL_RETRY_MAX_MS: '200' };

for (const db of testDatabases()) {
  describe(`SMTP down, refusing, then back (${db.name})`, () => {
    let smtp: TestSmtpServer;
    let t: TestSystem;
    before(async () => {
      smtp = await smtpServer(); // not listening: connections are refused
      t = await startSystem(db, { ...FAST, MAIL_URL: smtp.url });
    });
    after(async () => {
      await t?.stop();
      await smtp?.close().catch(() => undefined);
    });

    const signUps = async (n: number) => {
      const emails = Array.from({ length: n }, () => uniqueEmail('smtp'));
      for (const email of emails) {
        const res = await t.client('POST', '/api/account/sign-up', { body: { email, password: PASSWORD }, timeoutMs: 5_000 });
        assert.equal(res.status, 201, res.text);
      }
      return emails;
    };
    const lastErrors = async () =>
      (await sql<{ last_error: string | null }>`select last_error from mail_outbox where status = 'pending'`.execute(t.system.database.db)).rows.map(
        (r) => r.last_error ?? '',
      );

    it('answers sign-ups at once while it is gone or refusing, and delivers every message once when it is back', async () => {
      const emails = await signUps(3);
      await waitFor('attempts refused by a server that is not there', async () => (await lastErrors()).filter((e) => /ECONNREFUSED/.test(e)).length >= 3);

      await smtp.listen();
      smtp.refuseAll = 421;
      emails.push(...(await signUps(2)));
      await waitFor('attempts answered 421', async () => (await lastErrors()).filter((e) => /421/.test(e)).length >= 5);
      smtp.refuseAll = 451;
      emails.push(...(await signUps(2)));
      await waitFor('attempts answered 451', async () => (await lastErrors()).filter((e) => /451/.test(e)).length >= 7);
      assert.equal(smtp.received.length, 0);

      smtp.refuseAll = undefined;
      for (const email of emails) await waitFor(`the message to ${email}`, () => smtp.received.find((m) => m.envelopeTo.includes(email)));
      // a few more polls and retry delays: nothing is sent a second time
      await sleep(500);
      for (const email of emails) assert.equal(smtp.received.filter((m) => m.envelopeTo.includes(email)).length, 1, `one message to ${email}`);
      const pending = await sql<{ n: string }>`select count(*) as n from mail_outbox where status <> 'sent'`.execute(t.system.database.db);
      assert.equal(Number(pending.rows[0].n), 0);
    });
  });
}
