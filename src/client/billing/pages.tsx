/**
 * The billing page of an organization (`/orgs/<id>/billing`; Stripe sends the browser back to
 * `/billing?org=<id>`): its plan and status, when it renews or ends, plan cards (to Stripe's
 * checkout), "Manage billing" (to Stripe's portal), the message after coming back from
 * checkout, and the usage report its plan comes with. Admins and owners act; members see.
 * And the public pricing page, whose plan cards the landing page shows too.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { Link, useApp } from '../ui/app.js';
import { Button, ButtonLink } from '../ui/button.js';
import { Card, DataList, Stack } from '../ui/card.js';
import { Alert, Badge } from '../ui/feedback.js';
import { PageHeader } from '../ui/page-header.js';
import { orgPath } from '../orgs/events.js';
import { billingPath, USAGE_REPORT, type BillingPageState, type Meter, type Plan } from './events.js';
import { amountText, intervalsOf, intervalText, planName, plansFor, type Interval } from './prices.js';

const date = (iso: string | null) => (iso ? new Date(iso).toLocaleDateString(undefined, { dateStyle: 'long' }) : '');

const STATUS_TEXT: Record<string, string> = {
  none: 'No subscription',
  trialing: 'Trial',
  active: 'Active',
  'past-due': 'Payment due',
  canceled: 'Canceled',
};

/** Monthly or yearly, when the plans come in both; a group of two pressed buttons. */
function IntervalToggle({ intervals, value, onChange }: { intervals: Interval[]; value: Interval; onChange: (i: Interval) => void }) {
  const label: Record<Interval, string> = { day: 'Daily', week: 'Weekly', month: 'Monthly', year: 'Yearly' };
  return (
    // biome-ignore lint/a11y/useSemanticElements: a row of toggle buttons; a fieldset would bring a legend and its own box
    <div role="group" aria-label="Billing interval" id="interval-toggle" class="inline-flex rounded-lg border border-line bg-surface p-1">
      {intervals.map((i) => (
        <button
          key={i}
          type="button"
          aria-pressed={value === i}
          data-interval={i}
          onClick={() => onChange(i)}
          class={`rounded-md px-4 py-1.5 text-sm font-medium ${value === i ? 'bg-primary text-primary-fg' : 'text-fg hover:bg-raised'}`}
        >
          {label[i]}
        </button>
      ))}
    </div>
  );
}

/**
 * The plans as cards, with the monthly/yearly toggle when both exist. `action` renders each
 * card's call to action.
 */
export function PlanCards({
  plans,
  action,
  current,
  trialDays,
  meters,
}: {
  plans: Plan[];
  action: (plan: Plan) => ComponentChildren;
  current?: string | null;
  trialDays?: number;
  meters?: Meter[];
}) {
  const intervals = intervalsOf(plans);
  const [interval, setInterval] = useState<Interval | undefined>(intervals.includes('month') ? 'month' : intervals[0]);
  const shown = plansFor(plans, intervals.length > 1 ? interval : undefined);
  return (
    <div class="space-y-4">
      {intervals.length > 1 && interval && <IntervalToggle intervals={intervals} value={interval} onChange={setInterval} />}
      <ul id="plan-cards" class="grid gap-4 sm:grid-cols-2 lg:grid-cols-3">
        {shown.map((p) => (
          <li
            key={p.id}
            data-plan-card={p.id}
            class={`flex flex-col gap-3 rounded-xl border bg-surface p-5 ${current === p.id ? 'border-primary' : 'border-line'}`}
          >
            <div class="flex items-center justify-between gap-2">
              <h3 class="text-lg font-semibold">{planName(p)}</h3>
              {current === p.id && <Badge tone="success">Current plan</Badge>}
            </div>
            {p.amount !== undefined && p.currency ? (
              <p>
                <span class="text-3xl font-bold" data-field="amount">
                  {amountText(p.amount, p.currency)}
                </span>{' '}
                {p.interval && (
                  <span class="text-sm text-muted" data-field="interval">
                    {intervalText(p.interval, p['interval-count'])}
                  </span>
                )}
              </p>
            ) : (
              <p class="text-sm text-muted">Price shown at checkout</p>
            )}
            <ul class="space-y-1 text-sm text-muted">
              <li>Organizations, members and roles</li>
              <li>API keys and an audit log</li>
              {p.seats && (
                <li data-field="seats">
                  {p.seats.max === null ? 'Any number of seats' : `Up to ${p.seats.max} seats`}
                  {p.seats.included > 0 ? `, ${p.seats.included} included` : ''}
                </li>
              )}
              {Object.entries(p.limits ?? {}).map(([meter, l]) =>
                l.hard !== null ? (
                  <li key={meter} data-limit={meter}>
                    {`Up to ${l.hard.toLocaleString()} ${meters?.find((m) => m.id === meter)?.name ?? meter} per billing period`}
                  </li>
                ) : null,
              )}
              {p.features?.includes(USAGE_REPORT) && <li>The usage report</li>}
              {p.features
                ?.filter((f) => f !== USAGE_REPORT)
                .map((f) => (
                  <li key={f} data-feature={f}>
                    {f.replace(/-/g, ' ')}
                  </li>
                ))}
              {trialDays ? <li>{trialDays} days free</li> : null}
            </ul>
            <div class="mt-auto pt-2">{action(p)}</div>
          </li>
        ))}
      </ul>
    </div>
  );
}

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

/** The plans on offer, for the pricing page and the landing page: a call to sign up, or to the organization's billing. */
export function PricingPlans() {
  const { state, dispatch } = useApp();
  useEffect(() => {
    dispatch(['pricing/load']);
  }, []);
  const pricing = state.pricing;
  if (!pricing || pricing.status === 'loading')
    return (
      <p class="text-sm text-muted" role="status">
        Loading plans…
      </p>
    );
  if (pricing.status === 'failed' || !pricing.plans) return <p class="text-sm text-muted">The plans could not be loaded.</p>;
  if (pricing.plans.length === 0) return <p class="text-sm text-muted">No plans are on offer yet.</p>;
  const org = state.currentOrg;
  return (
    <PlanCards
      plans={pricing.plans}
      trialDays={pricing.trialDays}
      meters={pricing.meters}
      action={(p) =>
        state.token && org ? (
          <ButtonLink to="org-billing" path={billingPath(org)} class="w-full">
            Choose {planName(p)}
          </ButtonLink>
        ) : (
          <ButtonLink to="sign-up" class="w-full">
            Start with {planName(p)}
          </ButtonLink>
        )
      }
    />
  );
}

export function PricingPage() {
  return (
    <div class="mx-auto max-w-5xl space-y-8">
      <PageHeader title="Pricing" description="One price per organization. Change or cancel at any time from the billing page." />
      <PricingPlans />
    </div>
  );
}
