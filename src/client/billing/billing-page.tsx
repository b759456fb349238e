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

const date = (iso: string | null) => (iso ? new Date(iso).toLocaleDateString(undefined, { dateStyle: 'long' }) : '');

const STATUS_TEXT: Record<string, string> = {
  none: 'No subscription',
  trialing: 'Trial',
  active: 'Active',
  'past-due': 'Payment due',
  canceled: 'Canceled',
};

function Notice({ page }: { page: BillingPageState }) {
  const { dispatch } = useApp();
  if (!page.notice) return null;
  const s = page.org?.subscription.status;
  const text =
    page.notice === 'canceled'
      ? 'Checkout was canceled: nothing was charged.'
      : s === 'active' || s === 'trialing'
        ? 'Thank you: your subscription is in place.'
        : page.polls
          ? 'Payment received: your subscription will show here in a moment…'
          : 'Payment received. Stripe has not told us about the subscription yet; reload in a minute.';
  return (
    <Alert id="checkout-notice" data-notice={page.notice} tone={page.notice === 'canceled' ? 'info' : 'success'}>
      {text}{' '}
      <Button variant="link" onClick={() => dispatch(['billing/dismiss-notice'])}>
        Dismiss
      </Button>
    </Alert>
  );
}

function Usage({ page }: { page: BillingPageState }) {
  const usage = page.usage;
  if (!usage || usage.status === 'loading')
    return (
      <p class="text-muted" role="status">
        Loading the usage report…
      </p>
    );
  if (usage.status === 'locked') {
    return (
      <p id="usage-locked" class="text-muted">
        The usage report comes with the {usage.plans?.length ? usage.plans.join(' or ') : 'paid'} plan.
      </p>
    );
  }
  const r = usage.report!;
  return (
    <DataList
      id="usage"
      items={[
        ['Members', `${r.members.total} (${r.members.owners} owners, ${r.members.admins} admins, ${r.members.members} members)`, 'members'],
        [`Joined, last ${r['window-days']} days`, r.members['joined-recently']],
        ['Pending invitations', r.invitations.pending],
        [`Payment events, last ${r['window-days']} days`, r['payment-events-recently']],
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
        <PageHeader title="Billing" />
        <Alert id="billing-missing" tone="error">
          This organization does not exist, or you are not a member. <Link to="orgs">Your organizations</Link>
        </Alert>
      </>
    );
  }
  if (!page?.org)
    return (
      <>
        <PageHeader title="Billing" />
        <p class="text-sm text-muted" role="status">
          Loading billing…
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
        title="Billing"
        description={
          <>
            for{' '}
            <Link to="org" path={orgPath(org.id)} id="billing-org">
              {org.name}
            </Link>
          </>
        }
        actions={
          manager &&
          s['has-customer'] && (
            <Button id="manage-billing" variant="secondary" disabled={state.busy || !page.checkoutEnabled} onClick={() => dispatch(['billing/portal'])}>
              Manage billing
            </Button>
          )
        }
      />
      <Stack>
        <Notice page={page} />
        <Card title="Subscription" id="subscription-card">
          <DataList
            id="subscription"
            data-status={s.status}
            items={[
              ['Plan', s.plan ?? '—', 'plan'],
              ['Status', STATUS_TEXT[s.status] ?? s.status, 'status'],
              Boolean(s['current-period-end']) && [
                s['cancel-at-period-end'] || s.status === 'canceled' ? 'Ends' : s.status === 'trialing' ? 'Trial ends' : 'Renews',
                `${date(s['current-period-end'])}${s['cancel-at-period-end'] ? ' (canceled, no renewal)' : ''}`,
                'period-end',
              ],
            ]}
          />
          {manager && s['has-customer'] && <p class="text-muted">Payment methods, invoices, plan changes and cancellation are on Stripe: "Manage billing".</p>}
          {!manager && <p class="text-muted">Admins and owners of the organization manage its billing.</p>}
        </Card>
        {manager && !running && (
          <Card
            title="Choose a plan"
            id="plans-card"
            titleId="plans-title"
            description={
              page.checkoutEnabled === false
                ? 'Billing is not set up on this server.'
                : page.trialDays && s.status === 'none'
                  ? `Your first ${page.trialDays} days are free.`
                  : undefined
            }
          >
            {!page.plans ? (
              <p class="text-muted" role="status">
                Loading plans…
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
                        Subscribe to {planName(p)}
                      </Button>
                    )
                  }
                />
              </div>
            )}
          </Card>
        )}
        <Card title="Usage" id="usage-card">
          <Usage page={page} />
        </Card>
      </Stack>
    </>
  );
}
