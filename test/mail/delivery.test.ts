/**
 * Delivery through a real SMTP server: committed messages arrive with every part, rolled-back
 * ones never do, refusals and outages are retried with backoff, a message that keeps failing
 * ends `failed` with an error entry, and a message left behind by a stopped system is sent by
 * the next one. On PGlite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { startSystem, testDatabases, type TestDatabase, type TestSystem } from '../support/system.js';
import { SMTP_PASS, SMTP_USER, smtpServer, waitFor, type TestSmtpServer } from './smtp.js';

const FAST = { MAIL_POLL_MS: '50', MAIL_RETRY_BASE_MS: '20', MAIL_RETRY_MAX_MS: '100' };
const token = () => randomBytes(24).toString('base64url');

async function outboxRow(s: TestSystem, id: string) {
  return s.system.database.db.selectFrom('mail_outbox').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** An account and its verification message, committed together. */
async function signUpWithMail(s: TestSystem, email: string, secret: string): Promise<string> {
  return s.system.database.db.transaction().execute(async (trx) => {
    await trx.insertInto('account').values({ email, name: 'Ada <Admin>', password_hash: 'x' }).execute();
    return s.system.mail.enqueue(trx, { kind: 'verify-email', to: email, data: { name: 'Ada <Admin>', token: secret } });
  });
}

