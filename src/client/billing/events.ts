/**
 * The billing page's events (`/billing?org=<id>`): the organization's subscription, the plans,
 * a plan's checkout and the billing portal (both leave the app for Stripe's page, whose address
 * the server answers), the message after coming back from checkout (`&checkout=success` or
 * `canceled`, taken out of the address), and the usage report that comes with a paid plan.
 * After a successful checkout the webhook may not have arrived yet: the page looks again a few
 * times, then leaves a button.
 */
import type { AppState } from '../shell/state.js';
import type { EventCore } from '../core.js';
import type { Organization } from '../orgs/events.js';

export interface Plan {
  id: string;
  /** null for the catalogue's default (free) plan */
  'price-id': string | null;
  /** the plan of organizations without a subscription (BILLING_PLANS_FILE) */
  default?: boolean;
  /** seats its prices include, and its cap (null: none) */
  seats?: { included: number; max: number | null };
  /** per meter, the soft and hard limit of a billing period */
  limits?: Record<string, { soft: number | null; hard: number | null }>;
  /** from Stripe's Prices API when the server has Stripe configured; absent otherwise */
  name?: string;
  /** in the currency's smallest unit (cents) */
  amount?: number;
  currency?: string;
  interval?: 'day' | 'week' | 'month' | 'year';
  'interval-count'?: number;
  /** the paid features the plan opens (`usage-report`) */
  features?: string[];
}

/** A meter of the catalogue: what limits count. */
export interface Meter {
  id: string;
  name: string;
}

/** The paid feature this page shows: the usage report. */
export const USAGE_REPORT = 'usage-report';

export interface UsageReport {
  'window-days': number;
  members: { total: number; owners: number; admins: number; members: number; 'joined-recently': number };
  invitations: { pending: number; 'accepted-recently': number };
  'payment-events-recently': number;
}

export type CheckoutNotice = 'success' | 'canceled';

export interface BillingPageState {
  orgId: string;
  status: 'loading' | 'ready' | 'missing';
  org?: Organization;
  plans?: Plan[];
  trialDays?: number;
  checkoutEnabled?: boolean;
  /** what the return from Stripe's checkout said */
  notice?: CheckoutNotice;
  /** looks left while waiting for the subscription after a successful checkout */
  polls?: number;
  usage?: { status: 'loading' | 'ready' | 'locked'; report?: UsageReport; plans?: string[] };
}

export interface BillingState {
  billingPage?: BillingPageState;
  /** the public pricing: the plans on offer */
  pricing?: { status: 'loading' | 'ready' | 'failed'; plans?: Plan[]; trialDays?: number; meters?: Meter[] };
}

declare module '../shell/state.js' {
  interface AppState extends BillingState {}
}

export interface BillingIo {
  /** leaves the app for a Stripe page */
  assign: (url: string) => void;
}

/** How many times, and how often, the page looks for the subscription after a successful checkout. */
export const SUCCESS_POLLS = 10;
export const SUCCESS_POLL_MS = 1500;

/** The page's path for an organization. */
export const billingPath = (orgId: string) => `/orgs/${orgId}/billing`;

/** `/orgs/<id>/billing` -> the id */
export function billingOrgIdOf(path: string): string | undefined {
  return /^\/orgs\/([0-9a-f-]{36})\/billing\/?$/i.exec(path)?.[1]?.toLowerCase();
}

/** The plans that open a paid feature. */
export const plansWith = (plans: readonly Plan[], feature: string) => plans.filter((p) => p.features?.includes(feature)).map((p) => p.id);

/** `?org=<uuid>&checkout=success` -> its organization and the checkout's outcome. */
export function billingQuery(search: string): { orgId?: string; notice?: CheckoutNotice } {
  const params = new URLSearchParams(search);
  const org = params.get('org') ?? '';
  const checkout = params.get('checkout');
  return {
    orgId: /^[0-9a-f-]{36}$/i.test(org) ? org.toLowerCase() : undefined,
    notice: checkout === 'success' || checkout === 'canceled' ? checkout : undefined,
  };
}

const paying = (org: Organization | undefined) => org?.subscription.status === 'active' || org?.subscription.status === 'trialing';

