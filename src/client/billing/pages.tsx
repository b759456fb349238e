/**
 * The billing page (`/billing?org=<id>`): the organization's plan and status, when it renews or
 * ends, a button per plan (to Stripe's checkout), "Manage billing" (to Stripe's portal), the
 * message after coming back from checkout, and the usage report its plan comes with. Admins
 * and owners act; members see.
 */
import { useEffect } from 'preact/hooks';
import { Link, useApp } from '../ui/app.js';
import { orgPath } from '../orgs/events.js';
import type { BillingPageState } from './events.js';

const date = (iso: string | null) => (iso ? new Date(iso).toLocaleDateString(undefined, { dateStyle: 'long' }) : '');

const STATUS_TEXT: Record<string, string> = {
  none: 'No subscription', trialing: 'Trial', active: 'Active', 'past-due': 'Payment due', canceled: 'Canceled',
};

function Notice({ page }: { page: BillingPageState }) {
  const { dispatch } = useApp();
  if (!page.notice) return null;
  const s = page.org?.subscription.status;
  const text = page.notice === 'canceled'
    ? 'Checkout was canceled: nothing was charged.'
    : s === 'active' || s === 'trialing'
      ? 'Thank you: your subscription is in place.'
      : page.polls ? 'Payment received: your subscription will show here in a moment…'
        : 'Payment received. Stripe has not told us about the subscription yet; reload in a minute.';
  return (
    <p id="checkout-notice" data-notice={page.notice} class={page.notice === 'canceled' ? 'banner' : 'banner success'} role="status">
      {text} <button type="button" class="link" onClick={() => dispatch(['billing/dismiss-notice'])}>Dismiss</button>
    </p>
  );
}

function Usage({ page }: { page: BillingPageState }) {
  const usage = page.usage;
  if (!usage || usage.status === 'loading') return <p class="muted">Loading the usage report…</p>;
  if (usage.status === 'locked') {
    return <p id="usage-locked" class="muted">The usage report comes with the {usage.plans?.join(' or ') ?? 'paid'} plan.</p>;
  }
  const r = usage.report!;
  return (
    <dl id="usage">
      <dt>Members</dt><dd data-field="members">{r.members.total} ({r.members.owners} owners, {r.members.admins} admins, {r.members.members} members)</dd>
      <dt>Joined, last {r['window-days']} days</dt><dd>{r.members['joined-recently']}</dd>
      <dt>Pending invitations</dt><dd>{r.invitations.pending}</dd>
      <dt>Payment events, last {r['window-days']} days</dt><dd>{r['payment-events-recently']}</dd>
    </dl>
  );
}

export function BillingPage() {
  const { state, dispatch } = useApp();
  useEffect(() => { dispatch(['billing/open', location.search]); }, []);
  const page = state.billingPage;
  if (page?.status === 'missing') {
    return <><h1>Billing</h1><p id="billing-missing" class="error" role="alert">This organization does not exist, or you are not a member.</p><p><Link to="orgs">Your organizations</Link></p></>;
  }
  if (!page?.org) return <p class="muted">Loading billing…</p>;
  const { org } = page;
  const s = org.subscription;
  const manager = org.role === 'admin' || org.role === 'owner';
  const running = s.status === 'active' || s.status === 'trialing' || s.status === 'past-due';
  return (
    <>
      <h1>Billing</h1>
      <p class="muted">for <a href={orgPath(org.id)} id="billing-org" onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        dispatch(['router/navigate', { route: 'org', path: orgPath(org.id) }]);
      }}>{org.name}</a></p>
      <Notice page={page} />
      <dl id="subscription" data-status={s.status}>
        <dt>Plan</dt><dd data-field="plan">{s.plan ?? '—'}</dd>
        <dt>Status</dt><dd data-field="status">{STATUS_TEXT[s.status] ?? s.status}</dd>
        {s['current-period-end'] && (
          <><dt>{s['cancel-at-period-end'] || s.status === 'canceled' ? 'Ends' : s.status === 'trialing' ? 'Trial ends' : 'Renews'}</dt>
            <dd data-field="period-end">{date(s['current-period-end'])}{s['cancel-at-period-end'] ? ' (canceled, no renewal)' : ''}</dd></>
        )}
      </dl>
      {!manager ? <p class="muted">Admins and owners of the organization manage its billing.</p> : (
        <>
          {s['has-customer'] && (
            <p><button id="manage-billing" type="button" class="secondary" disabled={state.busy || !page.checkoutEnabled} onClick={() => dispatch(['billing/portal'])}>
              Manage billing</button> <span class="muted">payment methods, invoices, plan changes and cancellation, on Stripe</span></p>
          )}
          {!running && (
            <section aria-labelledby="plans-title">
              <h2 id="plans-title">Choose a plan</h2>
              {page.checkoutEnabled === false && <p class="muted">Billing is not set up on this server.</p>}
              {page.trialDays && s.status === 'none' ? <p class="muted">Your first {page.trialDays} days are free.</p> : null}
              <p id="plans">
                {(page.plans ?? []).map((p) => (
                  <button key={p.id} type="button" data-plan={p.id} disabled={state.busy || !page.checkoutEnabled}
                    onClick={() => dispatch(['billing/checkout', p.id])}>Subscribe to {p.id}</button>
                ))}
              </p>
            </section>
          )}
        </>
      )}
      <h2>Usage</h2>
      <Usage page={page} />
    </>
  );
}
