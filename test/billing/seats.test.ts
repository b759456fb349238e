/**
 * Seats (docs/billing.md, "Seats"), against the local Stripe stand-in the
 * official client talks to: checkout line items per price kind, the seat cap (402, nothing
 * else happens), the per-seat quantity kept in sync on every change of members, invitations
 * and directory sync, durably through an outage (each change once, with its Idempotency-Key).
 * One system per storage kind; the two-instance case runs on PostgreSQL only.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { account, as, mailedToken, type TestAccount } from '../orgs/support.js';
import { mailCount } from '../support/mailbox.js';
import { testDatabases, type TestSystem } from '../support/system.js';
import { PATCH, startDirectory, USER, type Directory } from '../scim/support.js';
import { eventually, subscribeTeam, usageEnv } from './usage-support.js';
import { startFakeStripe, type FakeStripe } from './stripe-server.js';

for (const db of testDatabases()) {
  describe(`Seats on ${db.name}`, () => {
    let stripe: FakeStripe;
    let dir: Directory;
    let t: TestSystem;
    let owner: TestAccount;
    const invite = (who: TestAccount, orgId: string, email: string) => as(t, who, 'POST', `/api/orgs/${orgId}/invitations`, { email, role: 'member' });
    const newOrg = async (name: string) => {
      const res = await as(t, owner, 'POST', '/api/orgs', { name });
      assert.equal(res.status, 201, res.text);
      return res.body.id as string;
    };

    before(async () => {
      stripe = await startFakeStripe();
      dir = await startDirectory(db, usageEnv(stripe.url));
      t = dir.t;
      owner = dir.owner;
    });
    after(async () => {
      await dir?.stop();
      await stripe?.close();
    });

    it('caps seats on the free plan: past `seats.max` an invitation is 402 seat-limit and nothing is created or sent', async () => {
      const org = await newOrg('Capped');
      for (const n of [1, 2]) assert.equal((await invite(owner, org, `cap${n}-${org}@example.com`)).status, 201);
      const email = `cap3-${org}@example.com`;
      const refused = await invite(owner, org, email);
      assert.equal(refused.status, 402, refused.text);
      assert.deepEqual(refused.body, {
        type: 'seat-limit',
        message: refused.body.message,
        limit: 3,
        used: 3,
        'upgrade-url': `${t.system.config.appUrl}/billing?org=${org}`,
      });
      const invitations = await t.system.database.db.selectFrom('invitation').select('email').where('organization_id', '=', org).execute();
      assert.equal(invitations.length, 2);
      assert.equal(await mailCount(t.system, email), 0);
      const doc = (await t.client('GET', '/openapi/openapi.json')).body;
      assert.ok(doc.paths['/api/orgs/{id}/invitations'].post.responses['402']);
    });

    it('checks out one line item per price: flat 1, per-seat the seat count, metered without quantity', async () => {
      const org = await newOrg('Buyer');
      await invite(owner, org, `buyer-${org}@example.com`);
      const res = await as(t, owner, 'POST', `/api/orgs/${org}/billing/checkout`, { plan: 'team' });
      assert.equal(res.status, 200, res.text);
      const sent = stripe.requests.at(-1)!;
      assert.equal(sent.path, '/v1/checkout/sessions');
      const items = Object.fromEntries(Object.entries(sent.params).filter(([k]) => k.startsWith('line_items')));
      assert.deepEqual(items, {
        'line_items[0][price]': 'price_team_flat',
        'line_items[0][quantity]': '1',
        'line_items[1][price]': 'price_team_seat',
        'line_items[1][quantity]': '2',
        'line_items[2][price]': 'price_team_calls',
      });
    });

    it('keeps the per-seat quantity in sync after invite, accept, remove and SCIM suspend, through an outage, each change once', async () => {
      const org = dir.orgId;
      const { items } = await subscribeTeam(t, org, 1);
      const updates = () => stripe.itemUpdates.filter((u) => u.item === items.seat);
      const lastQuantity = () => updates().at(-1)?.quantity;

      // invite: 2 seats
      const friend = await account(t);
      assert.equal((await invite(owner, org, friend.email)).status, 201);
      await eventually('quantity 2', () => lastQuantity() === 2);
      assert.equal(updates()[0].proration, 'create_prorations');
      assert.match(updates()[0].key ?? '', /^seats-[0-9a-f-]{36}$/);
      // accept: still 2, nothing sent
      const accepted = await as(t, friend, 'POST', '/api/invitations/accept', { token: await mailedToken(t, friend.email, 'invitation') });
      assert.equal(accepted.status, 200, accepted.text);
      // SCIM create: 3
      const user = await dir.scim('POST', '/Users', {
        schemas: [USER],
        userName: `seat@${dir.domain}`,
        name: { givenName: 'S', familyName: 'T' },
        active: true,
      });
      assert.equal(user.status, 201, user.text);
      await eventually('quantity 3', () => lastQuantity() === 3);
      assert.equal(updates().length, 2, 'accepting an invitation changes no count');
      // SCIM suspend: 2
      const suspended = await dir.scim('PATCH', `/Users/${user.json.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] });
      assert.equal(suspended.status, 200, suspended.text);
      await eventually('quantity 2 after the suspension', () => lastQuantity() === 2);

      // Stripe down: changes wait, then go once each, with the same key on every attempt
      stripe.fault = { kind: 'error', status: 503, type: 'api_error', message: 'down' };
      const tried = stripe.requests.length;
      const removed = await as(t, owner, 'DELETE', `/api/orgs/${org}/members/${friend.id}`);
      assert.equal(removed.status, 204, removed.text);
      await eventually(
        'attempts during the outage',
        () => stripe.requests.filter((r, i) => i >= tried && r.path === `/v1/subscription_items/${items.seat}`).length >= 2,
      );
      const during = stripe.requests.slice(tried).filter((r) => r.path === `/v1/subscription_items/${items.seat}`);
      assert.equal(new Set(during.map((r) => r.idempotencyKey)).size, 1, 'one key on every attempt');
      const waiting = await sql<{ last_error: string }>`select last_error from billing_job where organization_id = ${org} and status = 'pending'`.execute(
        t.system.database.db,
      );
      assert.ok(
        waiting.rows.some((r) => /api/.test(r.last_error ?? '')),
        JSON.stringify(waiting.rows),
      );
      stripe.fault = undefined;
      await eventually('quantity 1 after the outage', () => lastQuantity() === 1);
      const keys = updates().map((u) => u.key);
      assert.equal(new Set(keys).size, keys.length, 'each change applied once');
      assert.deepEqual(
        updates().map((u) => u.quantity),
        [2, 3, 2, 1],
      );
      // nothing more to send: the count equals what Stripe has
      await eventually('the queue drained', async () => {
        const { rows } = await sql<{ n: string }>`select count(*) as n from billing_job where organization_id = ${org} and status = 'pending'`.execute(
          t.system.database.db,
        );
        return Number(rows[0].n) === 0;
      });
    });
  });
}