export function registerBilling(core: EventCore<AppState>, io: BillingIo): void {
  core.regFx('location/assign', (url: string) => io.assign(url));

  core
    // `/orgs/<id>/billing`, or Stripe's way back: `/billing?org=<id>&checkout=…`
    .regEvent('billing/open', ({ state }, [, search, path]) => {
      const { orgId, notice } = billingQuery(String(search ?? ''));
      const id = billingOrgIdOf(String(path ?? '')) ?? orgId ?? state.currentOrg;
      if (!id) return { db: { ...state, billingPage: { orgId: '', status: 'missing' } } };
      return {
        db: { ...state, route: 'org-billing', billingPage: { orgId: id, status: 'loading', notice, polls: notice === 'success' ? SUCCESS_POLLS : 0 } },
        // the outcome is shown once: a reload does not repeat it
        'url/replace': billingPath(id),
        dispatchN: [
          ['billing/load-org', id],
          ['billing/load-plans', id],
        ],
      };
    })
    .regEvent('billing/load-org', (_ctx, [, id]) => ({
      'http/auth-api': { url: `orgs/${id}`, onSuccess: ['billing/org-loaded', id], onFailure: ['billing/missing', id] },
    }))
    .regEvent('billing/org-loaded', ({ state }, [, id, org]) => {
      const page = state.billingPage;
      if (!page || page.orgId !== id) return;
      const o = org as Organization;
      const polls = paying(o) ? 0 : (page.polls ?? 0);
      return {
        db: { ...state, billingPage: { ...page, status: 'ready', org: o, polls: Math.max(polls - 1, 0) } },
        dispatch: ['billing/check-usage', id],
        later: polls > 0 ? { ms: SUCCESS_POLL_MS, event: ['billing/load-org', id] } : undefined,
      };
    })
    .regEvent('billing/missing', ({ state }, [, id, failure]) => {
      if (state.billingPage?.orgId !== id) return;
      const f = failure as { type?: string };
      return {
        db: { ...state, billingPage: { orgId: id as string, status: 'missing' } },
        dispatch: f.type === 'not-found' ? undefined : ['request/failed', failure],
      };
    })
    .regEvent('billing/load-plans', (_ctx, [, id]) => ({
      'http/api': { url: 'billing/plans', onSuccess: ['billing/plans-loaded', id], onFailure: ['request/failed'] },
    }))
    .regEvent('billing/plans-loaded', ({ state }, [, id, body]) => {
      const page = state.billingPage;
      if (!page || page.orgId !== id) return;
      const b = body as { plans: Plan[]; 'trial-days': number; 'checkout-enabled': boolean };
      return {
        db: { ...state, billingPage: { ...page, plans: b.plans, trialDays: b['trial-days'], checkoutEnabled: b['checkout-enabled'] } },
        dispatch: ['billing/check-usage', id],
      };
    })
    // the report is asked for only on a plan that includes it (no 402 in normal use): once the organization and the plans are known
    .regEvent('billing/check-usage', ({ state }, [, id]) => {
      const page = state.billingPage;
      if (!page || page.orgId !== id || !page.org || !page.plans) return;
      const plan = page.plans.find((p) => p.id === page.org!.subscription.plan);
      const included = paying(page.org) && Boolean(plan?.features?.includes(USAGE_REPORT));
      if (!included) return { db: { ...state, billingPage: { ...page, usage: { status: 'locked', plans: plansWith(page.plans, USAGE_REPORT) } } } };
      if (page.usage?.status === 'loading' || page.usage?.status === 'ready') return;
      return { db: { ...state, billingPage: { ...page, usage: { status: 'loading' } } }, dispatch: ['billing/load-usage', id] };
    })
    // the public pricing page and the landing page's pricing section
    .regEvent('pricing/load', ({ state }) => {
      if (state.pricing?.status === 'ready' || state.pricing?.status === 'loading') return;
      return {
        db: { ...state, pricing: { status: 'loading' } },
        'http/api': { url: 'billing/plans', onSuccess: ['pricing/loaded'], onFailure: ['pricing/failed'] },
      };
    })
    .regEvent('pricing/loaded', ({ state }, [, body]) => {
      const b = body as { plans: Plan[]; 'trial-days': number; meters?: Meter[] };
      return { db: { ...state, pricing: { status: 'ready', plans: b.plans, trialDays: b['trial-days'], meters: b.meters } } };
    })
    .regEvent('pricing/failed', ({ state }, [, failure]) => ({ db: { ...state, pricing: { status: 'failed' } }, dispatch: ['request/failed', failure] }))
    .regEvent('billing/load-usage', (_ctx, [, id]) => ({
      'http/auth-api': { url: `orgs/${id}/reports/usage`, onSuccess: ['billing/usage-loaded', id], onFailure: ['billing/usage-failed', id] },
    }))
    .regEvent('billing/usage-loaded', ({ state }, [, id, report]) => {
      const page = state.billingPage;
      if (!page || page.orgId !== id) return;
      return { db: { ...state, billingPage: { ...page, usage: { status: 'ready', report: report as UsageReport } } } };
    })
    .regEvent('billing/usage-failed', ({ state }, [, id, failure]) => {
      const page = state.billingPage;
      if (!page || page.orgId !== id) return;
      const f = failure as { type?: string; plans?: string[] };
      // 402: the report comes with a plan the organization does not have; the page offers it
      if (f.type === 'payment-required') return { db: { ...state, billingPage: { ...page, usage: { status: 'locked', plans: f.plans } } } };
      return { dispatch: ['request/failed', failure] };
    })
    .regEvent('billing/checkout', ({ state }, [, plan]) => {
      const id = state.billingPage?.orgId;
      if (!id) return;
      return {
        db: { ...state, busy: true },
        'http/auth-api': {
          url: `orgs/${id}/billing/checkout`,
          method: 'post',
          body: { plan },
          onSuccess: ['billing/redirect'],
          onFailureN: [['request/failed'], ['app/idle']],
        },
      };
    })
    .regEvent('billing/portal', ({ state }) => {
      const id = state.billingPage?.orgId;
      if (!id) return;
      return {
        db: { ...state, busy: true },
        'http/auth-api': {
          url: `orgs/${id}/billing/portal`,
          method: 'post',
          body: {},
          onSuccess: ['billing/redirect'],
          onFailureN: [['request/failed'], ['app/idle']],
        },
      };
    })
    // the page stays busy: the browser is leaving for Stripe
    .regEvent('billing/redirect', (_ctx, [, body]) => ({ 'location/assign': (body as { url: string }).url }))
    .regEvent('billing/dismiss-notice', ({ state }) => {
      const page = state.billingPage;
      if (!page) return;
      return { db: { ...state, billingPage: { ...page, notice: undefined, polls: 0 } } };
    });
}
