/**
 * The billing page of an organization (`/orgs/<id>/billing`; Stripe sends the browser back to
 * `/billing?org=<id>`): its plan and status, when it renews or ends, plan cards (to Stripe's
 * checkout), "Manage billing" (to Stripe's portal), the message after coming back from
 * checkout, and the usage report its plan comes with. Admins and owners act; members see.
 */
import { useEffect } from 'preact/hooks';
import { Link, useApp } from '../ui/app.js';
import { Button } from '../ui/button.js';
import { Card, DataList, Stack } from '../ui/card.js';
import { Alert } from '../ui/feedback.js';
import { PageHeader } from '../ui/page-header.js';
import { orgPath } from '../orgs/events.js';
import type { BillingPageState } from './events.js';
import { PlanCards } from './plan-cards.js';
import { planName } from './prices.js';
import { currentLocale, t } from '../i18n/words.js';
import { rich } from '../i18n/rich.js';
import { listText } from '../ui/dates.js';
import { subscriptionStatusText } from './status-words.js';

const date = (iso: string | null) => (iso ? new Date(iso).toLocaleDateString(currentLocale(), { dateStyle: 'long' }) : '');

function Notice({ page }: { page: BillingPageState }) {
  const { dispatch } = useApp();
  if (!page.notice) return null;
  const s = page.org?.subscription.status;
  const text =
    page.notice === 'canceled'
      ? t('Checkout was canceled: nothing was charged.')
      : s === 'active' || s === 'trialing'
        ? t('Thank you: your subscription is in place.')
        : page.polls
          ? t('Payment received: your subscription will show here in a moment…')
          : t('Payment received. Stripe has not told us about the subscription yet; reload in a minute.');
  return (
    <Alert id="checkout-notice" data-notice={page.notice} tone={page.notice === 'canceled' ? 'info' : 'success'}>
      {text}{' '}
      <Button variant="link" onClick={() => dispatch(['billing/dismiss-notice'])}>
        {t('Dismiss')}
      </Button>
    </Alert>
  );
}

function Usage({ page }: { page: BillingPageState }) {
  const usage = page.usage;
  if (!usage || usage.status === 'loading')
    return (
      <p class="text-muted" role="status">
        {t('Loading the usage report…')}
      </p>
    );
  if (usage.status === 'locked') {
    return (
      <p id="usage-locked" class="text-muted">
        {usage.plans?.length
          ? t('The usage report comes with the {plans} plan.', { plans: listText(usage.plans, 'disjunction') })
          : t('The usage report comes with a paid plan.')}
      </p>
    );
  }
  const r = usage.report!;
  return (
    <DataList
      id="usage"
      items={[
        [
          t('Members'),
          t(
            '{total, number} ({owners, plural, one {# owner} other {# owners}}, {admins, plural, one {# admin} other {# admins}}, {members, plural, one {# member} other {# members}})',
            {
              total: r.members.total,
              owners: r.members.owners,
              admins: r.members.admins,
              members: r.members.members,
            },
          ),
          'members',
        ],
        [t('Joined, last {days, plural, one {# day} other {# days}}', { days: r['window-days'] }), r.members['joined-recently']],
        [t('Pending invitations'), r.invitations.pending],
        [t('Payment events, last {days, plural, one {# day} other {# days}}', { days: r['window-days'] }), r['payment-events-recently']],
      ]}
    />
  );
}

export function BillingPage() {
  const { state, dispatch } = useApp();
  useEffect(() => {
    dispatch(['billing/open', location.search, location.pathname]);
  }, []);
  const page = state.billingPage;
  if (page?.status === 'missing') {
    return (
      <>
        <PageHeader title={t('Billing')} />
        <Alert id="billing-missing" tone="error">
          {t('This organization does not exist, or you are not a member.')} <Link to="orgs">{t('Your organizations')}</Link>
        </Alert>
      </>
    );
  }
  if (!page?.org)
    return (
      <>
        <PageHeader title={t('Billing')} />
        <p class="text-sm text-muted" role="status">
          {t('Loading billing…')}
        </p>
      </>
    );
  const { org } = page;
  const s = org.subscription;
  const manager = org.role === 'admin' || org.role === 'owner';
  const running = s.status === 'active' || s.status === 'trialing' || s.status === 'past-due';
  return (
    <>
      <PageHeader
        title={t('Billing')}
        description={rich('for <0/>', [
          <Link key="org" to="org" path={orgPath(org.id)} id="billing-org">
            {org.name}
          </Link>,
        ])}
        actions={
          manager &&
          s['has-customer'] && (
            <Button id="manage-billing" variant="secondary" disabled={state.busy || !page.checkoutEnabled} onClick={() => dispatch(['billing/portal'])}>
              {t('Manage billing')}
            </Button>
          )
        }
      />
      <Stack>
        <Notice page={page} />
        <Card title={t('Subscription')} id="subscription-card">
          <DataList
            id="subscription"
            data-status={s.status}
            items={[
              [t('Plan'), s.plan ?? '—', 'plan'],
              [t('Status'), subscriptionStatusText(s.status), 'status'],
              Boolean(s['current-period-end']) && [
                s['cancel-at-period-end'] || s.status === 'canceled' ? t('Ends') : s.status === 'trialing' ? t('Trial ends') : t('Renews'),
                s['cancel-at-period-end'] ? t('{date} (canceled, no renewal)', { date: date(s['current-period-end']) }) : date(s['current-period-end']),
                'period-end',
              ],
            ]}
          />
          {manager && s['has-customer'] && (
            <p class="text-muted">{t('Payment methods, invoices, plan changes and cancellation are on Stripe: "Manage billing".')}</p>
          )}
          {!manager && <p class="text-muted">{t('Admins and owners of the organization manage its billing.')}</p>}
        </Card>
        {manager && !running && (
          <Card
            title={t('Choose a plan')}
            id="plans-card"
            titleId="plans-title"
            description={
              page.checkoutEnabled === false
                ? t('Billing is not set up on this server.')
                : page.trialDays && s.status === 'none'
                  ? t('{days, plural, one {Your first day is free.} other {Your first # days are free.}}', { days: page.trialDays })
                  : undefined
            }
          >
            {!page.plans ? (
              <p class="text-muted" role="status">
                {t('Loading plans…')}
              </p>
            ) : (
              <div id="plans">
                <PlanCards
                  plans={page.plans}
                  current={s.plan}
                  action={(p) =>
                    p.default ? null : (
                      <Button
                        data-plan={p.id}
                        class="w-full"
                        disabled={state.busy || !page.checkoutEnabled}
                        onClick={() => dispatch(['billing/checkout', p.id])}
                      >
                        {t('Subscribe to {plan}', { plan: planName(p) })}
                      </Button>
                    )
                  }
                />
              </div>
            )}
          </Card>
        )}
        <Card title={t('Usage')} id="usage-card">
          <Usage page={page} />
        </Card>
      </Stack>
    </>
  );
}
