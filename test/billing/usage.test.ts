/**
 * Usage, limits and entitlements (docs/billing.md, "Usage and limits"), on one system per
 * storage kind with the real SMTP server (smtp-server), a Standard Webhooks receiver and the
 * local Stripe stand-in: the `api-calls` meter counted per API key request (a person's are
 * neither counted nor limited), the hard limit (402 usage-limit, concurrent requests never past
 * it), the soft limit's one email per owner and admin and one `usage.threshold-reached`
 * webhook, entitlements (`requires: {feature}`), meter events to Stripe once through a failure,
 * the usage endpoint's numbers and who may read it. Two instances on PostgreSQL: one soft-limit
 * notice, each meter event once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { smtpServer, type TestSmtpServer } from '../mail/smtp.js';
import { account, addMember, as, createOrg, type TestAccount } from '../orgs/support.js';
import { freePort } from '../support/net.js';
import { startSystem, testDatabases, type TestDatabase, type TestSystem } from '../support/system.js';
import { createEndpoint, receiver, type Receiver } from '../webhooks/support.js';
import { eventually, subscribeTeam, usageEnv } from './usage-support.js';
import { startFakeStripe, type FakeStripe } from './stripe-server.js';
import { connect, errorOf, mcpApp, mcpToken } from '../mcp/support.js';

const FAST = { MAIL_POLL_MS: '50', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '50', WEBHOOK_RETRY_SCHEDULE: '0.05' };

for (const db of testDatabases()) {
  describe(`Usage and limits on ${db.name}`, () => {
    let stripe: FakeStripe;
    let smtp: TestSmtpServer;
    let hook: Receiver;
    let t: TestSystem;
    let owner: TestAccount;
    let admin: TestAccount;
    let member: TestAccount;
    let outsider: TestAccount;
    let org: string;
    let key: string;
    const withKey = (k: string, path: string) => t.client('GET', path, { headers: { authorization: `Bearer ${k}` } });
    const newKey = async (orgId: string) => {
      const res = await as(t, owner, 'POST', `/api/orgs/${orgId}/api-keys`, { name: 'usage', role: 'member' });
      assert.equal(res.status, 201, res.text);
      return res.body.key as string;
    };

    before(async () => {
      [stripe, smtp, hook] = await Promise.all([startFakeStripe(), smtpServer(), receiver()]);
      await smtp.listen();
      // APP_URL on its own port: the OAuth provider's issuer (the MCP test signs a person in)
      const port = await freePort();
      t = await startSystem(db, usageEnv(stripe.url, { ...FAST, MAIL_URL: smtp.url, PORT: String(port), APP_URL: `http://127.0.0.1:${port}` }));
      [owner, admin, member, outsider] = await Promise.all([account(t), account(t), account(t), account(t)]);
      org = await createOrg(t, owner, 'Metered');
      await addMember(t, org, owner, admin, 'admin');
      await addMember(t, org, owner, member, 'member');
      const endpoint = await createEndpoint(t, owner, org, { url: `${hook.url}/usage`, events: ['usage.threshold-reached'] });
      hook.secrets.push(endpoint.secret);
      key = await newKey(org);
    });
    after(async () => {
      await t?.stop();
      await Promise.all([stripe?.close(), smtp?.close(), hook?.close()]);
    });

    it('counts API key requests up to the hard limit, then 402 usage-limit (not counted); a person is neither counted nor limited', async () => {
      // the free plan: soft 3, hard 5
      for (let i = 1; i <= 5; i++) assert.equal((await withKey(key, `/api/orgs/${org}`)).status, 200, `request ${i}`);
      const refused = await withKey(key, `/api/orgs/${org}`);
      assert.equal(refused.status, 402, refused.text);
      assert.deepEqual(refused.body, { type: 'usage-limit', message: refused.body.message, meter: 'api-calls', limit: 5, used: 5 });
      // the query endpoint takes keys too: limited the same way
      const query = await t.client('POST', '/api/cqrs/query', {
        body: { 'query/kind': 'orgs/members', 'org-id': org },
        headers: { authorization: `Bearer ${key}` },
      });
      assert.equal(query.status, 402, query.text);
      assert.equal((await as(t, owner, 'GET', `/api/orgs/${org}`)).status, 200, 'a person is not limited');
      const usage = await as(t, member, 'GET', `/api/orgs/${org}/usage`);
      assert.equal(usage.status, 200, usage.text);
      const calls = usage.body.meters.find((m: { meter: string }) => m.meter === 'api-calls');
      assert.deepEqual({ used: calls.used, soft: calls.soft, hard: calls.hard, name: calls.name }, { used: 5, soft: 3, hard: 5, name: 'API calls' });
      const today = new Date().toISOString().slice(0, 10);
      assert.deepEqual(calls.daily.at(-1), { date: today, used: 5 });
      assert.equal(calls.daily[0].date, usage.body.period.start.slice(0, 10));
      assert.ok(
        calls.daily.slice(0, -1).every((d: { used: number }) => d.used === 0),
        'zeros included',
      );
      assert.equal(usage.body.plan, 'free');
      assert.deepEqual(usage.body.seats, { used: 3, included: 2, max: 3 });
      // the OpenAPI document shows the 402s
      const doc = (await t.client('GET', '/openapi/openapi.json')).body;
      assert.match(doc.paths['/api/orgs/{id}'].get.responses['402'].description, /usage-limit/);
      assert.equal(doc.paths['/api/orgs/{id}'].get['x-usage-limit'], 'api-calls');
    });

    it('tells each owner and admin once by email, and emits usage.threshold-reached once, when the soft limit is reached', async () => {
      await eventually('the webhook', () => hook.verified('/usage').length >= 1);
      const notices = () => smtp.received.filter((m) => m.parsed.headers.get('x-mail-kind') === 'usage-threshold');
      await eventually('two emails', () => notices().length >= 2);
      await new Promise((r) => setTimeout(r, 300));
      const mails = notices();
      assert.deepEqual(mails.map((m) => m.envelopeTo[0]).sort(), [owner.email, admin.email].sort());
      const [event] = hook.verified('/usage');
      assert.equal(hook.verified('/usage').length, 1);
      assert.equal(event.event.type, 'usage.threshold-reached');
      const { usage } = event.event.data;
      assert.equal(event.event.data['organization-id'], org);
      assert.deepEqual({ meter: usage.meter, used: usage.used, soft: usage.soft, hard: usage.hard }, { meter: 'api-calls', used: 3, soft: 3, hard: 5 });
      assert.ok(usage.period.start < usage.period.end);
      const types = await t.client('GET', '/api/webhooks/event-types');
      assert.ok(types.body['event-types'].includes('usage.threshold-reached'));
    });

    it('lets concurrent requests at the hard limit through up to it, never past it', async () => {
      const busy = await createOrg(t, owner, 'Busy');
      const busyKey = await newKey(busy);
      const answers = await Promise.all(Array.from({ length: 12 }, () => withKey(busyKey, `/api/orgs/${busy}`)));
      assert.equal(answers.filter((a) => a.status === 200).length, 5);
      assert.equal(answers.filter((a) => a.status === 402).length, 7);
    });

    it('opens a feature route to the plans that have the feature: 402 payment-required with feature and plans otherwise', async () => {
      const denied = await as(t, member, 'GET', `/api/orgs/${org}/reports/usage`);
      assert.equal(denied.status, 402, denied.text);
      assert.deepEqual(
        { type: denied.body.type, feature: denied.body.feature, plans: denied.body.plans },
        { type: 'payment-required', feature: 'usage-report', plans: ['team'] },
      );
      const paid = await createOrg(t, owner, 'Paid');
      await subscribeTeam(t, paid, 1);
      assert.equal((await as(t, owner, 'GET', `/api/orgs/${paid}/reports/usage`)).status, 200);
    });

    it('runs the same gates through MCP tools: the usage limit for a key, the plan feature for a person', async () => {
      // the key is at its hard limit (above): its tool call is refused as its request is
      const keyClient = await connect(t.url, key);
      const limited = await keyClient.callTool({ name: 'get-organization', arguments: { 'organization-id': org } });
      assert.equal(errorOf(limited).type, 'usage-limit');
      await keyClient.close();
      const config = await mcpApp(t, owner.token, org, ['orgs:read']);
      const person = await connect(t.url, await mcpToken(t, config, member.token, 'orgs:read'));
      const report = await person.callTool({ name: 'get-usage-report', arguments: { 'organization-id': org } });
      assert.deepEqual((({ type, feature }) => ({ type, feature }))(errorOf(report)), { type: 'payment-required', feature: 'usage-report' });
      await person.close();
    });

    it('sends each usage record to Stripe once as a meter event, through a failure', async () => {
      const team = await createOrg(t, owner, 'Team metered');
      const { customer } = await subscribeTeam(t, team, 1);
      const teamKey = await newKey(team);
      stripe.fault = { kind: 'error', status: 500, type: 'api_error', message: 'down' };
      for (let i = 0; i < 4; i++) assert.equal((await withKey(teamKey, `/api/orgs/${team}`)).status, 200);
      await eventually('attempts during the outage', () => stripe.requests.some((r) => r.path === '/v1/billing/meter_events'));
      stripe.fault = undefined;
      for (let i = 0; i < 3; i++) assert.equal((await withKey(teamKey, `/api/orgs/${team}`)).status, 200);
      const sent = () => stripe.meterEvents.filter((e) => e.customer === customer);
      await eventually('7 calls in Stripe', () => sent().reduce((n, e) => n + e.value, 0) >= 7);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(
        sent().reduce((n, e) => n + e.value, 0),
        7,
      );
      assert.ok(sent().every((e) => e.eventName === 'api_calls' && /^usage-[0-9a-f-]{36}$/.test(e.identifier)));
      assert.equal(new Set(sent().map((e) => e.identifier)).size, sent().length);
      // an event Stripe took whose answer was lost: the re-send is refused as a duplicate identifier, which counts as sent
      stripe.fault = { kind: 'lose-answer' };
      const before = sent().length;
      assert.equal((await withKey(teamKey, `/api/orgs/${team}`)).status, 200);
      await eventually('the event applied, its answer lost', () => sent().length === before + 1);
      await eventually('a re-send', () => stripe.requests.filter((r) => r.path === '/v1/billing/meter_events').length > before + 4);
      stripe.fault = undefined;
      await eventually('the job done', async () => {
        const { rows } = await sql<{ n: string }>`select count(*) as n from billing_job where organization_id = ${team} and status = 'pending'`.execute(
          t.system.database.db,
        );
        return Number(rows[0].n) === 0;
      });
      assert.equal(sent().length, before + 1, 'applied once');
      assert.equal(
        sent().reduce((n, e) => n + e.value, 0),
        8,
      );
      // the free organization has no customer: nothing of its usage went
      assert.equal(stripe.meterEvents.filter((e) => e.customer !== customer && !e.customer.startsWith('cus_')).length, 0);
    });

    it('never bills usage recorded on the free plan: the first paid event sends the paid usage alone, each record once', async () => {
      const upgraded = await createOrg(t, owner, 'Upgraded');
      const upKey = await newKey(upgraded);
      for (let i = 0; i < 5; i++) assert.equal((await withKey(upKey, `/api/orgs/${upgraded}`)).status, 200, `free call ${i + 1}`);
      const { customer } = await subscribeTeam(t, upgraded, 1);
      assert.equal((await withKey(upKey, `/api/orgs/${upgraded}`)).status, 200);
      const sent = () => stripe.meterEvents.filter((e) => e.customer === customer).reduce((n, e) => n + e.value, 0);
      await eventually('the paid call in Stripe', () => sent() >= 1);
      assert.equal((await withKey(upKey, `/api/orgs/${upgraded}`)).status, 200);
      await eventually('the second paid call in Stripe', () => sent() >= 2);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(sent(), 2, 'the five free calls are never billed');
      const usage = await as(t, owner, 'GET', `/api/orgs/${upgraded}/usage`);
      assert.equal(usage.body.plan, 'team');
      assert.equal(usage.body.meters.find((m: { meter: string }) => m.meter === 'api-calls').used, 2, 'what the page shows is what Stripe bills');
      const { rows } = await sql<{ billable: boolean; n: string }>`
        select billable, count(*) as n from usage_record where organization_id = ${upgraded} group by billable order by billable`.execute(t.system.database.db);
      assert.deepEqual(
        rows.map((r) => [r.billable, Number(r.n)]),
        [
          [false, 5],
          [true, 2],
        ],
      );
    });

    it('shows the usage to members only: 404 to others, 401 without a token', async () => {
      assert.equal((await as(t, outsider, 'GET', `/api/orgs/${org}/usage`)).status, 404);
      assert.equal((await as(t, undefined, 'GET', `/api/orgs/${org}/usage`)).status, 401);
      assert.equal((await as(t, member, 'GET', `/api/orgs/${org}/usage`)).status, 200);
    });
  });
}

const postgres = testDatabases().find((d) => d.name === 'postgres');
describe('usage across two instances on one PostgreSQL', { skip: postgres ? false : 'TEST_DATABASE_URL is not set' }, () => {
  it('sends one soft-limit notice and each meter event once', async () => {
    const { url } = await postgres!.create();
    const shared: TestDatabase = { name: 'postgres', create: async () => ({ url, drop: async () => undefined }) };
    const stripe = await startFakeStripe();
    const env = usageEnv(stripe.url, { BILLING_SYNC_POLL_MS: '20' });
    const systems: TestSystem[] = [];
    try {
      const [a, b] = await Promise.all([startSystem(shared, env), startSystem(shared, env)]);
      systems.push(a, b);
      const owner = await account(a);
      const free = await createOrg(a, owner, 'Shared free');
      const team = await createOrg(a, owner, 'Shared team');
      const { customer, items } = await subscribeTeam(a, team, 1);
      const keys = await Promise.all(
        [free, team].map(async (o) => (await as(a, owner, 'POST', `/api/orgs/${o}/api-keys`, { name: 'k', role: 'member' })).body.key as string),
      );
      const call = (s: TestSystem, k: string, o: string) => s.client('GET', `/api/orgs/${o}`, { headers: { authorization: `Bearer ${k}` } });
      await Promise.all(Array.from({ length: 8 }, (_, i) => call(i % 2 ? a : b, keys[0], free)));
      await Promise.all(Array.from({ length: 20 }, (_, i) => call(i % 2 ? a : b, keys[1], team)));
      // seat changes through both instances: sent one at a time, in order, each once
      const invites = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          as(i % 2 ? a : b, owner, 'POST', `/api/orgs/${team}/invitations`, { email: `seat${i}-${team}@example.com`, role: 'member' }),
        ),
      );
      assert.ok(invites.every((r) => r.status === 201));
      const updates = () => stripe.itemUpdates.filter((u) => u.item === items.seat);
      await eventually('quantity 7', () => updates().at(-1)?.quantity === 7);
      const quantities = updates().map((u) => u.quantity);
      assert.deepEqual(
        quantities,
        [...quantities].sort((x, y) => x - y),
        'in order',
      );
      assert.equal(new Set(updates().map((u) => u.key)).size, updates().length, 'each change once');
      const notices = await sql<{ n: string }>`select count(*) as n from mail_outbox where kind = 'usage-threshold'`.execute(a.system.database.db);
      assert.equal(Number(notices.rows[0].n), 1, 'one owner, one notice');
      const sent = () => stripe.meterEvents.filter((e) => e.customer === customer);
      await eventually('20 calls in Stripe', () => sent().reduce((n, e) => n + e.value, 0) >= 20);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(
        sent().reduce((n, e) => n + e.value, 0),
        20,
      );
    } finally {
      await Promise.all(systems.map((s) => s.stop()));
      await stripe.close();
    }
  });
});
