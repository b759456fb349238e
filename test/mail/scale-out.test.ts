/**
 * PostgreSQL: several instances send each message once, and a process killed while sending
 * leaves its message to be sent by the next one after the lease.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import pg from 'pg';
import { startSystem, testDatabases, type TestDatabase } from '../support/system.js';
import { silentServer, smtpServer, waitFor } from './smtp.js';

const postgres = testDatabases().find((d) => d.name === 'postgres');
const skip = postgres ? false : 'TEST_DATABASE_URL is not set';

describe('two instances on one PostgreSQL', { skip }, () => {
  it('send each of N messages exactly once', async () => {
    const { url, drop } = await postgres!.create();
    const shared: TestDatabase = { name: 'postgres', create: async () => ({ url, drop: async () => undefined }) };
    const smtp = await smtpServer();
    await smtp.listen();
    const env = { MAIL_URL: smtp.url, MAIL_POLL_MS: '20', MAIL_RETRY_BASE_MS: '20' };
    const [a, b] = await Promise.all([startSystem(shared, env), startSystem(shared, env)]);
    try {
      // queued through both, in separate transactions, while both workers run
      const ids = await Promise.all(
        Array.from({ length: 40 }, (_, i) => {
          const s = i % 2 ? a : b;
          return s.system.database.db
            .transaction()
            .execute((trx) => s.system.mail.enqueue(trx, { kind: 'password-changed-notice', to: `user${i}@example.com`, data: { name: `User ${i}` } }));
        }),
      );
      // and many in one transaction: both workers find them due at once and race for them
      ids.push(
        ...(await a.system.database.db.transaction().execute(async (trx) => {
          const batch: string[] = [];
          for (let i = 0; i < 60; i++)
            batch.push(await a.system.mail.enqueue(trx, { kind: 'password-changed-notice', to: `bulk${i}@example.com`, data: { name: null } }));
          return batch;
        })),
      );
      const n = ids.length;
      await waitFor('every message', () => smtp.received.length >= n);
      await waitFor('every row sent', async () => (await a.system.mail.mailbox.list({ limit: 500 })).every((m) => m.status === 'sent'));
      // both workers keep polling; nothing more arrives
      await Promise.all([a.system.mail.worker.runOnce(), b.system.mail.worker.runOnce()]);
      const received = smtp.received.map((m) => m.parsed.messageId);
      assert.equal(received.length, n);
      assert.deepEqual([...received].sort(), ids.map((id) => `<${id}@localhost>`).sort());
      const sentLogs = [...(await a.logEntries()), ...(await b.logEntries())].filter((e) => e.id === 'mail/sent');
      assert.equal(sentLogs.length, n);
      const byInstance = [await a.logEntries(), await b.logEntries()].map((entries) => entries.filter((e) => e.id === 'mail/sent').length);
      console.log(`messages sent per instance: ${byInstance.join(' / ')}`);
    } finally {
      await a.stop();
      await b.stop();
      await smtp.close();
      await drop();
    }
  });
});

describe('a process killed while sending', { skip }, () => {
  it('loses nothing: the next instance sends the message once the lease has run out', async () => {
    const { url, drop } = await postgres!.create();
    const silent = await silentServer();
    const smtp = await smtpServer();
    await smtp.listen();
    const secret = randomBytes(16).toString('hex');
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/mail/fixtures/enqueue-and-hang.ts'], {
      env: {
        ...process.env,
        APP_ENV: 'test',
        DATABASE_URL: url,
        LOG_CONSOLE: 'off',
        LOG_FILE: 'off',
        TEST_TOKEN: secret,
        MAIL_URL: `smtp://127.0.0.1:${silent.port}`,
        MAIL_POLL_MS: '20',
        MAIL_LEASE_MS: '1000',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const db = new pg.Client({ connectionString: url });
    try {
      let out = '';
      child.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
      });
      const id = await waitFor('the child to commit its message', () => out.split('\n')[0].trim() || undefined, 60_000);
      // the child claimed the message and is in the middle of sending it
      await waitFor('the child to connect to the SMTP server', () => silent.connections() > 0);
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      await db.connect();
      const left = await db.query('select status, attempts, locked_by from mail_outbox where id = $1', [id]);
      assert.equal(left.rows[0].status, 'sending');
      assert.equal(left.rows[0].attempts, 1);
      assert.ok(left.rows[0].locked_by);

      const shared: TestDatabase = { name: 'postgres', create: async () => ({ url, drop: async () => undefined }) };
      const next = await startSystem(shared, { MAIL_URL: smtp.url, MAIL_POLL_MS: '20' });
      try {
        const mail = await waitFor('delivery by the next instance', () => smtp.received.find((m) => m.parsed.messageId === `<${id}@localhost>`));
        assert.ok(mail.parsed.text?.includes(`/verify-email?token=${secret}`));
        await waitFor('the sent status', async () => (await next.system.mail.mailbox.get(id))?.status === 'sent');
        assert.equal((await next.system.mail.mailbox.get(id))?.attempts, 2);
        assert.equal(smtp.received.length, 1);
      } finally {
        await next.stop();
      }
    } finally {
      child.kill('SIGKILL');
      await db.end().catch(() => undefined);
      await silent.close();
      await smtp.close();
      await drop();
    }
  });
});
