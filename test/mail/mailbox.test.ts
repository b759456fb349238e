/**
 * The local mailbox: without MAIL_URL messages stay in the database, readable by tests through
 * `system.mail.mailbox`, and in dev at /dev/mailbox (HTML for a browser, data otherwise);
 * the routes do not exist in test or prod.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { Outbox } from '../../src/mail/outbox.js';
import { ALL_FORMATS } from '../support/http.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { waitFor } from './smtp.js';

const [pglite] = testDatabases();

describe('the local mailbox in dev', () => {
  let s: TestSystem;
  let id: string;
  const secret = randomBytes(24).toString('base64url');

  before(async () => {
    s = await startSystem(pglite, { APP_ENV: 'dev', LOG_CONSOLE: 'off', MAIL_POLL_MS: '50', APP_URL: 'http://localhost:5173' });
    id = await s.system.database.db.transaction().execute((trx) =>
      s.system.mail.enqueue(trx, {
        kind: 'invitation',
        to: 'Guest@Example.com',
        data: { inviter: 'Ada "A" Lovelace', organization: 'R&D <Labs>', role: 'admin', token: secret },
      }),
    );
    await waitFor('the mailbox delivery', async () => (await s.system.mail.mailbox.get(id))?.status === 'sent');
  });
  after(async () => s?.stop());

  it('keeps the whole message, bodies included, marked sent', async () => {
    const [message] = await s.system.mail.mailbox.list({ to: 'guest@example.com' });
    assert.equal(message.id, id);
    assert.equal(s.system.mail.transport, 'mailbox');
    assert.equal(message.to, 'guest@example.com');
    assert.equal(message.from, 'SaaS <no-reply@localhost>');
    assert.equal(message.subject, 'Ada "A" Lovelace invited you to R&D <Labs> on SaaS');
    assert.ok(message.html?.includes('R&amp;D &lt;Labs&gt;'));
    assert.ok(message.text?.includes(`http://localhost:5173/invitations/accept?token=${secret}`));
    assert.equal(message.attempts, 1);
  });

  it('lists messages as data in every format, with their links', async () => {
    for (const format of ALL_FORMATS) {
      const res = await s.client('GET', '/dev/mailbox', { format });
      assert.equal(res.status, 200, format.mime);
      assert.equal(res.headers['content-type'], format.mime);
      const [entry] = res.body.messages;
      assert.equal(entry.id, id);
      assert.equal(entry.kind, 'invitation');
      assert.equal(entry.status, 'sent');
      assert.deepEqual(entry.links, [`http://localhost:5173/invitations/accept?token=${secret}`]);
    }
    const filtered = await s.client('GET', '/dev/mailbox?to=nobody@example.com');
    assert.deepEqual(filtered.body.messages, []);
    assert.equal((await s.client('GET', '/dev/mailbox?kind=nonsense')).status, 400);
  });

  it('shows a browser an HTML page with clickable links, and each message with its parts', async () => {
    const list = await s.client('GET', '/dev/mailbox', { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    assert.equal(list.status, 200);
    assert.match(String(list.headers['content-type']), /^text\/html/);
    assert.ok(list.text.includes(`<a href="http://localhost:5173/invitations/accept?token=${secret}">`));
    assert.ok(list.text.includes(`href="/dev/mailbox/${id}"`));
    assert.ok(list.text.includes('R&amp;D &lt;Labs&gt;'), 'the subject is escaped');

    const page = await s.client('GET', `/dev/mailbox/${id}`, { headers: { accept: 'text/html' } });
    assert.equal(page.status, 200);
    assert.ok(page.text.includes(`<iframe src="/dev/mailbox/${id}/html"`));
    assert.ok(page.text.includes(`<a href="http://localhost:5173/invitations/accept?token=${secret}">`));

    const data = await s.client('GET', `/dev/mailbox/${id}`);
    assert.equal(data.body.id, id);
    assert.ok(data.body.html.includes('<!doctype html>'));
    assert.ok(data.body.text.includes('Accept the invitation'));

    const part = await s.client('GET', `/dev/mailbox/${id}/html`);
    assert.equal(part.status, 200);
    assert.match(String(part.headers['content-security-policy']), /^sandbox /);
    assert.ok(part.text.includes('<base target="_top">'));
    assert.ok(part.text.includes(`href="http://localhost:5173/invitations/accept?token=${secret}"`));
  });

  it("answers only to the app's own host names (a rebound foreign name gets 403)", async () => {
    for (const path of ['/dev/mailbox', '/dev/mailbox/00000000-0000-4000-8000-000000000000', '/dev/mailbox/00000000-0000-4000-8000-000000000000/html']) {
      const res = await s.client('GET', path, { headers: { host: 'rebind.attacker.example' } });
      assert.equal(res.status, 403, path);
      assert.equal(res.body?.reason, 'host', path);
    }
    assert.equal((await s.client('GET', '/dev/mailbox', { headers: { host: 'localhost:3000' } })).status, 200);
  });

  it('answers 404 in the error shape for an unknown or malformed id', async () => {
    for (const path of ['/dev/mailbox/00000000-0000-0000-0000-000000000000', '/dev/mailbox/not-a-uuid', '/dev/mailbox/not-a-uuid/html']) {
      const res = await s.client('GET', path);
      assert.equal(res.status, 404, path);
      assert.equal(res.body.type, 'not-found');
    }
  });

  it('keeps the token out of the log file', async () => {
    assert.ok(!(await s.logText()).includes(secret));
  });
});

describe('the mailbox outside dev', () => {
  it('has no routes in test; messages are read through the service', async () => {
    const s = await startSystem(pglite, { MAIL_POLL_MS: '50' });
    try {
      const id = await s.system.mail.enqueue(s.system.database.db, { kind: 'password-changed-notice', to: 'a@example.com', data: { name: null } });
      await waitFor('the mailbox delivery', async () => (await s.system.mail.mailbox.get(id))?.status === 'sent');
      const res = await s.client('GET', '/dev/mailbox');
      assert.equal(res.status, 404);
      assert.equal(res.body.type, 'not-found');
      assert.equal((await s.client('GET', `/dev/mailbox/${id}`)).status, 404);
      // a browser gets the client app's index like for any unknown page, never the mailbox
      const html = await s.client('GET', '/dev/mailbox', { headers: { accept: 'text/html' } });
      assert.ok(!html.text.includes('Mailbox'));

      // retention: sent and failed messages older than 30 days go; recent or waiting ones stay
      const db = s.system.database.db;
      const outbox = new Outbox(db, 'SaaS <no-reply@localhost>', { appUrl: 'http://x', product: 'SaaS' });
      const old = await Promise.all(
        ['sent', 'failed', 'pending'].map(async (status) => {
          const oldId = await outbox.insert(db, { kind: 'password-changed-notice', to: `${status}@example.com`, data: { name: null } });
          await db
            .updateTable('mail_outbox')
            .set({ status: status as 'sent', created_at: sql<Date>`now() - interval '31 days'`, next_attempt_at: sql<Date>`now() + interval '1 day'` })
            .where('id', '=', oldId)
            .execute();
          return oldId;
        }),
      );
      assert.equal(await outbox.purge(), 2);
      assert.deepEqual((await s.system.mail.mailbox.list()).map((m) => m.id).sort(), [id, old[2]].sort());
    } finally {
      await s.stop();
    }
  });
});
