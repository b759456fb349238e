/**
 * Billing flows of an organization (DESIGN.md, "Billing"; docs/billing.md): the plans on offer,
 * a Stripe Checkout Session to subscribe, a Customer Portal session to manage what was bought,
 * and the subscription the plan gate reads. What Stripe then reports arrives through the
 * webhook (src/payments/), which is what changes an organization's subscription.
 */
import { createHash } from 'node:crypto';
import { appendAudit, type RequestOrigin } from '../audit/log.js';
import type { DB } from '../db/database.js';
import type { SubscriptionStatus } from '../db/schema.js';
import { badRequest, conflict, HttpError, notFound } from '../http/errors.js';
import type { AuthUser, Membership, OrganizationPlan } from '../http/routes.js';
import type { Logger } from '../logging/logger.js';
import type { BillingPlans, BillingRedirect } from './schemas.js';
import { type Catalogue, mainPrice } from './catalogue.js';
import { orgBilling, planOf } from './org-plan.js';
import { checkoutLineItems, seatCap } from './seats.js';
import { planOfPrice, type BillingSettings } from './settings.js';
import { StripeGatewayError, type BillingGateway, type CheckoutSessionParams, type PriceDetails } from './stripe-gateway.js';

/** How long the prices read from Stripe are reused; after a failed read, how long until the next try. */
export const PRICE_CACHE_MS = 10 * 60 * 1000;
export const PRICE_RETRY_MS = 60 * 1000;

/** A paid feature (route data `requires`) and the plans that open it. */
export interface PaidFeature {
  id: string;
  plans: readonly string[];
}

/**
 * How long a repeated checkout request with the same facts gets the same session back: a
 * double click, or "back" from Stripe and the same button again. A later request, or one
 * after a real change (another plan, the organization got a customer, another caller), makes
 * a new session.
 */
export const CHECKOUT_IDEMPOTENCY_WINDOW_MS = 10 * 60 * 1000;

/** Statuses of a running subscription: a second checkout would charge twice, so the portal is the way to change plans. */
const RUNNING: ReadonlySet<SubscriptionStatus> = new Set(['trialing', 'active', 'past-due']);

export interface BillingDeps {
  db: DB;
  settings: BillingSettings;
  /** the app's public origin: the return URLs are `APP_URL/billing?org=…` */
  appUrl: string;
  /** undefined without STRIPE_SECRET_KEY */
  gateway: BillingGateway | undefined;
  log: Logger;
  clock?: () => Date;
}

const notConfigured = () =>
  new HttpError(503, {
    type: 'billing-not-configured',
    message: 'Billing is not set up on this server: STRIPE_SECRET_KEY is not configured',
  });

/** A failed Stripe call as 502 `payment-provider-error`: what went wrong in general, Stripe's code and request id, no secret. */
function providerError(err: StripeGatewayError): HttpError {
  const messages: Record<StripeGatewayError['failure'], string> = {
    authentication: "The payment provider refused this server's credentials; billing needs its operator's attention",
    permission: "The payment provider does not allow this server to do this; billing needs its operator's attention",
    connection: 'The payment provider could not be reached; try again in a moment',
    'rate-limit': 'The payment provider is busy; try again in a moment',
    'invalid-request': 'The payment provider refused the request',
    idempotency: 'The payment provider saw this request with other details a moment ago; try again in a moment',
    api: 'The payment provider failed; try again in a moment',
    'no-url': 'The payment provider answered without a page to go to',
  };
  return new HttpError(502, {
    type: 'payment-provider-error',
    message: messages[err.failure],
    failure: err.failure,
    ...(err.code ? { 'provider-code': err.code } : {}),
    ...(err.param ? { 'provider-param': err.param } : {}),
    ...(err.requestId ? { 'provider-request-id': err.requestId } : {}),
  });
}

export class BillingService {
  private readonly clock: () => Date;
  /** the prices of BILLING_PLANS as Stripe has them, read at most once per PRICE_CACHE_MS by all requests together */
  private prices: { until: number; value: Promise<Map<string, PriceDetails> | undefined> } | undefined;

  private readonly features: PaidFeature[] = [];

  constructor(private readonly deps: BillingDeps) {
    this.clock = deps.clock ?? (() => new Date());
  }

