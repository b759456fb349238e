/**
 * The Stripe webhook as it maps events to organizations: the checkout's reference (an
 * organization, or an account naming its personal one), subscription and invoice events
 * through the stored subscription or customer, cancel-at-period-end, invoices, events that race
 * or come out of order, the trial's notice to the owners, audit entries without an actor.
 * Registered inside checkout.test.ts's suites, on their systems (one system per database).
 */
import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { logIn, signUp } from '../support/auth.js';
import { account, addMember, as, createOrg, type TestAccount } from '../orgs/support.js';
import type { TestSystem } from '../support/system.js';
import { auditEntries, deliver, stripeEvent, subscription } from './support.js';

const now = () => Math.floor(Date.now() / 1000);

/** `context()` gives the suite's system and an account, once its `before` has run. */
export function webhookCases(context: () => { t: TestSystem; owner: TestAccount }): void {
  let t: TestSystem;
  let owner: TestAccount;
  before(() => {
    ({ t, owner } = context());
  });

  const orgOf = async (who: TestAccount, id: string) => {
    const res = await as(t, who, 'GET', `/api/orgs/${id}`);
    assert.equal(res.status, 200, res.text);
    return res.body.subscription;
  };
  const eventRow = (id: unknown) =>
    t.system.database.db
      .selectFrom('payment_event')
      .select(['organization_id', 'account_id', 'subscription_id'])
      .where('event_id', '=', String(id))
      .executeTakeFirstOrThrow();

  it('stores the customer and subscription on the organization the checkout names, and follows its subscription', async () => {
    const org = await createOrg(t, owner, 'Shared Co');
    const completed = stripeEvent(
      'checkout.session.completed',
      { object: 'checkout.session', client_reference_id: org, customer: 'cus_shared', subscription: 'sub_shared' },
      now() - 60,
    );
    await deliver(t, completed);
    assert.deepEqual(await eventRow(completed.id), { organization_id: org, account_id: null, subscription_id: 'sub_shared' });
    const stored = await t.system.database.db
      .selectFrom('organization')
      .select(['billing_customer_id', 'billing_subscription_id'])
      .where('id', '=', org)
      .executeTakeFirstOrThrow();
    assert.deepEqual(stored, { billing_customer_id: 'cus_shared', billing_subscription_id: 'sub_shared' });

    const end = now() + 30 * 86400;
    // the subscription event names only the customer and the subscription: the stored subscription id finds the organization
    await deliver(
      t,
      stripeEvent(
        'customer.subscription.created',
        subscription({ id: 'sub_shared', customer: 'cus_shared', status: 'active', price: 'price_team_2024', periodEnd: end }),
        now() - 50,
      ),
    );
    assert.deepEqual(await orgOf(owner, org), {
      status: 'active',
      plan: 'team',
      'current-period-end': new Date(end * 1000).toISOString(),
      'cancel-at-period-end': false,
      'has-customer': true,
    });
    // canceled in the portal: it runs to the period's end
    await deliver(
      t,
      stripeEvent(
        'customer.subscription.updated',
        subscription({ id: 'sub_shared', customer: 'cus_shared', status: 'active', price: 'price_team_2024', periodEnd: end, cancelAtPeriodEnd: true }),
        now() - 40,
      ),
    );
    assert.equal((await orgOf(owner, org))['cancel-at-period-end'], true);
    // a price BILLING_PLANS does not name stays the price id
    await deliver(
      t,
      stripeEvent(
        'customer.subscription.updated',
        subscription({ id: 'sub_shared', customer: 'cus_shared', status: 'active', price: 'price_custom', periodEnd: end }),
        now() - 30,
      ),
    );
    assert.deepEqual([(await orgOf(owner, org)).plan, (await orgOf(owner, org))['cancel-at-period-end']], ['price_custom', false]);

    const entries = await auditEntries(t, org);
    const changes = entries.filter((e) => e.action === 'billing.subscription-changed');
    assert.deepEqual(
      entries.filter((e) => e.action.startsWith('billing.')).map((e) => e.action),
      ['billing.checkout-completed', ...changes.map(() => 'billing.subscription-changed')],
    );
    assert.deepEqual(
      changes.map((e) => [e.details['previous-status'], e.details.status, e.details.plan, e.details['cancel-at-period-end']]),
      [
        ['none', 'active', 'team', false],
        ['active', 'active', 'team', true],
        ['active', 'active', 'price_custom', false],
      ],
    );
    for (const e of entries.filter((x) => x.action.startsWith('billing.')))
      assert.deepEqual([e.actor_account_id, e.actor_api_key_id, e.ip, e.target_id], [null, null, null, org], 'the webhook acts for no one');
  });

  it('reads an account id as its personal organization (checkouts from before), and user-account.subscription follows it', async () => {
    const { email, id } = await signUp(t.client);
    await deliver(t, stripeEvent('checkout.session.completed', { client_reference_id: id, customer: 'cus_personal' }, now() - 20));
    await deliver(
      t,
      stripeEvent(
        'customer.subscription.created',
        subscription({
          id: 'sub_personal',
          customer: 'cus_personal',
          status: 'trialing',
          price: 'price_pro_2024',
          periodEnd: now() + 86400,
          trialEnd: now() + 86400,
        }),
        now() - 10,
      ),
    );
    const login = await logIn(t.client, email);
    const me = await t.client('GET', '/api/account/me', { headers: { authorization: `Bearer ${login.body['access-token']}` } });
    assert.equal(me.body.subscription.status, 'trialing');
    assert.equal(me.body.subscription.plan, 'pro');
    const orgs = await t.client('GET', '/api/orgs', { headers: { authorization: `Bearer ${login.body['access-token']}` } });
    const personal = orgs.body.organizations[0];
    assert.equal(personal.personal, true);
    assert.deepEqual(me.body.subscription, {
      status: personal.subscription.status,
      plan: personal.subscription.plan,
      'current-period-end': personal.subscription['current-period-end'],
    });
    // the personal organization's events stay the account's (export, payments/events)
    const events = await t.client('POST', '/api/cqrs/query', {
      headers: { authorization: `Bearer ${login.body['access-token']}` },
      body: { 'query/kind': 'payments/events' },
    });
    assert.equal(events.body.events.length, 2, events.text);
  });

  it('adopts, in their order, the events that came before the checkout completed', async () => {
    const org = await createOrg(t, owner, 'Early Co');
    const base = now() - 100;
    const sub = (status: string, at: number, type = 'customer.subscription.updated') =>
      stripeEvent(type, subscription({ id: 'sub_early', customer: 'cus_early', status, price: 'price_pro_2024', periodEnd: base + 86400 }), at);
    const early = sub('incomplete', base, 'customer.subscription.created');
    await deliver(t, early);
    await deliver(t, sub('active', base + 2));
    assert.equal((await eventRow(early.id)).organization_id, null, 'no organization claims it yet');
    await deliver(t, stripeEvent('checkout.session.completed', { client_reference_id: org, customer: 'cus_early', subscription: 'sub_early' }, base + 1));
    assert.equal((await eventRow(early.id)).organization_id, org);
    assert.equal((await orgOf(owner, org)).status, 'active');
  });

  it("applies invoices: paid makes active, failed past-due; a trial's zero invoice, a one-off invoice and a canceled subscription stay as they are", async () => {
    const org = await createOrg(t, owner, 'Invoice Co');
    const base = now() - 200;
    await deliver(t, stripeEvent('checkout.session.completed', { client_reference_id: org, customer: 'cus_inv', subscription: 'sub_inv' }, base));
    await deliver(
      t,
      stripeEvent(
        'customer.subscription.created',
        subscription({ id: 'sub_inv', customer: 'cus_inv', status: 'trialing', price: 'price_pro_2024', periodEnd: base + 86400 }),
        base + 1,
      ),
    );
    const invoice = (type: string, at: number, fields: Record<string, unknown>) => stripeEvent(type, { object: 'invoice', customer: 'cus_inv', ...fields }, at);
    await deliver(t, invoice('invoice.paid', base + 2, { subscription: 'sub_inv', amount_paid: 0 }));
    assert.equal((await orgOf(owner, org)).status, 'trialing', "the trial's first invoice is paid at zero");
    await deliver(
      t,
      invoice('invoice.payment_failed', base + 3, {
        parent: { type: 'subscription_details', subscription_details: { subscription: 'sub_inv' } },
        amount_paid: 0,
      }),
    );
    assert.equal((await orgOf(owner, org)).status, 'past-due', 'the subscription of newer API versions, under parent');
    await deliver(t, invoice('invoice.paid', base + 4, { amount_paid: 5000 }));
    assert.equal((await orgOf(owner, org)).status, 'past-due', 'a one-off invoice pays for no plan');
    await deliver(t, invoice('invoice.paid', base + 5, { subscription: 'sub_inv', amount_paid: 2900 }));
    assert.equal((await orgOf(owner, org)).status, 'active');
    // an older subscription event arriving late does not undo the newer invoice's status
    await deliver(
      t,
      stripeEvent(
        'customer.subscription.updated',
        subscription({ id: 'sub_inv', customer: 'cus_inv', status: 'past_due', price: 'price_pro_2024', periodEnd: base + 86400 }),
        base + 3,
      ),
    );
    assert.equal((await orgOf(owner, org)).status, 'active');
    await deliver(
      t,
      stripeEvent(
        'customer.subscription.deleted',
        subscription({ id: 'sub_inv', customer: 'cus_inv', status: 'canceled', price: 'price_pro_2024', periodEnd: base + 86400 }),
        base + 6,
      ),
    );
    await deliver(t, invoice('invoice.paid', base + 7, { subscription: 'sub_inv', amount_paid: 2900 }));
    assert.equal((await orgOf(owner, org)).status, 'canceled');
  });

  it("keeps a running subscription when another of the customer's subscriptions ends, and moves to a new one that runs", async () => {
    const org = await createOrg(t, owner, 'Two Subs Co');
    const base = now() - 300;
    await deliver(t, stripeEvent('checkout.session.completed', { client_reference_id: org, customer: 'cus_two', subscription: 'sub_new' }, base));
    await deliver(
      t,
      stripeEvent(
        'customer.subscription.created',
        subscription({ id: 'sub_new', customer: 'cus_two', status: 'active', price: 'price_team_2024', periodEnd: base + 86400 }),
        base + 1,
      ),
    );
    await deliver(
      t,
      stripeEvent(
        'customer.subscription.deleted',
        subscription({ id: 'sub_old', customer: 'cus_two', status: 'canceled', price: 'price_pro_2024', periodEnd: base }),
        base + 2,
      ),
    );
    assert.deepEqual([(await orgOf(owner, org)).status, (await orgOf(owner, org)).plan], ['active', 'team']);
    await deliver(
      t,
      stripeEvent(
        'customer.subscription.deleted',
        subscription({ id: 'sub_new', customer: 'cus_two', status: 'canceled', price: 'price_team_2024', periodEnd: base + 86400 }),
        base + 3,
      ),
    );
    await deliver(
      t,
      stripeEvent(
        'customer.subscription.created',
        subscription({ id: 'sub_third', customer: 'cus_two', status: 'active', price: 'price_pro_2024', periodEnd: base + 86400 }),
        base + 4,
      ),
    );
    assert.deepEqual([(await orgOf(owner, org)).status, (await orgOf(owner, org)).plan], ['active', 'pro']);
    const stored = await t.system.database.db.selectFrom('organization').select('billing_subscription_id').where('id', '=', org).executeTakeFirstOrThrow();
    assert.equal(stored.billing_subscription_id, 'sub_third');
  });

  it("emails the trial's end to each owner of the organization, and to no one else", async () => {
    const [second, admin] = await Promise.all([account(t), account(t)]);
    const org = await createOrg(t, owner, 'Trial Co');
    await addMember(t, org, owner, second, 'owner');
    await addMember(t, org, owner, admin, 'admin');
    const trialEnd = Date.UTC(2031, 2, 14, 12) / 1000;
    await deliver(t, stripeEvent('checkout.session.completed', { client_reference_id: org, customer: 'cus_trial', subscription: 'sub_trial' }, now() - 10));
    await deliver(
      t,
      stripeEvent(
        'customer.subscription.trial_will_end',
        subscription({ id: 'sub_trial', customer: 'cus_trial', status: 'trialing', price: 'price_pro_2024', periodEnd: trialEnd, trialEnd }),
      ),
    );
    for (const who of [owner, second]) {
      const messages = (await t.system.mail.mailbox.list({ to: who.email, kind: 'trial-will-end' })).filter((m) => m.subject.includes('Trial Co'));
      assert.equal(messages.length, 1, who.email);
      assert.match(messages[0].subject, /March 14, 2031/);
      assert.match(messages[0].text ?? '', /trial of the pro plan/);
      assert.ok((messages[0].text ?? '').includes(`/billing?org=${org}`), 'the message links to the billing page of the organization');
    }
    assert.equal((await t.system.mail.mailbox.list({ to: admin.email, kind: 'trial-will-end' })).length, 0);
  });

  it('applies a checkout and its subscription delivered at the same moment, whichever is applied first', async () => {
    const orgs = await Promise.all(Array.from({ length: 6 }, (_, i) => createOrg(t, owner, `Race ${i}`)));
    const end = now() + 86400;
    await Promise.all(
      orgs.flatMap((org, i) => [
        deliver(
          t,
          stripeEvent('checkout.session.completed', { client_reference_id: org, customer: `cus_race_${i}`, subscription: `sub_race_${i}` }, now() - 2),
        ),
        deliver(
          t,
          stripeEvent(
            'customer.subscription.created',
            subscription({ id: `sub_race_${i}`, customer: `cus_race_${i}`, status: 'active', price: 'price_team_2024', periodEnd: end }),
            now() - 1,
          ),
        ),
      ]),
    );
    for (const org of orgs) assert.deepEqual([(await orgOf(owner, org)).status, (await orgOf(owner, org)).plan], ['active', 'team'], org);
  });
}
