/**
 * API keys over HTTP on both databases: made by admins and shown once, stored as a hash, listed
 * without secrets; acting in their organization with their role (404 elsewhere, 401 where keys
 * are not taken); revoked at once; malformed and unknown keys refused without a database error
 * and limited per address; `last-used-at`; the audit entries, and an organization's deletion
 * taking its keys and the entries naming them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { Type } from 'typebox';
import { appendAudit, originOf } from '../../src/audit/log.js';
import { hashApiKey, newApiKey } from '../../src/api-keys/format.js';
import { ApiKeyVerifier, INVALID_KEY, MALFORMED_KEY } from '../../src/api-keys/verifier.js';
import { API_KEYS_NOT_ON_THIS_ROUTE, API_KEYS_ONLY_ON_ORG_ROUTES } from '../../src/auth/authenticator.js';
import { ErrorBody } from '../../src/http/errors.js';
import { membershipResolver } from '../../src/orgs/data.js';
import { ref, route, type RouteGroup } from '../../src/http/routes.js';
import { API_KEYS_ONLY_ON_ORG_KINDS } from '../../src/http/queries.js';
import { account, addMember, as, createOrg, type TestAccount } from '../orgs/support.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

const bearer = (key: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${key}`, ...extra });
const KEY_SHAPE = /^sk_([0-9A-Za-z]{8})_[0-9A-Za-z]{38}$/;

/** A route that records an audit entry with the handler's `actor`: what a module that takes keys does. */
function probeRoutes(t: () => TestSystem): RouteGroup {
  return {
    prefix: '/api/test-probe',
    auth: 'required',
    // the system's database, once it is built
    memberships: (organizationId, accountId) => membershipResolver(t().system.database.db)(organizationId, accountId),
    routes: [
      route({
        method: 'POST',
        path: '/:id/touch',
        summary: 'Records a test audit entry',
        orgRole: 'member',
        apiKeys: true,
        schemas: { params: Type.Object({ id: Type.String({ format: 'uuid' }) }), response: { 204: null, 403: ref(ErrorBody) } },
        async handler({ request, membership, actor }) {
          await t()
            .system.database.db.transaction()
            .execute((trx) =>
              appendAudit(trx, {
                action: 'test.touched',
                organizationId: membership!.organizationId,
                actor: actor!,
                origin: originOf(request),
              }),
            );
          return undefined;
        },
      }),
    ],
  };
}