for (const db of testDatabases()) {
  describe(`mail delivery over SMTP (${db.name})`, () => {
    let smtp: TestSmtpServer;
    let s: TestSystem;

    before(async () => {
      smtp = await smtpServer();
      await smtp.listen();
      s = await startSystem(db, { ...FAST, MAIL_URL: smtp.url, MAIL_FROM: 'Acme <hello@acme.test>', APP_URL: 'https://app.acme.test' });
    });
    after(async () => {
      await s?.stop();
      await smtp?.close();
    });

    it('delivers a message committed with its change: subject, from, to, HTML and text parts', async () => {
      const secret = token();
      const id = await signUpWithMail(s, 'ada@example.com', secret);
      const mail = await waitFor('the message', () => smtp.received.find((m) => m.parsed.messageId === `<${id}@acme.test>`));
      const link = `https://app.acme.test/verify-email?token=${secret}`;
      assert.equal(mail.parsed.subject, 'Verify your email address for Acme');
      assert.deepEqual(
        mail.parsed.from?.value.map((a) => [a.name, a.address]),
        [['Acme', 'hello@acme.test']],
      );
      assert.deepEqual(mail.parsed.to && !Array.isArray(mail.parsed.to) ? mail.parsed.to.value.map((a) => a.address) : [], ['ada@example.com']);
      assert.equal(mail.envelopeFrom, 'hello@acme.test');
      assert.deepEqual(mail.envelopeTo, ['ada@example.com']);
      assert.equal(mail.user, SMTP_USER);
      assert.deepEqual(smtp.auths[0], { username: SMTP_USER, password: SMTP_PASS });
      assert.ok(mail.parsed.text?.includes(`Hi Ada <Admin>,`));
      assert.ok(mail.parsed.text?.includes(link));
      assert.ok(typeof mail.parsed.html === 'string' && mail.parsed.html.includes(`href="${link}"`));
      assert.ok(mail.parsed.html.includes('Hi Ada &lt;Admin&gt;,'), 'the name is escaped in HTML');
      assert.equal(mail.parsed.headers.get('auto-submitted'), 'auto-generated');

      const row = await waitFor('the sent status', async () => ((await outboxRow(s, id)).status === 'sent' ? outboxRow(s, id) : undefined));
      assert.equal(row.attempts, 1);
      assert.equal(row.html_body, null, 'bodies (live tokens) are dropped once delivered');
      assert.equal(row.text_body, null);
      assert.ok(row.sent_at);
      const log = await s.logText();
      assert.ok(log.includes(`"id":"mail/sent"`));
      assert.ok(!log.includes(secret), 'the token never reaches the log file');
    });

    it('sends nothing for a rolled-back transaction', async () => {
      const secret = token();
      await assert.rejects(
        s.system.database.db.transaction().execute(async (trx) => {
          await s.system.mail.enqueue(trx, { kind: 'reset-password', to: 'rolled@example.com', data: { name: null, token: secret } });
          throw new Error('the change failed');
        }),
        /the change failed/,
      );
      // a message committed afterwards arrives, so the worker has looked since
      const later = await s.system.mail.enqueue(s.system.database.db, { kind: 'password-changed-notice', to: 'later@example.com', data: { name: null } });
      await waitFor('the later message', () => smtp.received.find((m) => m.parsed.messageId === `<${later}@acme.test>`));
      assert.equal(smtp.received.filter((m) => m.envelopeTo.includes('rolled@example.com')).length, 0);
      assert.equal((await s.system.mail.mailbox.list({ to: 'rolled@example.com' })).length, 0);
    });

    it('retries after 4xx and 5xx refusals, with backoff, then delivers', async () => {
      smtp.refusals.push({ stage: 'rcpt', code: 451 }, { stage: 'data', code: 554 });
      const secret = token();
      const id = await s.system.mail.enqueue(s.system.database.db, { kind: 'reset-password', to: 'retry@example.com', data: { name: 'Bo', token: secret } });
      await waitFor('delivery after the refusals', () => smtp.received.find((m) => m.parsed.messageId === `<${id}@acme.test>`));
      const row = await waitFor('the sent status', async () => ((await outboxRow(s, id)).status === 'sent' ? outboxRow(s, id) : undefined));
      assert.equal(row.attempts, 3);
      assert.equal(smtp.refusals.length, 0);
      const retries = (await s.logEntries()).filter((e) => e.id === 'mail/retry' && e.data.id === id);
      assert.equal(retries.length, 2);
      assert.equal(retries[0].level, 'warn');
      assert.equal(retries[0].data.kind, 'reset-password');
      assert.match(String(retries[0].data.error), /451/);
      assert.match(String(retries[1].data.error), /554/);
      // the second retry is scheduled after the first (the delays are unit-tested in outbox.test.ts)
      assert.ok(Date.parse(String(retries[1].data['next-attempt-at'])) > Date.parse(String(retries[0].data['next-attempt-at'])));
      assert.ok(!(await s.logText()).includes(secret));
    });
  });

  describe(`mail delivery when the server is down, then up (${db.name})`, () => {
    it('keeps the message and delivers it once the server answers', async () => {
      const smtp = await smtpServer(); // not listening yet
      const s = await startSystem(db, { ...FAST, MAIL_URL: smtp.url });
      try {
        const id = await s.system.mail.enqueue(s.system.database.db, { kind: 'password-changed-notice', to: 'down@example.com', data: { name: null } });
        const failedTwice = await waitFor('two failed attempts', async () => {
          const row = await outboxRow(s, id);
          return row.attempts >= 2 && row.status === 'pending' ? row : undefined;
        });
        assert.match(failedTwice.last_error ?? '', /ECONNREFUSED/);
        assert.ok(!(failedTwice.last_error ?? '').includes(SMTP_PASS), 'no credentials in the stored error');
        await smtp.listen();
        await waitFor('delivery', () => smtp.received.find((m) => m.envelopeTo.includes('down@example.com')));
        await waitFor('the sent status', async () => (await outboxRow(s, id)).status === 'sent');
        await smtp.close();
      } finally {
        await s.stop();
      }
    });
  });

  describe(`a message that keeps failing (${db.name})`, () => {
    it('ends failed, logged at error with its id and kind and nothing of its body', async () => {
      const smtp = await smtpServer();
      await smtp.listen();
      smtp.refuseAll = 550;
      const s = await startSystem(db, { ...FAST, MAIL_URL: smtp.url, MAIL_GIVE_UP_MS: '1500' });
      try {
        const secret = token();
        const id = await s.system.mail.enqueue(s.system.database.db, { kind: 'verify-email', to: 'never@example.com', data: { name: null, token: secret } });
        const row = await waitFor('the failed status', async () => {
          const r = await outboxRow(s, id);
          return r.status === 'failed' ? r : undefined;
        });
        assert.ok(row.attempts >= 2, `retried before giving up (${row.attempts} attempts)`);
        assert.match(row.last_error ?? '', /550/);
        const entries = await s.logEntries();
        const failed = entries.filter((e) => e.id === 'mail/failed');
        assert.equal(failed.length, 1);
        assert.equal(failed[0].level, 'error');
        assert.equal(failed[0].ns, 'saas.mail');
        assert.equal(failed[0].data.id, id);
        assert.equal(failed[0].data.kind, 'verify-email');
        const log = await s.logText();
        assert.ok(!log.includes(secret), 'no token in the log');
        assert.ok(!log.includes('verify-email?token'), 'no link in the log');
        assert.equal(smtp.received.length, 0);
        // a failed message is not tried again
        const attempts = row.attempts;
        await s.system.mail.worker.runOnce();
        assert.equal((await outboxRow(s, id)).attempts, attempts);
      } finally {
        await s.stop();
        await smtp.close();
      }
    });
  });
}

