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

/**
 * Writes a job of the Stripe sync in `trx`, unless one of the same kind and target not yet
 * attempted waits (it will take what is there when it goes), and wakes the sync.
 */
export async function queueSyncJobOnce(
  trx: DB,
  organizationId: string,
  job: { kind: 'meter'; meter: string } | { kind: 'subscription'; subscriptionId: string },
): Promise<void> {
  let waiting = trx
    .selectFrom('billing_job')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('kind', '=', job.kind)
    .where('status', '=', 'pending')
    .where('attempts', '=', 0);
  waiting = job.kind === 'meter' ? waiting.where('meter', '=', job.meter) : waiting.where('subscription_id', '=', job.subscriptionId);
  if (await waiting.forUpdate().executeTakeFirst()) return;
  await trx
    .insertInto('billing_job')
    .values(
      job.kind === 'meter'
        ? { organization_id: organizationId, kind: 'meter', meter: job.meter }
        : { organization_id: organizationId, kind: 'subscription', subscription_id: job.subscriptionId },
    )
    .execute();
  await sql`select pg_notify(${BILLING_DUE_CHANNEL}, '')`.execute(trx);
}

/** Writes a re-read of the subscription in `trx`, unless one not yet attempted waits (it will read what Stripe has then). */
export function queueSubscriptionRead(trx: DB, organizationId: string, subscriptionId: string): Promise<void> {
  return queueSyncJobOnce(trx, organizationId, { kind: 'subscription', subscriptionId });
}