  /** Lists a paid feature with the plans that open it: GET /api/billing/plans says which plan has which. */
  offer(feature: PaidFeature): void {
    this.features.push(feature);
  }

  /** The features modules offered (`offer`), with their plans. */
  get offered(): readonly PaidFeature[] {
    return this.features;
  }

  /**
   * The plans on offer: with Stripe configured, each with its product's name, amount, currency
   * and interval from the Prices API (cached); the plan ids alone without Stripe, or while it
   * cannot be reached (the page still offers the plans; checkout shows the price).
   */
  async plans(): Promise<BillingPlans> {
    const { settings } = this.deps;
    const prices = await this.priceDetails();
    const catalogue = this.catalogue;
    const fromFile = catalogue.source === 'file';
    return {
      plans: catalogue.plans.map((p) => {
        const priceId = mainPrice(p);
        const price = priceId ? prices?.get(priceId) : undefined;
        // the catalogue names its plans; BILLING_PLANS's are named by their product in Stripe
        const name = fromFile ? p.name : price?.name;
        const offered = this.features.filter((f) => f.plans.includes(p.id)).map((f) => f.id);
        return {
          id: p.id,
          'price-id': priceId,
          ...(name ? { name } : {}),
          ...(price?.amount !== undefined ? { amount: price.amount, currency: price.currency } : {}),
          ...(price?.interval ? { interval: price.interval, 'interval-count': price.intervalCount ?? 1 } : {}),
          // BILLING_PLANS answers what it always did: its plans have no seats, limits or catalogue features
          ...(fromFile
            ? {
                default: p.default,
                prices: p.prices && { flat: p.prices.flat, 'per-seat': p.prices.perSeat, metered: { ...p.prices.metered } },
                seats: { ...p.seats },
                limits: Object.fromEntries(Object.entries(p.limits).map(([meter, l]) => [meter, { ...l }])),
              }
            : {}),
          features: [...new Set([...p.features, ...offered])],
        };
      }),
      ...(fromFile ? { meters: catalogue.meters.map((m) => ({ id: m.id, name: m.name })) } : {}),
      'trial-days': settings.trialDays,
      'checkout-enabled': Boolean(this.deps.gateway),
    };
  }

  /** The plan catalogue (BILLING_PLANS_FILE, or BILLING_PLANS as flat prices). */
  get catalogue(): Catalogue {
    return this.deps.settings.catalogue;
  }

  private priceDetails(): Promise<Map<string, PriceDetails> | undefined> {
    const { gateway, settings } = this.deps;
    if (!gateway || settings.plans.length === 0) return Promise.resolve(undefined);
    const now = this.clock().getTime();
    if (this.prices && this.prices.until > now) return this.prices.value;
    const entry = {
      until: now + PRICE_CACHE_MS,
      value: Promise.all(settings.plans.map((p) => gateway.retrievePrice(p.priceId)))
        .then((list) => new Map(list.map((price) => [price.id, price])))
        .catch((err: unknown) => {
          // the plans are still offered, without prices; the next try comes sooner than a refresh
          entry.until = this.clock().getTime() + PRICE_RETRY_MS;
          const failure = err instanceof StripeGatewayError ? err.failure : 'unexpected';
          this.deps.log.warn('billing/prices-unavailable', `Reading the plans' prices from Stripe failed: ${failure}; the plans are listed without them`, {
            failure,
            'provider-code': err instanceof StripeGatewayError ? (err.code ?? null) : null,
          });
          return undefined;
        }),
    };
    this.prices = entry;
    return entry.value;
  }

  /** A plan's name for a stored plan: a price id BILLING_PLANS names now is read as its plan. */
  planName(stored: string | null): string | null {
    if (stored === null) return null;
    if (this.deps.settings.plans.some((p) => p.id === stored)) return stored;
    return planOfPrice(this.deps.settings.plans, stored)?.id ?? stored;
  }