/** One database shared by systems built one after the other (a file-backed PGlite, or a PostgreSQL database). */
async function sharedDatabase(db: TestDatabase): Promise<{ shared: TestDatabase; env: Record<string, string>; drop(): Promise<void> }> {
  if (db.name === 'pglite') {
    const dir = await mkdtemp(join(tmpdir(), 'saas-mail-pglite-'));
    // an empty DATABASE_URL: PGlite in PGLITE_DIR
    return {
      shared: { name: 'pglite', create: async () => ({ url: '', drop: async () => undefined }) },
      env: { PGLITE_DIR: dir },
      drop: () => rm(dir, { recursive: true, force: true }),
    };
  }
  const { url, drop } = await db.create();
  return { shared: { name: db.name, create: async () => ({ url, drop: async () => undefined }) }, env: {}, drop };
}

for (const db of testDatabases()) {
  describe(`messages left behind by a stopped system (${db.name})`, () => {
    it('are sent by the next system: one committed but never claimed, one claimed by a sender that died', async () => {
      const { shared, drop, env: dbEnv } = await sharedDatabase(db);
      const smtp = await smtpServer();
      await smtp.listen();
      const env = { ...FAST, MAIL_URL: smtp.url, ...dbEnv };
      try {
        const first = await startSystem(shared, env);
        // the worker stops before anything is queued: the "crash" comes between commit and send
        await first.system.mail.worker.stop(1000);
        const committed = await signUpWithMail(first, 'left@example.com', token());
        const claimed = await first.system.mail.enqueue(first.system.database.db, {
          kind: 'password-changed-notice',
          to: 'claimed@example.com',
          data: { name: null },
        });
        // as a sender that died mid-send leaves it: claimed, its lease over
        await first.system.database.db
          .updateTable('mail_outbox')
          .set({ status: 'sending', attempts: 1, locked_by: 'dead-instance', locked_until: sql<Date>`now() - interval '1 second'` })
          .where('id', '=', claimed)
          .execute();
        await first.stop();
        assert.equal(smtp.received.length, 0);

        const second = await startSystem(shared, env);
        try {
          await waitFor('both messages', () => smtp.received.length >= 2);
          const ids = smtp.received.map((m) => m.parsed.messageId).sort();
          assert.deepEqual(ids, [committed, claimed].map((id) => `<${id}@localhost>`).sort());
          const rows = await second.system.mail.mailbox.list();
          await waitFor('the sent status', async () => (await second.system.mail.mailbox.list()).every((m) => m.status === 'sent'));
          assert.equal(rows.length, 2);
          assert.equal((await outboxRow(second, claimed)).attempts, 2, "the dead sender's attempt counts");
        } finally {
          await second.stop();
        }
      } finally {
        await smtp.close();
        await drop();
      }
    });
  });
}
