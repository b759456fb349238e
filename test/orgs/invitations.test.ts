/** Invitations: the email, acceptance by the verified invited address only, expiry, reuse, revocation; queries and export. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { hashToken } from '../../src/auth/refresh-tokens.js';
import { uniqueEmail } from '../support/auth.js';
import { ALL_FORMATS } from '../support/http.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { account, addMember, as, createOrg, mailedToken, verify } from './support.js';

for (const db of testDatabases()) {
  describe(`Organization invitations on ${db.name}`, () => {
    let t: TestSystem;
    before(async () => {
      t = await startSystem(db);
    });
    after(async () => t?.stop());

    const accept = (who: Parameters<typeof as>[1], token: string) => as(t, who, 'POST', '/api/invitations/accept', { token });

    it('emails a link that the invited, verified account accepts once, landing in the organization with the role', async () => {
      const [a, b] = await Promise.all([account(t), account(t)]);
      const org = await createOrg(t, a, 'Globex');
      const invited = await as(t, a, 'POST', `/api/orgs/${org}/invitations`, { email: b.email.toUpperCase(), role: 'admin' });
      assert.equal(invited.status, 201, invited.text);
      assert.deepEqual(Object.keys(invited.body).sort(), ['email', 'expires-at', 'id', 'role']);
      assert.equal(invited.body.email, b.email);
      const days = (Date.parse(invited.body['expires-at']) - Date.now()) / 86_400_000;
      assert.ok(days > 6.9 && days <= 7, `expires in 7 days, not ${days}`);

      const [message] = await t.system.mail.mailbox.list({ to: b.email, kind: 'invitation' });
      assert.match(message.subject, /Globex/);
      assert.match(message.text ?? '', /\/invitations\/accept\?token=/);
      const token = await mailedToken(t, b.email, 'invitation');

      const pending = await as(t, a, 'GET', `/api/orgs/${org}/invitations`);
      assert.deepEqual(
        pending.body.invitations.map((i: { id: string }) => i.id),
        [invited.body.id],
      );

      assert.equal((await accept(undefined, token)).status, 401);
      const res = await accept(b, token);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.id, org);
      assert.equal(res.body.role, 'admin');
      assert.equal(res.body.personal, false);
      const members = await as(t, b, 'GET', `/api/orgs/${org}/members`);
      assert.deepEqual(
        members.body.members.map((m: { email: string; role: string }) => [m.email, m.role]),
        [
          [a.email, 'owner'],
          [b.email, 'admin'],
        ],
      );
      assert.deepEqual((await as(t, a, 'GET', `/api/orgs/${org}/invitations`)).body.invitations, []);

      const again = await accept(b, token);
      assert.equal(again.status, 400);
      assert.equal(again.body.type, 'invalid-token');
    });

    it('refuses another account (403) and an unverified one until it verifies', async () => {
      const a = await account(t);
      const other = await account(t);
      const email = uniqueEmail('late');
      const org = await createOrg(t, a);
      assert.equal((await as(t, a, 'POST', `/api/orgs/${org}/invitations`, { email })).status, 201);
      const token = await mailedToken(t, email, 'invitation');

      const wrong = await accept(other, token);
      assert.equal(wrong.status, 403);
      assert.equal(wrong.body.type, 'forbidden');
      assert.equal(wrong.body.reason, 'email-mismatch');
      assert.match(wrong.body.message, /another email address/);

      const invitee = await account(t, { email, verified: false });
      const unverified = await accept(invitee, token);
      assert.equal(unverified.status, 403);
      assert.equal(unverified.body.reason, 'email-unverified');
      await verify(t, email, invitee);
      const ok = await accept(invitee, token);
      assert.equal(ok.status, 200, ok.text);
      assert.equal(ok.body.role, 'member');
    });

    it('refuses an expired or revoked invitation with invalid-token, and lets a new one replace an expired one', async () => {
      const a = await account(t);
      const b = await account(t);
      const org = await createOrg(t, a);
      const first = await as(t, a, 'POST', `/api/orgs/${org}/invitations`, { email: b.email });
      const token = await mailedToken(t, b.email, 'invitation');
      // a second invitation while one is pending: 409
      assert.equal((await as(t, a, 'POST', `/api/orgs/${org}/invitations`, { email: b.email })).status, 409);
      await t.system.database.db
        .updateTable('invitation')
        .set({ expires_at: sql`now() - interval '1 second'` })
        .where('token_hash', '=', hashToken(token))
        .execute();
      const expired = await accept(b, token);
      assert.equal(expired.status, 400);
      assert.equal(expired.body.type, 'invalid-token');
      assert.deepEqual((await as(t, a, 'GET', `/api/orgs/${org}/invitations`)).body.invitations, []);

      const second = await as(t, a, 'POST', `/api/orgs/${org}/invitations`, { email: b.email });
      assert.equal(second.status, 201, second.text);
      assert.notEqual(second.body.id, first.body.id);
      const secondToken = await mailedToken(t, b.email, 'invitation');
      assert.equal((await as(t, a, 'DELETE', `/api/orgs/${org}/invitations/${second.body.id}`)).status, 204);
      assert.equal((await as(t, a, 'DELETE', `/api/orgs/${org}/invitations/${second.body.id}`)).status, 404);
      const revoked = await accept(b, secondToken);
      assert.equal(revoked.status, 400);
      assert.equal(revoked.body.type, 'invalid-token');
      assert.equal((await accept(b, 'not-a-token')).status, 400);
    });

    it("refuses to invite a member again, and another organization's invitation cannot be revoked through this one", async () => {
      const a = await account(t);
      const b = await account(t);
      const org = await createOrg(t, a);
      const otherOrg = await createOrg(t, b);
      await addMember(t, org, a, b, 'member');
      const again = await as(t, a, 'POST', `/api/orgs/${org}/invitations`, { email: b.email });
      assert.equal(again.status, 409);
      const foreign = await as(t, b, 'POST', `/api/orgs/${otherOrg}/invitations`, { email: uniqueEmail() });
      assert.equal((await as(t, a, 'DELETE', `/api/orgs/${org}/invitations/${foreign.body.id}`)).status, 404);
      const bad = await as(t, a, 'POST', `/api/orgs/${org}/invitations`, { email: 'not-an-email', role: 'boss' });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.type, 'request-coercion');
      // the address: its format in words, not also the pattern's regular expression
      assert.deepEqual(
        bad.body.errors.filter((e: { path: string }) => e.path === '/email').map((e: { message: string }) => e.message),
        ['must match format "email"'],
        bad.text,
      );
      // one entry for the role, naming the choices (not one "must be equal to constant" per choice)
      const roleErrors = bad.body.errors.filter((e: { path: string }) => e.path === '/role');
      assert.deepEqual(
        roleErrors.map((e: { message: string }) => e.message),
        ['must be one of "owner", "admin", "member"'],
        bad.text,
      );
    });

    for (const format of ALL_FORMATS) {
      it(`creates and lists organizations in ${format.name}`, async () => {
        const a = await account(t);
        const created = await t.client('POST', '/api/orgs', {
          format,
          body: { name: `Initech ${format.name} Ltd.` },
          headers: { authorization: `Bearer ${a.token}` },
        });
        assert.equal(created.status, 201, created.text);
        assert.equal(created.headers['content-type'], format.mime);
        assert.equal(created.body.slug, `initech-${format.name}-ltd`);
        assert.equal(created.body.role, 'owner');
        const list = await t.client('GET', '/api/orgs', { format, headers: { authorization: `Bearer ${a.token}` } });
        assert.deepEqual(
          list.body.organizations.map((o: { personal: boolean }) => o.personal),
          [true, false],
        );
      });
    }

    it("makes a new slug when the name's is taken, and answers 409 for a taken slug given explicitly", async () => {
      const a = await account(t);
      const first = await as(t, a, 'POST', '/api/orgs', { name: 'Same Name' });
      const second = await as(t, a, 'POST', '/api/orgs', { name: 'Same Name' });
      assert.equal(second.status, 201);
      assert.notEqual(second.body.slug, first.body.slug);
      assert.match(second.body.slug, /^same-name-[0-9a-f]{6}$/);
      const taken = await as(t, a, 'POST', '/api/orgs', { name: 'x', slug: first.body.slug });
      assert.equal(taken.status, 409);
      assert.equal(taken.body.field, 'slug');
      assert.equal((await as(t, a, 'PATCH', `/api/orgs/${second.body.id}`, { slug: first.body.slug })).status, 409);
    });

    it('keeps a name trimmed and refuses one of spaces only, naming the field', async () => {
      const a = await account(t);
      const created = await as(t, a, 'POST', '/api/orgs', { name: '  Spaced Out  ' });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.name, 'Spaced Out');
      assert.equal(created.body.slug, 'spaced-out');
      const renamed = await as(t, a, 'PATCH', `/api/orgs/${created.body.id}`, { name: ' Renamed ' });
      assert.equal(renamed.body.name, 'Renamed');
      for (const [method, path] of [
        ['POST', '/api/orgs'],
        ['PATCH', `/api/orgs/${created.body.id}`],
      ] as const) {
        const blank = await as(t, a, method, path, { name: '   ' });
        assert.equal(blank.status, 400, blank.text);
        assert.ok(
          blank.body.errors.some((e: { path: string; message: string }) => e.path === '/name' && e.message === 'must not be blank'),
          blank.text,
        );
      }
    });

    it('answers the query kinds orgs/list and orgs/members, with the membership checked', async () => {
      const [a, b] = await Promise.all([account(t), account(t)]);
      const org = await createOrg(t, a);
      const list = await as(t, a, 'POST', '/api/cqrs/query', { 'query/kind': 'orgs/list' });
      assert.equal(list.status, 200, list.text);
      assert.ok(list.body.organizations.some((o: { id: string }) => o.id === org));
      const members = await as(t, a, 'POST', '/api/cqrs/query', { 'query/kind': 'orgs/members', 'org-id': org });
      assert.deepEqual(
        members.body.members.map((m: { 'account-id': string }) => m['account-id']),
        [a.id],
      );
      const foreign = await as(t, b, 'POST', '/api/cqrs/query', { 'query/kind': 'orgs/members', 'org-id': org });
      assert.equal(foreign.status, 404);
      assert.equal((await as(t, undefined, 'POST', '/api/cqrs/query', { 'query/kind': 'orgs/list' })).status, 401);
    });

    it('lists the memberships in the account export', async () => {
      const a = await account(t);
      const org = await createOrg(t, a, 'Exported');
      const res = await as(t, a, 'GET', '/api/account/export');
      assert.equal(res.status, 200, res.text);
      const names = res.body.memberships.map((m: { organization: string; role: string; personal: boolean }) => [m.organization, m.role, m.personal]);
      assert.equal(names.length, 2);
      assert.deepEqual(names[1], ['Exported', 'owner', false]);
      assert.ok(res.body.memberships.some((m: { 'organization-id': string }) => m['organization-id'] === org));
    });
  });
}