for (const db of testDatabases()) {
  describe(`API keys on ${db.name}`, () => {
    let t: TestSystem;
    let owner: TestAccount;
    let admin: TestAccount;
    let member: TestAccount;
    let orgId: string;
    let otherOrgId: string;

    const createKey = async (who: TestAccount, role: 'admin' | 'member', name = `${role} key`, org = orgId) => {
      const res = await as(t, who, 'POST', `/api/orgs/${org}/api-keys`, { name, role });
      assert.equal(res.status, 201, res.text);
      return res.body as { id: string; key: string; prefix: string; role: string; name: string };
    };
    const withKey = (key: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      t.client(method, path, { body, headers: bearer(key, headers) });

    before(async () => {
      t = await startSystem(db, { TRUST_PROXY: '1', API_KEY_LIMIT_ADDRESS: '3/60' }, { extraRouteGroups: [probeRoutes(() => t)] });
      owner = await account(t);
      admin = await account(t);
      member = await account(t);
      orgId = await createOrg(t, owner, 'Keyed');
      otherOrgId = await createOrg(t, owner, 'Other');
      await addMember(t, orgId, owner, admin, 'admin');
      await addMember(t, orgId, owner, member, 'member');
    });
    after(async () => t?.stop());

    it('makes a key for admins, shows it once and stores only its hash', async () => {
      const created = await createKey(admin, 'member', 'CI deploys');
      assert.match(created.key, KEY_SHAPE);
      assert.equal(KEY_SHAPE.exec(created.key)![1], created.prefix);
      assert.deepEqual(Object.keys(created).sort(), ['created-at', 'id', 'key', 'last-used-at', 'name', 'prefix', 'role']);
      assert.equal((created as Record<string, unknown>)['last-used-at'], null);

      const list = await as(t, owner, 'GET', `/api/orgs/${orgId}/api-keys`);
      assert.equal(list.status, 200);
      const listed = list.body['api-keys'].find((k: { id: string }) => k.id === created.id);
      assert.deepEqual(listed, {
        id: created.id,
        name: 'CI deploys',
        role: 'member',
        prefix: created.prefix,
        'created-at': (created as Record<string, unknown>)['created-at'],
        'last-used-at': null,
      });
      assert.ok(!list.text.includes(created.key.slice(12)), 'the list has no secret');

      const row = await t.system.database.db.selectFrom('api_key').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
      assert.equal(row.secret_hash, hashApiKey(created.key));
      assert.ok(!JSON.stringify(row).includes(created.key.slice(12)), 'no column holds the key');
      assert.equal(row.created_by, admin.id);

      // the secret never reaches the log: not from the answer, not from a request that carries it anywhere
      assert.equal((await withKey(created.key, 'GET', `/api/orgs/${orgId}`)).status, 200);
      await t.client('GET', `/api/health?probe=${created.key}`);
      await t.client('GET', `/api/orgs/${created.key}/members`, { headers: bearer(created.key) });
      const log = await t.logText();
      assert.ok(log.includes(`sk_${created.prefix}_[REDACTED]`), 'the key in the query string is logged redacted, its prefix kept');
      assert.ok(!log.includes(created.key.slice(12)), 'the secret is nowhere in the log file');
    });

    it('refuses an owner key, a blank name, a member, and a key managing keys', async () => {
      const ownerKey = await as(t, owner, 'POST', `/api/orgs/${orgId}/api-keys`, { name: 'x', role: 'owner' });
      assert.equal(ownerKey.status, 400);
      assert.equal(ownerKey.body.type, 'request-coercion');
      assert.equal((await as(t, admin, 'POST', `/api/orgs/${orgId}/api-keys`, { name: '   ', role: 'member' })).status, 400);
      assert.equal((await as(t, member, 'POST', `/api/orgs/${orgId}/api-keys`, { name: 'x', role: 'member' })).status, 403);
      assert.equal((await as(t, member, 'GET', `/api/orgs/${orgId}/api-keys`)).status, 403);
      assert.equal((await as(t, admin, 'GET', `/api/orgs/${otherOrgId}/api-keys`)).status, 404, 'not a member of the other organization');
      const { key } = await createKey(admin, 'admin');
      for (const [method, path] of [
        ['GET', `/api/orgs/${orgId}/api-keys`],
        ['POST', `/api/orgs/${orgId}/api-keys`],
      ]) {
        const res = await withKey(key, method, path, method === 'POST' ? { name: 'minted', role: 'admin' } : undefined);
        assert.equal(res.status, 401, `${method} ${path}`);
        assert.equal(res.body.message, API_KEYS_NOT_ON_THIS_ROUTE);
      }
    });

    it('acts in its organization with its role: 403 below it, 404 in another organization, 401 where keys are not taken', async () => {
      const adminKeyMade = await createKey(owner, 'admin');
      const adminKey = adminKeyMade.key;
      const memberKey = (await createKey(owner, 'member')).key;
      const org = await withKey(memberKey, 'GET', `/api/orgs/${orgId}`);
      assert.equal(org.status, 200);
      assert.equal(org.body.role, 'member', "the key's role is the caller's");
      assert.equal((await withKey(memberKey, 'GET', `/api/orgs/${orgId}/members`)).body.members.length, 3);
      const denied = await withKey(memberKey, 'GET', `/api/orgs/${orgId}/invitations`);
      assert.equal(denied.status, 403);
      assert.deepEqual([denied.body['required-role'], denied.body.role], ['admin', 'member']);
      assert.equal((await withKey(memberKey, 'PATCH', `/api/orgs/${orgId}`, { name: 'Renamed by a member key' })).status, 403);
      assert.equal((await withKey(adminKey, 'GET', `/api/orgs/${orgId}/invitations`)).status, 200);
      // no CSRF token needed: a key is not a cookie
      const renamed = await withKey(adminKey, 'PATCH', `/api/orgs/${orgId}`, { name: 'Keyed Inc' });
      assert.equal(renamed.status, 200, renamed.text);
      assert.equal(renamed.body.name, 'Keyed Inc');
      // the audit entry names the key as the actor, and no account
      const entry = await t.system.database.db
        .selectFrom('audit_entry')
        .select(['actor_api_key_id', 'actor_account_id', 'account_id'])
        .where('organization_id', '=', orgId)
        .where('action', '=', 'org.renamed')
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow();
      assert.deepEqual(entry, { actor_api_key_id: adminKeyMade.id, actor_account_id: null, account_id: null });
      // an unsafe request from a foreign page is refused whatever it carries
      assert.equal((await withKey(adminKey, 'PATCH', `/api/orgs/${orgId}`, { name: 'x' }, { origin: 'https://evil.example' })).status, 403);

      for (const path of [`/api/orgs/${otherOrgId}`, `/api/orgs/${otherOrgId}/members`, '/api/orgs/00000000-0000-4000-8000-000000000000']) {
        const res = await withKey(adminKey, 'GET', path);
        assert.equal(res.status, 404, path);
        assert.equal(res.body.message, 'No such organization');
      }
      // a public route ignores credentials: a key is neither refused nor used there
      assert.equal((await withKey(adminKey, 'GET', '/api/health')).status, 200);
      for (const [method, path] of [
        ['GET', '/api/account/me'],
        ['GET', '/api/orgs'],
        ['POST', '/api/orgs'],
        ['GET', '/api/account/sessions'],
      ]) {
        const res = await withKey(adminKey, method, path, method === 'POST' ? { name: 'x' } : undefined);
        assert.equal(res.status, 401, `${method} ${path}`);
        assert.equal(res.body.type, 'unauthorized');
        assert.equal(res.body.message, API_KEYS_ONLY_ON_ORG_ROUTES);
      }
      // a member change needs a person
      const invitation = await withKey(adminKey, 'DELETE', `/api/orgs/${orgId}/invitations/00000000-0000-4000-8000-000000000000`);
      assert.deepEqual([invitation.status, invitation.body.message], [401, API_KEYS_NOT_ON_THIS_ROUTE]);
    });

    it('queries the kinds of its organization', async () => {
      const { key } = await createKey(admin, 'member');
      const members = await withKey(key, 'POST', '/api/cqrs/query', { 'query/kind': 'orgs/members', 'org-id': orgId });
      assert.equal(members.status, 200, members.text);
      assert.equal(members.body.members.length, 3);
      const other = await withKey(key, 'POST', '/api/cqrs/query', { 'query/kind': 'orgs/members', 'org-id': otherOrgId });
      assert.equal(other.status, 404);
      for (const kind of ['account/me', 'orgs/list', 'payments/events']) {
        const res = await withKey(key, 'POST', '/api/cqrs/query', { 'query/kind': kind });
        assert.deepEqual([res.status, res.body.message], [401, API_KEYS_ONLY_ON_ORG_KINDS], kind);
      }
      // an account still queries as before
      assert.equal((await as(t, member, 'POST', '/api/cqrs/query', { 'query/kind': 'orgs/members', 'org-id': orgId })).status, 200);
      assert.equal((await as(t, member, 'POST', '/api/cqrs/query', { 'query/kind': 'orgs/members', 'org-id': otherOrgId })).status, 404);
    });

    it('refuses malformed keys from their text, remembers unknown ones, and limits failed lookups per address', async () => {
      const { key } = await createKey(admin, 'member');
      const from = (address: string) => ({ 'x-forwarded-for': address });
      assert.equal((await withKey(key, 'GET', `/api/orgs/${orgId}`, undefined, from('10.1.0.1'))).status, 200, 'verified: kept in memory');
      const bad = [
        'sk_',
        'sk_short',
        `${key.slice(0, -1)}${key.endsWith('0') ? '1' : '0'}`,
        key.slice(0, -1),
        `${key}0`,
        `sk_${'x'.repeat(4000)}`,
        'sk_AAAAAAAA_' + '\u00e9'.repeat(38),
      ];
      for (const text of bad) {
        const res = await withKey(text, 'GET', `/api/orgs/${orgId}`, undefined, from('10.1.0.1'));
        assert.deepEqual([res.status, res.body.type, res.body.message], [401, 'unauthorized', MALFORMED_KEY], text.slice(0, 60));
      }
      const unknown = newApiKey().key;
      // the same unknown key again and again: looked up once, then refused from memory
      for (let i = 0; i < 5; i++) {
        const res = await withKey(unknown, 'GET', `/api/orgs/${orgId}`, undefined, from('10.1.0.1'));
        assert.deepEqual([res.status, res.body.message], [401, INVALID_KEY]);
      }
      // so far one failed lookup from 10.1.0.1 (limit 3 a minute): two more, then 429 before any lookup
      for (let i = 0; i < 2; i++) assert.equal((await withKey(newApiKey().key, 'GET', `/api/orgs/${orgId}`, undefined, from('10.1.0.1'))).status, 401);
      const limited = await withKey(newApiKey().key, 'GET', `/api/orgs/${orgId}`, undefined, from('10.1.0.1'));
      assert.equal(limited.status, 429);
      assert.equal(limited.body.type, 'rate-limited');
      assert.ok(Number(limited.headers['retry-after']) >= 1);
      // a key this instance knows still works from that address; another address is not limited
      assert.equal((await withKey(key, 'GET', `/api/orgs/${orgId}`, undefined, from('10.1.0.1'))).status, 200);
      assert.equal((await withKey(newApiKey().key, 'GET', `/api/orgs/${orgId}`, undefined, from('10.1.0.2'))).status, 401);
      const errors = (await t.logEntries()).filter((e) => e.level === 'error' || e.level === 'fatal');
      assert.deepEqual(errors, [], 'no database error, no exception');
    });

    it('revokes a key at once, for good; the list and the audit log say so', async () => {
      const created = await createKey(admin, 'admin', 'to revoke');
      assert.equal((await withKey(created.key, 'GET', `/api/orgs/${orgId}`)).status, 200, 'verified and kept in memory');
      const revoke = await as(t, owner, 'DELETE', `/api/orgs/${orgId}/api-keys/${created.id}`);
      assert.equal(revoke.status, 204, revoke.text);
      const refused = await withKey(created.key, 'GET', `/api/orgs/${orgId}`);
      assert.deepEqual([refused.status, refused.body.message], [401, INVALID_KEY]);
      assert.equal((await withKey(created.key, 'POST', '/api/cqrs/query', { 'query/kind': 'orgs/members', 'org-id': orgId })).status, 401);
      assert.equal((await as(t, owner, 'DELETE', `/api/orgs/${orgId}/api-keys/${created.id}`)).status, 404, 'revoked already');
      assert.equal((await as(t, owner, 'DELETE', `/api/orgs/${otherOrgId}/api-keys/${created.id}`)).status, 404, 'not a key of that organization');
      assert.equal((await as(t, member, 'DELETE', `/api/orgs/${orgId}/api-keys/${created.id}`)).status, 403);
      const list = await as(t, owner, 'GET', `/api/orgs/${orgId}/api-keys`);
      assert.ok(!list.body['api-keys'].some((k: { id: string }) => k.id === created.id));

      const kysely = t.system.database.db;
      const row = await kysely.selectFrom('api_key').select(['revoked_at', 'revoked_by']).where('id', '=', created.id).executeTakeFirstOrThrow();
      assert.ok(row.revoked_at);
      assert.equal(row.revoked_by, owner.id);
      const entries = await kysely.selectFrom('audit_entry').selectAll().where('target_id', '=', created.id).orderBy('id').execute();
      assert.deepEqual(
        entries.map((e) => [e.action, e.organization_id, e.actor_account_id, e.actor_api_key_id, e.target_type]),
        [
          ['api-key.created', orgId, admin.id, null, 'api-key'],
          ['api-key.revoked', orgId, owner.id, null, 'api-key'],
        ],
      );
      assert.deepEqual(entries[0].details, { name: 'to revoke', role: 'admin', prefix: created.prefix });
      assert.equal(entries[1].ip, '127.0.0.1');
      assert.ok(!JSON.stringify(entries).includes(created.key.slice(12)));
    });

    it('records last-used-at on first use, then at most once a minute per key', async () => {
      const created = await createKey(admin, 'member');
      assert.equal((await withKey(created.key, 'GET', `/api/orgs/${orgId}`)).status, 200);
      let used: string | null = null;
      for (let i = 0; i < 50 && !used; i++) {
        const list = await as(t, admin, 'GET', `/api/orgs/${orgId}/api-keys`);
        used = list.body['api-keys'].find((k: { id: string }) => k.id === created.id)['last-used-at'];
        if (!used) await sleep(20);
      }
      assert.ok(used, 'the list shows the first use');

      // verifiers of their own, standing for instances: the write follows the key's last use, not each request
      const kysely = t.system.database.db;
      const lastUsed = async () =>
        (await kysely.selectFrom('api_key').select('last_used_at').where('id', '=', created.id).executeTakeFirstOrThrow()).last_used_at;
      const setLastUsed = (at: Date) => kysely.updateTable('api_key').set({ last_used_at: at }).where('id', '=', created.id).execute();
      const instance = () => new ApiKeyVerifier({ db: kysely, log: t.system.logs.logger('test'), limit: null, store: 'memory' });
      const longAgo = new Date('2001-01-01T00:00:00Z');
      await setLastUsed(longAgo);
      const a = instance();
      assert.equal(((await a.verify(created.key, '127.0.0.1')) as { id: string }).id, created.id);
      await a.settle();
      assert.ok((await lastUsed())!.getTime() > longAgo.getTime(), 'written: the last use was long ago');
      await setLastUsed(longAgo);
      for (let i = 0; i < 5; i++) await a.verify(created.key, '127.0.0.1');
      await a.settle();
      assert.equal((await lastUsed())!.getTime(), longAgo.getTime(), 'not written again within the minute');
      const recently = new Date(Date.now() - 30_000);
      await setLastUsed(recently);
      const b = instance();
      await b.verify(created.key, '127.0.0.1');
      await b.settle();
      assert.equal((await lastUsed())!.getTime(), recently.getTime(), 'another instance skips a key used within the minute');
      await Promise.all([a.stop(), b.stop()]);
    });

    it("gives handlers the key as the actor; an organization's deletion takes its keys and their entries", async () => {
      const doomed = await createOrg(t, owner, 'Doomed');
      const { key, id } = await createKey(owner, 'member', 'doomed key', doomed);
      assert.equal((await withKey(key, 'POST', `/api/test-probe/${doomed}/touch`)).status, 204);
      assert.equal((await as(t, owner, 'POST', `/api/test-probe/${doomed}/touch`)).status, 204);
      const kysely = t.system.database.db;
      const touched = await kysely
        .selectFrom('audit_entry')
        .select(['actor_account_id', 'actor_api_key_id'])
        .where('organization_id', '=', doomed)
        .where('action', '=', 'test.touched')
        .orderBy('id')
        .execute();
      assert.deepEqual(touched, [
        { actor_account_id: null, actor_api_key_id: id },
        { actor_account_id: owner.id, actor_api_key_id: null },
      ]);
      // an entry naming a key belongs to the key's organization
      await assert.rejects(
        appendAudit(kysely, { action: 'test.elsewhere', organizationId: orgId, actor: { apiKeyId: id }, origin: { ip: null, userAgent: null } }),
      );
      await assert.rejects(appendAudit(kysely, { action: 'test.elsewhere', actor: { apiKeyId: id }, origin: { ip: null, userAgent: null } }));

      assert.equal((await as(t, owner, 'DELETE', `/api/orgs/${doomed}`)).status, 204);
      let status = 0;
      for (let i = 0; i < 50 && status !== 401; i++) {
        status = (await withKey(key, 'GET', `/api/orgs/${doomed}`)).status;
        if (status !== 401) await sleep(20);
      }
      assert.equal(status, 401, 'the key went with its organization');
      assert.equal((await kysely.selectFrom('api_key').select('id').where('id', '=', id).execute()).length, 0);
      assert.equal((await kysely.selectFrom('audit_entry').select('id').where('organization_id', '=', doomed).execute()).length, 0);
    });

    it('documents the routes that take keys', async () => {
      const doc = JSON.parse((await t.client('GET', '/openapi/openapi.json')).text);
      assert.ok(doc.components.securitySchemes.apiKeyAuth);
      // and an OAuth token with orgs:read (docs/oauth.md)
      assert.deepEqual(doc.paths['/api/orgs/{id}/members'].get.security, [{ bearerAuth: [] }, { apiKeyAuth: [] }, { oauth: ['orgs:read'] }]);
      assert.deepEqual(doc.paths['/api/orgs/{id}/api-keys'].post.security, [{ bearerAuth: [] }]);
      assert.ok(doc.paths['/api/orgs/{id}/api-keys/{keyId}'].delete);
      // the database refuses what the application never writes
      await assert.rejects(
        sql`insert into api_key (organization_id, name, role, prefix, secret_hash) values (${orgId}, 'x', 'owner', 'AAAAAAAA', ${hashApiKey('x')})`.execute(
          t.system.database.db,
        ),
      );
    });
  });
}