  /**
   * The feature gate's lookup (`requires: {feature}`): whether the organization's plan (the
   * catalogue's; the default plan without a trialing or active subscription) has the feature,
   * and which plans do (a module's `offer` counts, for BILLING_PLANS's plans).
   */
  readonly featureOf = async (organizationId: string, feature: string) => {
    const row = await orgBilling(this.deps.db, organizationId);
    if (!row) return undefined;
    const offered = this.features.filter((f) => f.id === feature).flatMap((f) => f.plans);
    const hasIt = (p: { id: string; features: string[] }) => p.features.includes(feature) || offered.includes(p.id);
    const plan = planOf(this.catalogue, row);
    return {
      has: Boolean(plan && hasIt(plan)),
      plans: this.catalogue.plans.filter(hasIt).map((p) => p.id),
      subscription: { status: row.subscription_status, plan: this.planName(row.subscription_plan) },
    };
  };

  /** The plan gate's lookup (`requires` route data): one query. */
  readonly subscriptionOf = async (organizationId: string): Promise<OrganizationPlan | undefined> => {
    const row = await this.deps.db
      .selectFrom('organization')
      .select(['subscription_status', 'subscription_plan'])
      .where('id', '=', organizationId)
      .executeTakeFirst();
    return row && { status: row.subscription_status, plan: this.planName(row.subscription_plan) };
  };

  /**
   * A Checkout Session for `planId`: mode `subscription`, the plan's price, the organization as
   * `client_reference_id`, its customer when it has one (else the caller's email), return URLs
   * under APP_URL/billing, the trial for a first subscription. 409 while a subscription runs.
   */
  async checkout(membership: Membership, user: AuthUser, planId: string, origin: RequestOrigin): Promise<BillingRedirect> {
    const { settings, gateway, db } = this.deps;
    const plan = settings.plans.find((p) => p.id === planId);
    if (!plan) {
      throw badRequest({ type: 'unknown-plan', message: `There is no plan "${planId}"`, plans: settings.plans.map((p) => p.id) });
    }
    if (!gateway) throw notConfigured();
    const org = await db
      .selectFrom('organization')
      .innerJoin('account', (j) => j.on('account.id', '=', user.id))
      .select([
        'organization.id',
        'organization.subscription_status',
        'organization.billing_customer_id',
        'organization.billing_subscription_id',
        'account.email',
      ])
      .where('organization.id', '=', membership.organizationId)
      .executeTakeFirst();
    if (!org) throw notFound('No such organization');
    if (RUNNING.has(org.subscription_status)) {
      throw conflict(`The organization's subscription is ${org.subscription_status}: change the plan or cancel in the billing portal`, {
        reason: 'already-subscribed',
        status: org.subscription_status,
      });
    }
    const base = `${this.deps.appUrl}/billing?org=${org.id}`;
    // a trial for the organization's first subscription only: canceling and subscribing again does not start another
    const firstSubscription = org.billing_subscription_id === null && org.subscription_status === 'none';
    const metadata = { organization_id: org.id };
    const params: CheckoutSessionParams = {
      mode: 'subscription',
      line_items: await checkoutLineItems(db, this.catalogue, plan.id, plan.priceId, org.id),
      client_reference_id: org.id,
      ...(org.billing_customer_id ? { customer: org.billing_customer_id } : { customer_email: org.email }),
      success_url: `${base}&checkout=success`,
      cancel_url: `${base}&checkout=canceled`,
      metadata,
      subscription_data: {
        metadata,
        ...(settings.trialDays > 0 && firstSubscription ? { trial_period_days: settings.trialDays } : {}),
      },
    };
    const key = checkoutIdempotencyKey(user.id, params, this.clock());
    let session: { id: string; url: string };
    try {
      session = await gateway.createCheckoutSession(params, key);
    } catch (err) {
      throw this.failed(err, 'checkout', org.id);
    }
    await appendAudit(db, {
      action: 'billing.checkout-started',
      organizationId: org.id,
      accountId: user.id,
      actor: { accountId: user.id },
      target: { type: 'organization', id: org.id },
      details: { plan: plan.id, 'price-id': plan.priceId, 'session-id': session.id },
      origin,
    });
    this.deps.log.info('billing/checkout-started', 'Checkout session created', {
      'organization-id': org.id,
      plan: plan.id,
      'session-id': session.id,
      'by-account-id': user.id,
    });
    return { url: session.url };
  }

  /** The seat cap, an invitation check (seats.ts). */
  readonly seatCap = (trx: DB, organizationId: string): Promise<void> => seatCap(trx, this.catalogue, this.deps.appUrl, organizationId);

