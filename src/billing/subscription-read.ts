/**
 * Re-reading a subscription from Stripe (docs/billing.md, "What the webhook does", Order): events
 * of one subscription that share a `created` second (one action's events do, and Stripe does not
 * promise their order) are settled by what Stripe says now, not by their arrival. The webhook's
 * transaction writes a `subscription` job on the Stripe sync's queue (an outside call is a job);
 * the sync retrieves the subscription and hands it to the reader the payments module gave, which
 * applies it as the webhook applies an event.
 */
import { sql } from 'kysely';
import type { DB } from '../db/database.js';
import { BILLING_DUE_CHANNEL } from './stripe-sync.js';

/** Writes a re-read of the subscription in `trx`, unless one not yet attempted waits (it will read what Stripe has then). */
export async function queueSubscriptionRead(trx: DB, organizationId: string, subscriptionId: string): Promise<void> {
  const waiting = await trx
    .selectFrom('billing_job')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('kind', '=', 'subscription')
    .where('subscription_id', '=', subscriptionId)
    .where('status', '=', 'pending')
    .where('attempts', '=', 0)
    .forUpdate()
    .executeTakeFirst();
  if (waiting) return;
  await trx.insertInto('billing_job').values({ organization_id: organizationId, kind: 'subscription', subscription_id: subscriptionId }).execute();
  await sql`select pg_notify(${BILLING_DUE_CHANNEL}, '')`.execute(trx);
}
