/**
 * Writing a payment event's change on an organization and saying so, inside the transaction
 * that stores the event (effects.ts decides the change): the organization's billing columns, the
 * `subscription.updated` webhook message, the `billing.*` audit entries and the owners' email
 * announcing a trial's end (docs/billing.md, "What the webhook does").
 */
import type { Transaction } from 'kysely';
import { appendAudit, originOf, type AuditEntryInput } from '../audit/log.js';
import type { DatabaseSchema, SubscriptionStatus } from '../db/schema.js';
import type { Logger } from '../logging/logger.js';
import type { NotificationService } from '../notifications/service.js';
import { emitWebhookEvent } from '../webhooks/outbox.js';
import type { PaymentEvent } from './provider.js';
import { msg, phrase } from '../i18n/messages.js';

type Trx = Transaction<DatabaseSchema>;

/** The organization's billing columns, as an event reads them. */
export const BILLING_COLUMNS = [
  'id',
  'name',
  'personal_account_id',
  'subscription_status',
  'subscription_plan',
  'subscription_period_end',
  'subscription_cancel_at_period_end',
  'billing_customer_id',
  'billing_subscription_id',
] as const;

export interface BillingRow {
  id: string;
  name: string;
  personal_account_id: string | null;
  subscription_status: SubscriptionStatus;
  subscription_plan: string | null;
  subscription_period_end: Date | null;
  subscription_cancel_at_period_end: boolean;
  billing_customer_id: string | null;
  billing_subscription_id: string | null;
}

/** The organization's subscription after an event. */
export interface SubscriptionChange {
  status: SubscriptionStatus;
  plan: string | null;
  periodEnd: Date | null;
  cancelAtPeriodEnd: boolean;
  subscriptionId: string | null;
  /** from a subscription event: its period's start and items (an invoice event keeps them) */
  periodStart?: Date | null;
  items?: Array<{ id: string; price: string; quantity: number | null }>;
}

/**
 * Stores the change; a change of status, plan, period end or cancel-at-period-end is sent as
 * `subscription.updated`, and one of status, plan or cancel-at-period-end is audited and logged.
 */
export async function writeSubscriptionChange(trx: Trx, log: Logger, org: BillingRow, event: PaymentEvent, next: SubscriptionChange): Promise<void> {
  await trx
    .updateTable('organization')
    .set({
      subscription_status: next.status,
      subscription_plan: next.plan,
      subscription_period_end: next.periodEnd,
      subscription_cancel_at_period_end: next.cancelAtPeriodEnd,
      billing_subscription_id: next.subscriptionId,
      // the items' quantities are then what Stripe has: the seat sync compares with them
      ...(next.items ? { subscription_items: JSON.stringify(next.items), subscription_period_start: next.periodStart ?? null, seat_quantity_sent: null } : {}),
    })
    .where('id', '=', org.id)
    .execute();
  const periodEnd = (d: Date | null) => (d ? new Date(d).getTime() : null);
  if (
    org.subscription_status !== next.status ||
    org.subscription_plan !== next.plan ||
    org.subscription_cancel_at_period_end !== next.cancelAtPeriodEnd ||
    periodEnd(org.subscription_period_end) !== periodEnd(next.periodEnd)
  ) {
    await emitWebhookEvent(trx, org.id, 'subscription.updated', {
      subscription: {
        status: next.status,
        plan: next.plan,
        'current-period-end': next.periodEnd ? new Date(next.periodEnd).toISOString() : null,
        'cancel-at-period-end': next.cancelAtPeriodEnd,
        'has-customer': org.billing_customer_id !== null,
      },
    });
  }
  if (org.subscription_status !== next.status || org.subscription_plan !== next.plan || org.subscription_cancel_at_period_end !== next.cancelAtPeriodEnd) {
    await auditBilling(trx, org, 'billing.subscription-changed', {
      status: next.status,
      plan: next.plan,
      'cancel-at-period-end': next.cancelAtPeriodEnd,
      'previous-status': org.subscription_status,
      'previous-plan': org.subscription_plan,
      'event-type': event.type,
      'event-id': event.id,
    });
    log.info('payments/subscription-changed', `Organization subscription ${org.subscription_status} -> ${next.status}`, {
      'organization-id': org.id,
      status: next.status,
      plan: next.plan,
      'cancel-at-period-end': next.cancelAtPeriodEnd,
    });
  }
}

/** Queues the trial-will-end email to each owner of the organization. */
export async function sendTrialEndingNotice(
  trx: Trx,
  notifications: Pick<NotificationService, 'notify'>,
  org: BillingRow,
  endsAt: Date,
  plan: string | null,
): Promise<void> {
  await notifications.notify(trx, {
    kind: 'trial-ending',
    to: { organization: org.id, roles: ['owner'] },
    title: phrase('The trial of {organization} ends on {date}', { organization: org.name, date: endsAt.toISOString().slice(0, 10) }),
    body: plan ? phrase('Add a payment method to keep {plan} after the trial.', { plan }) : msg('Add a payment method to keep the plan after the trial.'),
    url: `/orgs/${org.id}/billing`,
    email: (account) => ({ kind: 'trial-will-end', to: account.email, data: { organization: org.name, organizationId: org.id, plan, trialEndsAt: endsAt } }),
  });
}

/** The webhook acts for no one: the entry has no actor and no request origin. */
export function auditBilling(
  trx: Trx,
  org: Pick<BillingRow, 'id' | 'personal_account_id'>,
  action: string,
  details: AuditEntryInput['details'],
): Promise<void> {
  return appendAudit(trx, {
    action,
    organizationId: org.id,
    accountId: org.personal_account_id,
    actor: {},
    target: { type: 'organization', id: org.id },
    details,
    origin: originOf(undefined),
  });
}