  /** A Customer Portal session for the organization's customer; 409 before its first checkout. */
  async portal(membership: Membership, user: AuthUser, origin: RequestOrigin): Promise<BillingRedirect> {
    const { gateway, db } = this.deps;
    if (!gateway) throw notConfigured();
    const org = await db.selectFrom('organization').select(['id', 'billing_customer_id']).where('id', '=', membership.organizationId).executeTakeFirst();
    if (!org) throw notFound('No such organization');
    if (!org.billing_customer_id) {
      throw conflict('The organization has no billing account yet: subscribe to a plan first', { reason: 'no-customer' });
    }
    let session: { id: string; url: string };
    try {
      session = await gateway.createPortalSession({ customer: org.billing_customer_id, return_url: `${this.deps.appUrl}/billing?org=${org.id}` });
    } catch (err) {
      throw this.failed(err, 'portal', org.id);
    }
    await appendAudit(db, {
      action: 'billing.portal-opened',
      organizationId: org.id,
      accountId: user.id,
      actor: { accountId: user.id },
      target: { type: 'organization', id: org.id },
      details: { 'session-id': session.id },
      origin,
    });
    return { url: session.url };
  }

  /**
   * Cancels, at once, the running subscriptions of organizations about to be deleted (an
   * organization's deletion, or an account's, which takes the organizations it alone owns), so
   * nobody pays for what is gone. Called before the deletion: when Stripe fails, 502 and nothing
   * is deleted. Without STRIPE_SECRET_KEY nothing can be canceled: logged at error, for the operator.
   */
  async cancelForDeletion(organizationIds: readonly string[]): Promise<void> {
    if (organizationIds.length === 0) return;
    const running = await this.deps.db
      .selectFrom('organization')
      .select(['id', 'billing_subscription_id'])
      .where('id', 'in', organizationIds)
      .where('billing_subscription_id', 'is not', null)
      .where('subscription_status', 'in', [...RUNNING])
      .execute();
    for (const org of running) {
      const subscriptionId = org.billing_subscription_id!;
      if (!this.deps.gateway) {
        this.deps.log.error(
          'billing/subscription-not-canceled',
          'An organization with a running subscription is deleted, and STRIPE_SECRET_KEY is not set: cancel it in Stripe',
          {
            'organization-id': org.id,
            'subscription-id': subscriptionId,
          },
        );
        continue;
      }
      try {
        await this.deps.gateway.cancelSubscription(subscriptionId);
      } catch (err) {
        throw this.failed(err, 'cancel', org.id);
      }
      this.deps.log.info('billing/subscription-canceled', 'Subscription canceled: its organization is being deleted', {
        'organization-id': org.id,
        'subscription-id': subscriptionId,
      });
    }
  }

  private failed(err: unknown, call: 'checkout' | 'portal' | 'cancel', organizationId: string): unknown {
    if (!(err instanceof StripeGatewayError)) return err;
    const data = {
      'organization-id': organizationId,
      failure: err.failure,
      'provider-code': err.code ?? null,
      'provider-request-id': err.requestId ?? null,
      'provider-status': err.httpStatus ?? null,
    };
    // the operator's problems are errors; the provider's passing trouble a warning
    if (err.failure === 'authentication' || err.failure === 'permission' || err.failure === 'invalid-request') {
      this.deps.log.error('billing/stripe-failed', `Stripe refused the ${call} request: ${err.failure}`, data);
    } else {
      this.deps.log.warn('billing/stripe-failed', `The ${call} request to Stripe failed: ${err.failure}`, data);
    }
    return providerError(err);
  }
}

/**
 * The Idempotency-Key of a checkout: a hash of the caller, every parameter sent, and the
 * current {@link CHECKOUT_IDEMPOTENCY_WINDOW_MS} window. A double click sends the same key and
 * Stripe answers the first session again; any change of what would be sent, or a later window,
 * is a new key (Stripe refuses a key reused with other parameters).
 */
export function checkoutIdempotencyKey(accountId: string, params: CheckoutSessionParams, now: Date): string {
  const window = Math.floor(now.getTime() / CHECKOUT_IDEMPOTENCY_WINDOW_MS);
  const digest = createHash('sha256')
    .update(JSON.stringify([accountId, params, window]))
    .digest('base64url');
  return `checkout-${digest}`;
}
