/**
 * Migration 0009 moves billing to organizations on both databases: the account's customer and
 * its subscription (which the webhook kept updating on the account after 0007 copied it) go to
 * the personal organization, past payment events get their organization and subscription, and
 * from then on the account's subscription columns follow the personal organization's.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, Migrator, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { MIGRATIONS } from '../../src/db/migrate.js';
import { PGliteDialect } from '../../src/db/pglite-dialect.js';
import { testDatabases } from '../support/system.js';

for (const db of testDatabases()) {
  describe(`Migration 0009 on ${db.name}`, () => {
    it('moves the customer and the subscription to the personal organization, and keeps the account a copy of it', async () => {
      const { url, drop } = await db.create({ empty: true });
      const kysely = new Kysely<any>({
        dialect: db.name === 'pglite' ? new PGliteDialect(new PGlite()) : new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 2 }) }),
      });
      try {
        const migrator = new Migrator({ db: kysely, provider: { getMigrations: async () => MIGRATIONS } });
        assert.equal((await migrator.migrateTo('0008_audit_log')).error, undefined);
        // an account whose personal organization 0007 made; the webhook then wrote to the account only
        await sql`insert into account (email, password_hash) values ('payer@example.com', 'x')`.execute(kysely);
        const [{ id }] = (await sql<{ id: string }>`select id from account`.execute(kysely)).rows;
        // one statement: the owner rule is checked at commit
        await sql`with o as (insert into organization (name, slug, personal, personal_account_id) values ('payer', 'personal-payer', true, ${id}) returning id)
          insert into membership (organization_id, account_id, role) select id, ${id}, 'owner' from o`.execute(kysely);
        await sql`update account set payment_customer_id = 'cus_migrated', subscription_status = 'past-due', subscription_plan = 'price_pro',
          subscription_period_end = '2031-01-01T00:00:00Z' where id = ${id}`.execute(kysely);
        const events = [
          ['evt_sub', 'customer.subscription.updated', { id: 'sub_migrated', object: 'subscription', customer: 'cus_migrated' }],
          ['evt_inv_old', 'invoice.payment_failed', { object: 'invoice', customer: 'cus_migrated', subscription: 'sub_migrated' }],
          ['evt_inv_new', 'invoice.paid', { object: 'invoice', customer: 'cus_migrated', subscription: { id: 'sub_expanded' } }],
        ] as const;
        for (const [eventId, type, object] of events) {
          await sql`insert into payment_event (provider, event_id, type, account_id, customer_id, payload, created_at)
            values ('stripe', ${eventId}, ${type}, ${id}, 'cus_migrated', ${JSON.stringify({ id: eventId, type, data: { object } })}, now())`.execute(kysely);
        }

        const up = await migrator.migrateTo('0009_billing');
        assert.equal(up.error, undefined);
        const org = (
          await sql<Record<string, unknown>>`select id, billing_customer_id, subscription_status, subscription_plan, subscription_cancel_at_period_end
          from organization where personal_account_id = ${id}`.execute(kysely)
        ).rows[0];
        assert.deepEqual(
          { ...org, id: undefined },
          {
            id: undefined,
            billing_customer_id: 'cus_migrated',
            subscription_status: 'past-due',
            subscription_plan: 'price_pro',
            subscription_cancel_at_period_end: false,
          },
        );
        const stored = (
          await sql<{ event_id: string; organization_id: string; subscription_id: string | null }>`
          select event_id, organization_id, subscription_id from payment_event order by event_id`.execute(kysely)
        ).rows;
        assert.deepEqual(stored, [
          { event_id: 'evt_inv_new', organization_id: org.id, subscription_id: null },
          { event_id: 'evt_inv_old', organization_id: org.id, subscription_id: 'sub_migrated' },
          { event_id: 'evt_sub', organization_id: org.id, subscription_id: 'sub_migrated' },
        ]);
        const columns = (
          await sql<{ n: number }>`select count(*)::int as n from information_schema.columns
          where table_name = 'account' and column_name = 'payment_customer_id'`.execute(kysely)
        ).rows[0];
        assert.equal(columns.n, 0, 'the account no longer holds the customer');

        // the personal organization's subscription is the account's
        await sql`update organization set subscription_status = 'active', subscription_plan = 'pro' where id = ${org.id}`.execute(kysely);
        const account = (await sql`select subscription_status, subscription_plan from account where id = ${id}`.execute(kysely)).rows[0];
        assert.deepEqual(account, { subscription_status: 'active', subscription_plan: 'pro' });

        // and back
        assert.equal((await migrator.migrateTo('0008_audit_log')).error, undefined);
        const back = (await sql`select payment_customer_id, subscription_status from account where id = ${id}`.execute(kysely)).rows[0];
        assert.deepEqual(back, { payment_customer_id: 'cus_migrated', subscription_status: 'active' });
      } finally {
        await kysely.destroy();
        await drop();
      }
    });
  });
}
