/**
 * Notifications on one instance (docs/notifications.md): written in their cause's transaction
 * (a member joining tells the owners and admins; a password change is a critical security
 * notification); the list with its unread count, read marks, deletion, and nobody seeing another
 * account's; the live stream (401 before any byte without a valid token, `Last-Event-ID`, the
 * per-account cap, log-out ending it); preferences (a muted category still shows in the app and
 * sends no email; a critical one cannot be muted; an organization's default applies until the
 * member chooses); the daily digest (three notifications, one email at its time, none of their
 * own); RFC 8058's one-click unsubscribe without a session.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { notificationsModule } from '../../src/notifications/module.js';
import { account, addMember, as, createOrg, type TestAccount } from '../orgs/support.js';
import { logIn, PASSWORD } from '../support/auth.js';
import { freePort } from '../support/net.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { openStream } from './support.js';

describe('Notifications (pglite)', () => {
  let t: TestSystem;
  let owner: TestAccount;
  const mails = (to: string) => t.system.mail.mailbox.list({ to });
  const list = (who: TestAccount, query = '') => as(t, who, 'GET', `/api/notifications${query}`);

  before(async () => {
    const port = await freePort();
    t = await startSystem(testDatabases()[0], { PORT: String(port), APP_URL: `http://127.0.0.1:${port}`, NOTIFICATION_STREAMS_PER_ACCOUNT: '2' });
    owner = await account(t);
  });
  after(() => t?.stop());

  it('tells the owners and admins that a member joined, in the app and by email with List-Unsubscribe; nobody else sees it', async () => {
    const orgId = await createOrg(t, owner, 'Acme');
    const member = await account(t);
    await addMember(t, orgId, owner, member, 'member');
    const mine = await list(owner);
    assert.equal(mine.status, 200, mine.text);
    const joined = mine.body.notifications.find((n: { kind: string }) => n.kind === 'member-joined');
    assert.ok(joined, JSON.stringify(mine.body));
    assert.deepEqual(
      { category: joined.category, org: joined['organization-id'], url: joined.url, read: joined['read-at'] },
      { category: 'organizations', org: orgId, url: `/orgs/${orgId}/members`, read: null },
    );
    assert.ok(mine.body['unread-count'] >= 1);
    const email = (await mails(owner.email)).find((m) => m.kind === 'notification');
    assert.ok(email, 'the generic notification email');
    assert.match(email.headers['List-Unsubscribe'] ?? '', /^<http:\/\/127\.0\.0\.1:\d+\/api\/notifications\/unsubscribe\?token=[^>]+>$/);
    assert.equal(email.headers['List-Unsubscribe-Post'], 'List-Unsubscribe=One-Click');
    // the member who joined is not told of it, and sees none of the owner's
    const theirs = await list(member);
    assert.ok(!theirs.body.notifications.some((n: { kind: string }) => n.kind === 'member-joined'));
    assert.equal((await as(t, member, 'DELETE', `/api/notifications/${joined.id}`)).status, 404);
    assert.equal((await as(t, member, 'POST', '/api/notifications/read', { ids: [joined.id] })).status, 204);
    assert.equal(
      (await list(owner)).body.notifications.find((n: { id: string }) => n.id === joined.id)['read-at'],
      null,
      "another account's read changes nothing",
    );
  });

  it("is written in each recipient's language: the account's locale, else the default", async () => {
    const german = await account(t);
    const arabic = await account(t);
    for (const [who, locale] of [
      [german, 'de'],
      [arabic, 'ar'],
    ] as const)
      assert.equal((await as(t, who, 'PATCH', '/api/account/me', { locale })).status, 200);
    const orgId = await createOrg(t, german, 'Polyglot');
    await addMember(t, orgId, german, arabic, 'admin');
    const plain = await account(t);
    await addMember(t, orgId, german, plain, 'admin');
    const joiner = await account(t);
    await addMember(t, orgId, german, joiner, 'member');
    const joinedOf = async (who: TestAccount) =>
      (await list(who)).body.notifications.find((n: { kind: string; body: string }) => n.kind === 'member-joined' && n.body.includes(joiner.email));
    const inGerman = await joinedOf(german);
    assert.equal(inGerman?.title, 'Test User ist Polyglot beigetreten');
    assert.equal(inGerman?.body, `${joiner.email} hat die Einladung angenommen und ist als Mitglied beigetreten.`);
    assert.equal((await joinedOf(arabic))?.title, 'انضم Test User إلى Polyglot');
    const email = (await mails(german.email)).find((m) => m.kind === 'notification' && m.text?.includes(joiner.email));
    assert.equal(email?.subject, 'Test User ist Polyglot beigetreten', 'the generic email carries the same words');
    assert.match(email?.text ?? '', /^Guten Tag,/);
    // its unsubscribe page speaks the account's language, whatever the browser asks for
    const link = /^<(.+)>$/.exec(email?.headers['List-Unsubscribe'] ?? '')![1]!;
    const page = await (await fetch(link, { headers: { 'accept-language': 'es' } })).text();
    assert.match(page, /<html lang="de" dir="ltr">/);
    assert.match(page, /Keine E-Mails zu Organisationen mehr von .+ erhalten\?/);
    assert.match(page, /<button type="submit">Abmelden<\/button>/);
    const done = await fetch(link, {
      method: 'POST',
      headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });
    assert.match(await done.text(), /Sie erhalten keine E-Mails zu Organisationen mehr von /);
    // a link that is not valid: the request's language (nobody is known)
    const bad = await fetch(`${link.slice(0, -2)}xx`, { headers: { 'accept-language': 'ar' } });
    assert.equal(bad.status, 400);
    assert.match(await bad.text(), /<html lang="ar" dir="rtl">.*رابط إلغاء الاشتراك هذا غير صالح/s);
    // a security notice, worded by the mail feature, in the recipient's language too
    await as(t, arabic, 'POST', '/api/account/change-password', { 'current-password': PASSWORD, password: 'another password 789' });
    const [changed] = (await list(arabic)).body.notifications.filter((n: { kind: string }) => n.kind === 'password-changed');
    assert.equal(changed?.title, 'تم تغيير كلمة مرورك');
    // without a locale of its own: the default (English)
    assert.equal((await joinedOf(plain))?.title, 'Test User joined Polyglot');
  });

  it('reads, reads all, pages by cursor and deletes', async () => {
    const who = await account(t);
    const orgId = await createOrg(t, who, 'Pages');
    for (let i = 0; i < 3; i++) await addMember(t, orgId, who, await account(t), 'member');
    const page = await list(who, '?limit=2');
    assert.equal(page.body.notifications.length, 2);
    assert.ok(page.body['next-cursor']);
    const rest = await list(who, `?limit=2&cursor=${page.body['next-cursor']}`);
    assert.ok(rest.body.notifications.length >= 1);
    assert.ok(rest.body.notifications.every((n: { cursor: string }) => BigInt(n.cursor) < BigInt(page.body['next-cursor'])));
    const first = page.body.notifications[0];
    assert.equal((await as(t, who, 'POST', '/api/notifications/read', { ids: [first.id] })).status, 204);
    const unread = await list(who, '?unread=true');
    assert.ok(!unread.body.notifications.some((n: { id: string }) => n.id === first.id));
    assert.equal((await as(t, who, 'POST', '/api/notifications/read', {})).status, 400, 'ids or all');
    assert.equal((await as(t, who, 'POST', '/api/notifications/read', { all: true })).status, 204);
    assert.equal((await list(who)).body['unread-count'], 0);
    assert.equal((await as(t, who, 'DELETE', `/api/notifications/${first.id}`)).status, 204);
    assert.ok(!(await list(who)).body.notifications.some((n: { id: string }) => n.id === first.id));
  });

  it('a password change is a critical security notification, shown and emailed whatever was chosen', async () => {
    const who = await account(t);
    const changed = await as(t, who, 'POST', '/api/account/change-password', { 'current-password': PASSWORD, password: 'another password 456' });
    assert.ok(changed.status < 300, changed.text);
    const rows = await t.system.database.db.selectFrom('notification').select(['kind', 'category', 'in_app']).where('account_id', '=', who.id).execute();
    assert.deepEqual(rows, [{ kind: 'password-changed', category: 'security', in_app: true }]);
    const email = (await mails(who.email)).find((m) => m.kind === 'password-changed-notice');
    assert.ok(email, 'its own email, as before');
    assert.equal(email.headers['List-Unsubscribe'], undefined, 'a critical email has no unsubscribe');
  });

  it('a critical category cannot be muted; a muted one still shows in the app and sends no email', async () => {
    const refused = await as(t, owner, 'PUT', '/api/account/notification-preferences', { categories: [{ category: 'security', email: 'off' }] });
    assert.equal(refused.status, 400);
    assert.match(JSON.stringify(refused.body), /security is critical/);
    const muted = await as(t, owner, 'PUT', '/api/account/notification-preferences', { categories: [{ category: 'organizations', email: 'off' }] });
    assert.equal(muted.status, 200, muted.text);
    assert.deepEqual(
      muted.body.categories.find((c: { category: string }) => c.category === 'organizations'),
      { category: 'organizations', name: 'Organizations', critical: false, 'in-app': true, email: 'off' },
    );
    const orgId = await createOrg(t, owner, 'Muted');
    const before = (await mails(owner.email)).length;
    await addMember(t, orgId, owner, await account(t), 'member');
    assert.ok(
      (await list(owner)).body.notifications.some(
        (n: { kind: string; 'organization-id': string }) => n.kind === 'member-joined' && n['organization-id'] === orgId,
      ),
    );
    assert.equal((await mails(owner.email)).length, before, 'no email');
    // back to the default
    await as(t, owner, 'PUT', '/api/account/notification-preferences', { categories: [{ category: 'organizations', email: null }] });
  });

  it("an organization's default applies to its members until they choose", async () => {
    const admin = await account(t);
    const orgId = await createOrg(t, admin, 'Defaults');
    const set = await as(t, admin, 'PUT', `/api/orgs/${orgId}/notification-preferences`, { categories: [{ category: 'organizations', email: 'off' }] });
    assert.equal(set.status, 200, set.text);
    const otherAdmin = await account(t);
    await addMember(t, orgId, admin, otherAdmin, 'admin');
    const before = (await mails(otherAdmin.email)).length;
    await addMember(t, orgId, admin, await account(t), 'member');
    assert.equal((await mails(otherAdmin.email)).length, before, "the organization's default: no email");
    await as(t, otherAdmin, 'PUT', '/api/account/notification-preferences', { categories: [{ category: 'organizations', email: 'immediately' }] });
    await addMember(t, orgId, admin, await account(t), 'member');
    assert.equal((await mails(otherAdmin.email)).length, before + 1, 'their own choice wins');
    const member = await account(t);
    await addMember(t, orgId, admin, member, 'member');
    assert.equal((await as(t, member, 'GET', `/api/orgs/${orgId}/notification-preferences`)).status, 403, 'admins only');
  });

  it('gathers a daily category into one digest at its time, with none of their own', async () => {
    const who = await account(t);
    await as(t, who, 'PUT', '/api/account/notification-preferences', { categories: [{ category: 'organizations', email: 'daily' }] });
    const orgId = await createOrg(t, who, 'Digest');
    for (let i = 0; i < 3; i++) await addMember(t, orgId, who, await account(t), 'member');
    assert.equal((await mails(who.email)).filter((m) => m.kind === 'notification').length, 0);
    const { digest } = t.system.services(notificationsModule);
    const early = new Date();
    early.setUTCHours(7, 59, 0, 0);
    assert.equal(await digest.runIfDue(early), 0, 'not before 08:00 UTC');
    const due = new Date(Date.UTC(2099, 0, 1, 8, 0));
    assert.ok((await digest.runIfDue(due)) >= 1);
    assert.equal(await digest.runIfDue(due), 0, 'once a day, across instances');
    const digests = (await mails(who.email)).filter((m) => m.kind === 'notification-digest');
    assert.equal(digests.length, 1);
    assert.match(digests[0]!.text ?? '', /joined Digest[\s\S]*joined Digest[\s\S]*joined Digest/);
    assert.ok(digests[0]!.headers['List-Unsubscribe']);
  });

  it('one click unsubscribes without a session; a tampered token changes nothing', async () => {
    const who = await account(t);
    const orgId = await createOrg(t, who, 'Unsub');
    await addMember(t, orgId, who, await account(t), 'member');
    const email = (await mails(who.email)).find((m) => m.kind === 'notification')!;
    const link = /^<(.+)>$/.exec(email.headers['List-Unsubscribe']!)![1]!;
    const tampered = await fetch(`${link.slice(0, -2)}xx`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });
    assert.equal(tampered.status, 400);
    const page = await fetch(link);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<form method="post"/);
    assert.equal(
      (await as(t, who, 'GET', '/api/account/notification-preferences')).body.categories.find((c: { category: string }) => c.category === 'organizations')
        .email,
      'immediately',
      'a GET changes nothing',
    );
    const clicked = await fetch(link, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
    assert.equal(clicked.status, 200);
    assert.equal(
      (await as(t, who, 'GET', '/api/account/notification-preferences')).body.categories.find((c: { category: string }) => c.category === 'organizations')
        .email,
      'off',
    );
  });

  it('streams live: 401 without a valid token, new notifications and the unread count, Last-Event-ID, the cap, log-out ends it', async () => {
    assert.equal((await fetch(`${t.url}/api/notifications/stream`)).status, 401);
    assert.equal((await openStream(t.url, 'not-a-token')).status, 401);
    const who = await account(t);
    const orgId = await createOrg(t, who, 'Live');
    const stream = await openStream(t.url, who.token);
    assert.equal(stream.status, 200);
    await stream.next('unread-count');
    await addMember(t, orgId, who, await account(t), 'member');
    const first = await stream.next('notification', 1500);
    assert.equal(first.data.kind, 'member-joined');
    assert.equal(first.id, first.data.cursor);
    assert.ok((await stream.next('unread-count')).data['unread-count'] >= 1);
    // the cap: two at once for this account (NOTIFICATION_STREAMS_PER_ACCOUNT=2)
    const second = await openStream(t.url, who.token, first.id);
    assert.equal(second.status, 200);
    const third = await openStream(t.url, who.token);
    assert.equal(third.status, 429);
    second.close();
    // a reconnect after the first gets what came after it
    await addMember(t, orgId, who, await account(t), 'member');
    await stream.next('notification', 1500);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const again = await openStream(t.url, who.token, first.id);
    assert.equal(again.status, 200);
    const missed = await again.next('notification');
    assert.ok(BigInt(missed.data.cursor) > BigInt(first.id!));
    again.close();
    // log-out ends the stream within a second
    stream.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const session = await logIn(t.client, who.email);
    const own = await openStream(t.url, session.body['access-token']);
    assert.equal(own.status, 200);
    const out = await t.client('POST', '/api/account/log-out', { body: { 'refresh-token': session.body['refresh-token'] } });
    assert.equal(out.status, 204, out.text);
    const end = await own.next('end', 2500);
    assert.equal(end.data.reason, 'session-ended');
    await own.ended;
  });
});
