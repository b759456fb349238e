/**
 * Outgoing webhooks over HTTP on both databases, against a receiver started here that verifies
 * every delivery with the `standardwebhooks` package: endpoints and their secrets; bad input;
 * each event type in the API's shapes; event filters; nothing written for an organization
 * without endpoints or for a change that rolled back; retries (500, 500, 200), exhaustion and
 * manual retry; redirects not followed; secret rotation; hanging, slow and huge answers; the
 * test event; disabling after WEBHOOK_DISABLE_AFTER with an email to the admins; the log's pages
 * and filter; the audit entries.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { emitWebhookEvent } from '../../src/webhooks/outbox.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/webhooks/event-types.js';
import { account, addMember, as, createOrg, mailedToken, type TestAccount } from '../orgs/support.js';
import { PASSWORD } from '../support/auth.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { createEndpoint, deliveries, receiver, waitFor, type Receiver } from './support.js';

const ENV = {
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_POLL_MS: '20',
  WEBHOOK_RETRY_SCHEDULE: '0.05,0.05',
  WEBHOOK_TIMEOUT: '1',
  WEBHOOK_DISABLE_AFTER: '4',
};

for (const db of testDatabases()) {
  describe(`outgoing webhooks on ${db.name}`, () => {
    let t: TestSystem;
    let owner: TestAccount;
    let admin: TestAccount;
    let member: TestAccount;
    let orgId: string;
    let hook: Receiver;

    before(async () => {
      t = await startSystem(db, ENV);
      hook = await receiver();
      [owner, admin, member] = await Promise.all([account(t), account(t), account(t)]);
      orgId = await createOrg(t, owner, 'Hooked');
      await addMember(t, orgId, owner, admin, 'admin');
      await addMember(t, orgId, owner, member, 'member');
    });
    after(async () => {
      await t?.stop();
      await hook?.close();
    });

    /** a fresh receiver path per test, so each test reads only its own deliveries */
    const at = (name: string) => `${hook.url}/${name}`;
    const to = (name: string) => hook.received.filter((d) => d.path === `/${name}`);
    const rows = async (table: 'webhook_message' | 'webhook_delivery') =>
      Number((await sql<{ n: string }>`select count(*) as n from ${sql.table(table)}`.execute(t.system.database.db)).rows[0].n);

    it('creates endpoints for admins: the secret once in the answer and at /secret, never in lists; members are refused', async () => {
      const created = await as(t, admin, 'POST', `/api/orgs/${orgId}/webhooks`, {
        url: at('create'),
        events: ['member.updated', 'member.added'],
        description: ' CRM sync ',
      });
      assert.equal(created.status, 201, created.text);
      assert.match(created.body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.ok(Buffer.from(created.body.secret.slice(6), 'base64').length >= 24);
      assert.deepEqual(
        { ...created.body, id: undefined, secret: undefined, 'created-at': undefined },
        {
          id: undefined,
          secret: undefined,
          'created-at': undefined,
          url: at('create'),
          events: ['member.updated', 'member.added'],
          description: 'CRM sync',
          enabled: true,
          'disabled-reason': null,
        },
      );
      const list = await as(t, admin, 'GET', `/api/orgs/${orgId}/webhooks`);
      assert.equal(list.status, 200);
      const listed = list.body.webhooks.find((w: { id: string }) => w.id === created.body.id);
      assert.ok(listed);
      assert.equal('secret' in listed, false);
      assert.equal(list.text.includes(created.body.secret), false);
      const one = await as(t, admin, 'GET', `/api/orgs/${orgId}/webhooks/${created.body.id}`);
      assert.deepEqual(one.body, listed);
      const secret = await as(t, owner, 'GET', `/api/orgs/${orgId}/webhooks/${created.body.id}/secret`);
      assert.deepEqual(secret.body, { secret: created.body.secret });
      // stored sealed, not as it is
      const stored = await t.system.database.db
        .selectFrom('webhook_endpoint')
        .select('secret_sealed')
        .where('id', '=', created.body.id)
        .executeTakeFirstOrThrow();
      assert.equal(stored.secret_sealed.includes(created.body.secret.slice(6)), false);
      for (const [method, path] of [
        ['GET', ''],
        ['GET', `/${created.body.id}/secret`],
        ['POST', `/${created.body.id}/rotate-secret`],
      ] as const) {
        const res = await as(t, member, method, `/api/orgs/${orgId}/webhooks${path}`);
        assert.equal(res.status, 403, `${method} ${path}: ${res.text}`);
      }
      const outsider = await account(t);
      assert.equal((await as(t, outsider, 'GET', `/api/orgs/${orgId}/webhooks/${created.body.id}`)).status, 404);
      assert.equal((await as(t, admin, 'GET', `/api/orgs/${orgId}/webhooks/00000000-0000-4000-8000-000000000000`)).status, 404);
      const types = await t.client('GET', '/api/webhooks/event-types');
      assert.deepEqual(types.body, { 'event-types': [...WEBHOOK_EVENT_TYPES] });
    });

    it('refuses a bad URL, a metadata or link-local address and an unknown event type with field errors, storing nothing', async () => {
      const before = (await as(t, admin, 'GET', `/api/orgs/${orgId}/webhooks`)).body.webhooks.length;
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ url: 'not a url', events: ['*'] }, '/url'],
        [{ url: 'ftp://example.com/x', events: ['*'] }, '/url'],
        [{ url: `http://user:pass@127.0.0.1:${hook.port}/x`, events: ['*'] }, '/url'],
        [{ url: `${hook.url}/x#frag`, events: ['*'] }, '/url'],
        // link-local is refused even with WEBHOOK_ALLOW_PRIVATE=true
        [{ url: 'http://169.254.169.254/latest/meta-data/', events: ['*'] }, '/url'],
        [{ url: 'http://[fe80::1]/', events: ['*'] }, '/url'],
        [{ url: 'http://[::ffff:169.254.169.254]/', events: ['*'] }, '/url'],
        [{ url: 'http://does-not-exist.invalid/', events: ['*'] }, '/url'],
        [{ url: at('x'), events: ['member.exploded'] }, '/events/0'],
        [{ url: at('x'), events: ['member.added', 'nope'] }, '/events/1'],
        [{ url: at('x'), events: [] }, '/events'],
        [{ url: at('x') }, '/events'],
      ];
      for (const [body, path] of cases) {
        const res = await as(t, admin, 'POST', `/api/orgs/${orgId}/webhooks`, body);
        assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
        assert.equal(res.body.type, 'request-coercion');
        assert.ok(
          res.body.errors.some((e: { path: string }) => e.path === path),
          `${JSON.stringify(body)}: ${res.text}`,
        );
      }
      const metadata = await as(t, admin, 'POST', `/api/orgs/${orgId}/webhooks`, { url: 'http://169.254.169.254/', events: ['*'] });
      assert.match(metadata.body.errors[0].message, /link-local/);
      assert.equal((await as(t, admin, 'GET', `/api/orgs/${orgId}/webhooks`)).body.webhooks.length, before);
    });

    it("delivers every event type in the API's shapes, signed per Standard Webhooks, the webhook-id being the log's message id", async () => {
      const org = await createOrg(t, owner, 'All events');
      const endpoint = await createEndpoint(t, owner, org, { url: at('all'), events: ['*'] });
      hook.secrets.push(endpoint.secret);
      const joiner = await account(t);
      const invited = await as(t, owner, 'POST', `/api/orgs/${org}/invitations`, { email: joiner.email, role: 'member' });
      assert.equal(invited.status, 201);
      const accepted = await as(t, joiner, 'POST', '/api/invitations/accept', { token: await mailedToken(t, joiner.email, 'invitation') });
      assert.equal(accepted.status, 200);
      assert.equal((await as(t, owner, 'PATCH', `/api/orgs/${org}/members/${joiner.id}`, { role: 'admin' })).status, 200);
      assert.equal((await as(t, owner, 'PATCH', `/api/orgs/${org}`, { name: 'All events, renamed' })).status, 200);
      const key = await as(t, owner, 'POST', `/api/orgs/${org}/api-keys`, { name: 'ci', role: 'member' });
      assert.equal((await as(t, owner, 'DELETE', `/api/orgs/${org}/api-keys/${key.body.id}`)).status, 204);
      const second = await as(t, owner, 'POST', `/api/orgs/${org}/invitations`, { email: 'nobody@example.com' });
      assert.equal((await as(t, owner, 'DELETE', `/api/orgs/${org}/invitations/${second.body.id}`)).status, 204);
      assert.equal((await as(t, owner, 'DELETE', `/api/orgs/${org}/members/${joiner.id}`)).status, 204);
      const expected = [
        'invitation.created',
        'invitation.accepted',
        'member.added',
        'member.updated',
        'organization.updated',
        'api-key.created',
        'api-key.revoked',
        'invitation.created',
        'invitation.revoked',
        'member.removed',
      ];
      await waitFor('every event', () => to('all').length >= expected.length);
      await sleep(100);
      const got = to('all');
      assert.equal(got.length, expected.length);
      assert.equal(hook.verified('/all').length, expected.length);
      assert.deepEqual(got.map((d) => d.event.type).sort(), [...expected].sort());
      const byType = (type: string) => got.filter((d) => d.event.type === type).map((d) => d.event);
      for (const d of got) {
        assert.match(String(d.headers['webhook-id']), /^msg_[0-9a-f]{32}$/);
        assert.ok(Math.abs(Number(d.headers['webhook-timestamp']) - Date.now() / 1000) < 120);
        assert.equal(d.headers['content-type'], 'application/json');
        assert.deepEqual(Object.keys(d.event), ['type', 'timestamp', 'data']);
        assert.equal(d.event.data['organization-id'], org);
        assert.ok(!Number.isNaN(Date.parse(d.event.timestamp)));
      }
      const member = { 'account-id': joiner.id, email: joiner.email, name: 'Test User' };
      assert.deepEqual({ ...byType('member.added')[0].data.member, 'joined-at': undefined }, { ...member, role: 'member', 'joined-at': undefined });
      assert.equal(byType('member.updated')[0].data.member.role, 'admin');
      assert.deepEqual({ ...byType('member.removed')[0].data.member, 'joined-at': undefined }, { ...member, role: 'admin', 'joined-at': undefined });
      assert.deepEqual(byType('invitation.accepted')[0].data.invitation, { ...invited.body });
      assert.deepEqual(
        byType('invitation.created')
          .map((e) => e.data.invitation.id)
          .sort(),
        [invited.body.id, second.body.id].sort(),
      );
      assert.equal(byType('invitation.revoked')[0].data.invitation.id, second.body.id);
      const organization = byType('organization.updated')[0].data.organization;
      assert.equal(organization.name, 'All events, renamed');
      assert.equal('role' in organization, false);
      assert.equal(organization.subscription.status, 'none');
      assert.deepEqual(byType('api-key.created')[0].data['api-key'], {
        id: key.body.id,
        name: 'ci',
        role: 'member',
        prefix: key.body.prefix,
        'created-at': key.body['created-at'],
        'last-used-at': null,
      });
      assert.equal(JSON.stringify(got.map((d) => d.event)).includes(key.body.key), false, 'the key itself is never sent');
      assert.equal(byType('api-key.revoked')[0].data['api-key'].id, key.body.id);
      // the log: each delivery once, succeeded with one attempt, under the header's id
      const log = await deliveries(t, owner, org, endpoint.id, '?limit=100');
      assert.equal(log.length, expected.length);
      assert.deepEqual(log.map((d) => d['message-id']).sort(), got.map((d) => d.headers['webhook-id']).sort());
      for (const d of log) {
        assert.equal(d.status, 'succeeded');
        assert.equal(d.attempts.length, 1);
        assert.equal(d.attempts[0]['status-code'], 204);
        assert.equal(d.attempts[0].error, null);
        assert.equal(d['next-attempt-at'], null);
      }
    });

    it('sends each endpoint only the types it takes; an organization without endpoints and a rolled-back change write nothing', async () => {
      const org = await createOrg(t, owner, 'Filtered');
      const roles = await createEndpoint(t, owner, org, { url: at('roles'), events: ['member.updated'] });
      const keys = await createEndpoint(t, owner, org, { url: at('keys'), events: ['api-key.created', 'api-key.revoked'] });
      hook.secrets.push(roles.secret, keys.secret);
      await addMember(t, org, owner, member, 'member');
      assert.equal((await as(t, owner, 'PATCH', `/api/orgs/${org}/members/${member.id}`, { role: 'admin' })).status, 200);
      assert.equal((await as(t, owner, 'POST', `/api/orgs/${org}/api-keys`, { name: 'k', role: 'member' })).status, 201);
      await waitFor('both endpoints', () => to('roles').length >= 1 && to('keys').length >= 1);
      await sleep(150);
      hook.verified('/roles');
      hook.verified('/keys');
      assert.deepEqual(
        to('roles').map((d) => d.event.type),
        ['member.updated'],
      );
      assert.deepEqual(
        to('keys').map((d) => d.event.type),
        ['api-key.created'],
      );

      // another organization, without endpoints: its changes write no message
      const quiet = await createOrg(t, owner, 'Quiet');
      const messages = await rows('webhook_message');
      const deliveryRows = await rows('webhook_delivery');
      await addMember(t, quiet, owner, await account(t), 'member');
      assert.equal((await as(t, owner, 'PATCH', `/api/orgs/${quiet}`, { name: 'Still quiet' })).status, 200);
      assert.equal(await rows('webhook_message'), messages);
      assert.equal(await rows('webhook_delivery'), deliveryRows);

      // a change that rolls back sends nothing
      await assert.rejects(
        t.system.database.db.transaction().execute(async (trx) => {
          const id = await emitWebhookEvent(trx, org, 'member.updated', { member: { 'account-id': member.id, role: 'owner' } });
          assert.match(String(id), /^msg_/);
          throw new Error('rolled back');
        }),
        /rolled back/,
      );
      // and one that commits is delivered (also proving the worker was awake meanwhile)
      const committed = await t.system.database.db
        .transaction()
        .execute((trx) => emitWebhookEvent(trx, org, 'member.updated', { member: { 'account-id': member.id, role: 'member' } }));
      await waitFor('the committed event', () => to('roles').some((d) => d.headers['webhook-id'] === committed));
      await sleep(100);
      assert.equal(to('roles').length, 2);
      assert.equal(
        to('roles').some((d) => d.event.data.member.role === 'owner'),
        false,
      );
    });

    it("tells an organization's endpoints when a member is gone with its deleted account", async () => {
      const org = await createOrg(t, owner, 'Left behind');
      const endpoint = await createEndpoint(t, owner, org, { url: at('gone'), events: ['member.removed'] });
      hook.secrets.push(endpoint.secret);
      const leaving = await account(t);
      await addMember(t, org, owner, leaving, 'admin');
      const deleted = await as(t, leaving, 'POST', '/api/account/delete', { password: PASSWORD });
      assert.equal(deleted.status, 204, deleted.text);
      await waitFor('the removal', () => to('gone').length > 0);
      const [gone] = hook.verified('/gone');
      assert.equal(gone.event.type, 'member.removed');
      assert.deepEqual(
        { ...gone.event.data.member, 'joined-at': undefined },
        {
          'account-id': leaving.id,
          email: leaving.email,
          name: 'Test User',
          role: 'admin',
          'joined-at': undefined,
        },
      );
    });

    it('500, 500, 200: three attempts of one message, one webhook-id', async () => {
      const org = await createOrg(t, owner, 'Retries');
      const endpoint = await createEndpoint(t, owner, org, { url: at('retry'), events: ['organization.updated'] });
      hook.secrets.push(endpoint.secret);
      hook.byPath['/retry'] = [{ status: 500, body: 'down' }, { status: 500, body: 'still down' }, { status: 200, body: 'ok' }, { status: 204 }];
      assert.equal((await as(t, owner, 'PATCH', `/api/orgs/${org}`, { name: 'Retried' })).status, 200);
      const [delivery] = await waitFor('success', async () => {
        const log = await deliveries(t, owner, org, endpoint.id);
        return log[0]?.status === 'succeeded' ? log : undefined;
      });
      const got = to('retry');
      assert.equal(got.length, 3);
      hook.verified('/retry');
      assert.equal(new Set(got.map((d) => d.headers['webhook-id'])).size, 1);
      assert.equal(got[0].headers['webhook-id'], delivery['message-id']);
      assert.deepEqual(
        delivery.attempts.map((a: { 'status-code': number }) => a['status-code']),
        [500, 500, 200],
      );
      assert.deepEqual(
        delivery.attempts.map((a: { error: string | null }) => a.error),
        ['unexpected-status', 'unexpected-status', null],
      );
      assert.deepEqual(
        delivery.attempts.map((a: { response: string }) => a.response),
        ['down', 'still down', 'ok'],
      );
      for (const a of delivery.attempts) assert.ok(Number.isInteger(a['duration-ms']) && a['duration-ms'] >= 0);
    });

    it('a delivery whose retries are spent fails; a manual retry is attempted once more and succeeds', async () => {
      const org = await createOrg(t, owner, 'Exhausted');
      const endpoint = await createEndpoint(t, owner, org, { url: at('exhausted'), events: ['organization.updated'] });
      hook.secrets.push(endpoint.secret);
      hook.byPath['/exhausted'] = [{ status: 503 }];
      assert.equal((await as(t, owner, 'PATCH', `/api/orgs/${org}`, { name: 'Exhausted once' })).status, 200);
      const [failed] = await waitFor('failure', async () => {
        const log = await deliveries(t, owner, org, endpoint.id);
        return log[0]?.status === 'failed' ? log : undefined;
      });
      // the first attempt and the schedule's two retries
      assert.equal(failed.attempts.length, 3);
      assert.equal(failed['next-attempt-at'], null);
      // a manual retry that fails too: still failed, no more retries
      assert.equal((await as(t, admin, 'POST', `/api/orgs/${org}/webhooks/${endpoint.id}/deliveries/${failed.id}/retry`)).status, 404, 'not a member');
      const retried = await as(t, owner, 'POST', `/api/orgs/${org}/webhooks/${endpoint.id}/deliveries/${failed.id}/retry`);
      assert.equal(retried.status, 202, retried.text);
      assert.deepEqual(retried.body, { 'delivery-id': failed.id });
      await waitFor('the manual attempt', async () => (await deliveries(t, owner, org, endpoint.id))[0].attempts.length === 4);
      await sleep(200);
      const again = (await deliveries(t, owner, org, endpoint.id))[0];
      assert.equal(again.status, 'failed');
      assert.equal(again.attempts.length, 4);
      hook.byPath['/exhausted'] = [{ status: 200 }];
      assert.equal((await as(t, owner, 'POST', `/api/orgs/${org}/webhooks/${endpoint.id}/deliveries/${failed.id}/retry`)).status, 202);
      const done = await waitFor('the retry', async () => {
        const d = (await deliveries(t, owner, org, endpoint.id))[0];
        return d.status === 'succeeded' ? d : undefined;
      });
      assert.equal(done.attempts.length, 5);
      assert.equal(new Set(to('exhausted').map((d) => d.headers['webhook-id'])).size, 1);
      assert.equal(hook.verified('/exhausted').length, 5);
      assert.equal((await as(t, owner, 'POST', `/api/orgs/${org}/webhooks/${endpoint.id}/deliveries/00000000-0000-4000-8000-000000000000/retry`)).status, 404);
    });

    it('does not follow a redirect: the attempt fails with its status, the target receives nothing', async () => {
      const org = await createOrg(t, owner, 'Redirected');
      const endpoint = await createEndpoint(t, owner, org, { url: at('redirect'), events: ['organization.updated'] });
      hook.byPath['/redirect'] = [{ status: 302, headers: { location: at('redirect-target') } }];
      assert.equal((await as(t, owner, 'PATCH', `/api/orgs/${org}`, { name: 'Moved' })).status, 200);
      const log = await waitFor('failure', async () => {
        const l = await deliveries(t, owner, org, endpoint.id);
        return l[0]?.status === 'failed' ? l : undefined;
      });
      assert.deepEqual(
        log[0].attempts.map((a: { 'status-code': number; error: string }) => [a['status-code'], a.error]),
        [
          [302, 'redirect-not-followed'],
          [302, 'redirect-not-followed'],
          [302, 'redirect-not-followed'],
        ],
      );
      assert.equal(to('redirect-target').length, 0);
    });

    it('rotates the secret: for 24 hours both secrets sign, then the new one alone', async () => {
      const org = await createOrg(t, owner, 'Rotated');
      const endpoint = await createEndpoint(t, owner, org, { url: at('rotate'), events: ['organization.updated'] });
      const rotated = await as(t, admin, 'POST', `/api/orgs/${org}/webhooks/${endpoint.id}/rotate-secret`);
      assert.equal(rotated.status, 404, 'not a member of this organization');
      const res = await as(t, owner, 'POST', `/api/orgs/${org}/webhooks/${endpoint.id}/rotate-secret`);
      assert.equal(res.status, 200, res.text);
      const fresh = res.body.secret as string;
      assert.match(fresh, /^whsec_/);
      assert.notEqual(fresh, endpoint.secret);
      assert.deepEqual((await as(t, owner, 'GET', `/api/orgs/${org}/webhooks/${endpoint.id}/secret`)).body, { secret: fresh });
      hook.secrets.push(endpoint.secret, fresh);
      assert.equal((await as(t, owner, 'PATCH', `/api/orgs/${org}`, { name: 'Rotated once' })).status, 200);
      const first = await waitFor('a delivery', () => to('rotate')[0]);
      assert.equal(String(first.headers['webhook-signature']).split(' ').length, 2);
      assert.deepEqual(first.verifiedWith.filter((s) => s === endpoint.secret || s === fresh).sort(), [endpoint.secret, fresh].sort());
      // 24 hours later
      await sql`update webhook_endpoint set previous_secret_expires_at = now() - interval '1 second' where id = ${endpoint.id}`.execute(t.system.database.db);
      assert.equal((await as(t, owner, 'PATCH', `/api/orgs/${org}`, { name: 'Rotated twice' })).status, 200);
      const second = await waitFor('another delivery', () => to('rotate')[1]);
      assert.equal(String(second.headers['webhook-signature']).split(' ').length, 1);
      assert.deepEqual(
        second.verifiedWith.filter((s) => s === endpoint.secret || s === fresh),
        [fresh],
      );
    });

    it('bounds time and memory: a hanging or slow receiver times out, a huge answer is read to 4 KiB', async () => {
      const org = await createOrg(t, owner, 'Bounded');
      const hang = await createEndpoint(t, owner, org, { url: at('hang'), events: ['webhook.test'] });
      const huge = await createEndpoint(t, owner, org, { url: at('huge'), events: ['webhook.test'] });
      const slow = await createEndpoint(t, owner, org, { url: at('slow'), events: ['webhook.test'] });
      const bounded = (req: IncomingMessage, res: ServerResponse) => {
        if (req.url === '/hang') return; // never answers
        if (req.url === '/slow') {
          const timer = setTimeout(() => res.writeHead(200).end(), 5000);
          res.on('close', () => clearTimeout(timer));
          return;
        }
        // 200, then a body without end: megabytes until the client goes
        res.writeHead(200, { 'content-type': 'text/plain' });
        const chunk = Buffer.alloc(64 * 1024, 'x');
        let sent = 0;
        const pump = () => {
          while (sent < 1024 ** 3 && res.write(chunk)) sent += chunk.length;
        };
        res.on('drain', pump);
        res.on('close', () => res.removeListener('drain', pump));
        pump();
      };
      for (const path of ['/hang', '/huge', '/slow']) hook.byPath[path] = [bounded];
      for (const e of [hang, huge, slow]) assert.equal((await as(t, owner, 'POST', `/api/orgs/${org}/webhooks/${e.id}/test`)).status, 202);
      const first = async (id: string) => (await deliveries(t, owner, org, id))[0];
      const hung = await waitFor("the hanging receiver's attempt", async () => ((await first(hang.id))?.attempts.length ? first(hang.id) : undefined));
      assert.equal(hung.attempts[0]['status-code'], null);
      assert.equal(hung.attempts[0].error, 'timeout');
      const slowed = await waitFor("the slow receiver's attempt", async () => ((await first(slow.id))?.attempts.length ? first(slow.id) : undefined));
      assert.equal(slowed.attempts[0].error, 'timeout');
      const big = await waitFor('the huge answer', async () => ((await first(huge.id))?.status === 'succeeded' ? first(huge.id) : undefined));
      assert.equal(big.attempts[0]['status-code'], 200);
      assert.ok(big.attempts[0].response.length <= 4096 && big.attempts[0].response.length > 0, `${big.attempts[0].response.length} characters kept`);
    });

    it('sends a test event whatever the events; disabled endpoints get nothing; the log pages and filters; changes are audited', async () => {
      const org = await createOrg(t, owner, 'Tested');
      const endpoint = await createEndpoint(t, owner, org, { url: at('test'), events: ['member.removed'] });
      hook.secrets.push(endpoint.secret);
      for (let i = 0; i < 3; i++) assert.equal((await as(t, owner, 'POST', `/api/orgs/${org}/webhooks/${endpoint.id}/test`)).status, 202);
      await waitFor('three tests', () => to('test').length >= 3);
      hook.verified('/test');
      assert.deepEqual(
        to('test').map((d) => d.event.type),
        ['webhook.test', 'webhook.test', 'webhook.test'],
      );
      assert.deepEqual(to('test')[0].event.data, { 'organization-id': org, webhook: { id: endpoint.id } });
      await waitFor('all succeeded', async () => (await deliveries(t, owner, org, endpoint.id)).every((d) => d.status === 'succeeded'));
      // pages of two, newest first
      const page1 = await as(t, owner, 'GET', `/api/orgs/${org}/webhooks/${endpoint.id}/deliveries?limit=2`);
      assert.equal(page1.body.deliveries.length, 2);
      assert.ok(page1.body['next-cursor']);
      const page2 = await as(t, owner, 'GET', `/api/orgs/${org}/webhooks/${endpoint.id}/deliveries?limit=2&cursor=${page1.body['next-cursor']}`);
      assert.equal(page2.body.deliveries.length, 1);
      assert.equal(page2.body['next-cursor'], null);
      assert.equal(new Set([...page1.body.deliveries, ...page2.body.deliveries].map((d: { id: string }) => d.id)).size, 3);
      assert.equal((await deliveries(t, owner, org, endpoint.id, '?status=failed')).length, 0);
      assert.equal((await deliveries(t, owner, org, endpoint.id, '?status=succeeded')).length, 3);
      const bad = await as(t, owner, 'GET', `/api/orgs/${org}/webhooks/${endpoint.id}/deliveries?cursor=bogus`);
      assert.equal(bad.status, 400);
      assert.equal(bad.body.errors[0].path, '/cursor');
      assert.equal((await as(t, owner, 'GET', `/api/orgs/${org}/webhooks/${endpoint.id}/deliveries?status=lost`)).status, 400);

      // disabled: nothing is sent, test and retry are refused
      const patched = await as(t, owner, 'PATCH', `/api/orgs/${org}/webhooks/${endpoint.id}`, { enabled: false, events: ['*'], description: 'paused' });
      assert.equal(patched.status, 200, patched.text);
      assert.equal(patched.body.enabled, false);
      assert.deepEqual(patched.body.events, ['*']);
      assert.equal((await as(t, owner, 'POST', `/api/orgs/${org}/webhooks/${endpoint.id}/test`)).status, 409);
      assert.equal((await as(t, owner, 'PATCH', `/api/orgs/${org}`, { name: 'Tested quietly' })).status, 200);
      const bad400 = await as(t, owner, 'PATCH', `/api/orgs/${org}/webhooks/${endpoint.id}`, { url: 'http://169.254.169.254/' });
      assert.equal(bad400.status, 400);
      assert.equal((await as(t, owner, 'PATCH', `/api/orgs/${org}/webhooks/${endpoint.id}`, {})).status, 400);
      await sleep(200);
      assert.equal(to('test').length, 3);
      assert.equal((await as(t, owner, 'DELETE', `/api/orgs/${org}/webhooks/${endpoint.id}`)).status, 204);
      assert.equal((await as(t, owner, 'DELETE', `/api/orgs/${org}/webhooks/${endpoint.id}`)).status, 404);
      assert.equal((await as(t, owner, 'GET', `/api/orgs/${org}/webhooks/${endpoint.id}/deliveries`)).status, 404);

      const audit = await as(t, owner, 'GET', `/api/orgs/${org}/audit-log?limit=100`);
      const mine = audit.body.entries.filter((e: { target: { id: string } | null }) => e.target?.id === endpoint.id);
      assert.deepEqual(mine.map((e: { action: string }) => e.action).reverse(), ['webhook.created', 'webhook.updated', 'webhook.deleted']);
      for (const e of mine) assert.equal(e.actor['account-id'], owner.id);
      assert.equal(JSON.stringify(mine).includes('whsec_'), false);
      assert.equal(mine[1].details.fields, 'enabled,events,description');
      const rotations = await as(t, owner, 'GET', `/api/orgs/${orgId}/audit-log?limit=100`);
      assert.ok(rotations.body.entries.some((e: { action: string }) => e.action === 'webhook.created'));
    });

    it('disables an endpoint whose attempts all failed for WEBHOOK_DISABLE_AFTER, emails the admins (not a suspended one), and can be turned on again', async () => {
      const org = await createOrg(t, owner, 'Failing');
      await addMember(t, org, owner, admin, 'admin');
      await addMember(t, org, owner, member, 'member');
      // an admin the directory suspended gets nothing of the organization, its notices included
      const suspended = await account(t);
      await addMember(t, org, owner, suspended, 'admin');
      await sql`update membership set suspended_at = now() where organization_id = ${org} and account_id = ${suspended.id}`.execute(t.system.database.db);
      const endpoint = await createEndpoint(t, owner, org, { url: at('failing'), events: ['webhook.test'] });
      hook.byPath['/failing'] = [{ status: 500 }];
      // failures keep coming until the streak is longer than 4 s
      await waitFor(
        'the endpoint disabled',
        async () => {
          const res = await as(t, owner, 'POST', `/api/orgs/${org}/webhooks/${endpoint.id}/test`);
          if (res.status === 409) return true;
          assert.equal(res.status, 202);
          await sleep(300);
          return false;
        },
        30_000,
      );
      const off = (await as(t, owner, 'GET', `/api/orgs/${org}/webhooks/${endpoint.id}`)).body;
      assert.equal(off.enabled, false);
      assert.equal(off['disabled-reason'], 'failing');
      const notified = await waitFor('the notices', async () => {
        const mails = await t.system.mail.mailbox.list({ kind: 'webhook-disabled', limit: 50 });
        const here = mails.filter((m) => m.text?.includes('Failing'));
        return here.length >= 2 ? here : undefined;
      });
      assert.deepEqual(notified.map((m) => m.to).sort(), [owner.email, admin.email].sort());
      assert.ok(notified[0].text?.includes(`${hook.url}/failing`));
      assert.ok(notified[0].text?.includes(`/orgs/${org}/webhooks`));
      const audit = await as(t, owner, 'GET', `/api/orgs/${org}/audit-log?limit=100`);
      const disabling = audit.body.entries.find(
        (e: { action: string; details: { reason?: string } }) => e.action === 'webhook.updated' && e.details.reason === 'failing',
      );
      assert.ok(disabling, 'the disabling is audited');
      assert.equal(disabling.actor['account-id'], null);
      // pending deliveries wait while it is off; turned on again, its failures are forgotten
      hook.byPath['/failing'] = [{ status: 204 }];
      const on = await as(t, owner, 'PATCH', `/api/orgs/${org}/webhooks/${endpoint.id}`, { enabled: true });
      assert.equal(on.body.enabled, true);
      assert.equal(on.body['disabled-reason'], null);
      const row = await t.system.database.db.selectFrom('webhook_endpoint').select('failing_since').where('id', '=', endpoint.id).executeTakeFirstOrThrow();
      assert.equal(row.failing_since, null);
      assert.equal((await as(t, owner, 'POST', `/api/orgs/${org}/webhooks/${endpoint.id}/test`)).status, 202);
      await waitFor('a success', async () => (await deliveries(t, owner, org, endpoint.id)).some((d) => d.status === 'succeeded'));
    });

    it('purges messages older than 30 days with their deliveries and attempts', async () => {
      const org = await createOrg(t, owner, 'Purged');
      const endpoint = await createEndpoint(t, owner, org, { url: at('purge'), events: ['webhook.test'] });
      assert.equal((await as(t, owner, 'POST', `/api/orgs/${org}/webhooks/${endpoint.id}/test`)).status, 202);
      assert.equal((await as(t, owner, 'POST', `/api/orgs/${org}/webhooks/${endpoint.id}/test`)).status, 202);
      await waitFor('both delivered', async () => (await deliveries(t, owner, org, endpoint.id)).filter((d) => d.status === 'succeeded').length === 2);
      const [newest, oldest] = await deliveries(t, owner, org, endpoint.id);
      await sql`update webhook_message set created_at = now() - interval '31 days' where id = ${oldest['message-id']}`.execute(t.system.database.db);
      const worker = (t.system.services(await import('../../src/webhooks/module.js').then((m) => m.webhooksModule)) as { worker: { purge(): Promise<number> } })
        .worker;
      assert.equal(await worker.purge(), 1);
      const left = await deliveries(t, owner, org, endpoint.id);
      assert.deepEqual(
        left.map((d) => d.id),
        [newest.id],
      );
      const attempts = await sql<{ n: string }>`select count(*) as n from webhook_attempt where delivery_id = ${oldest.id}`.execute(t.system.database.db);
      assert.equal(Number(attempts.rows[0].n), 0);
    });
  });
}
