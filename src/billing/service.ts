/**
 * Billing flows of an organization (docs/billing.md): a Stripe Checkout
 * Session to subscribe, a Customer Portal session to manage what was bought, and canceling the
 * subscriptions of organizations being deleted; the plans on offer and the subscription the plan
 * gate reads come from plan-offer.ts. What Stripe then reports arrives through the webhook
 * (src/payments/), which is what changes an organization's subscription.
 */
import { phrase } from '../i18n/messages.js';
import { appendAudit, type RequestOrigin } from '../audit/log.js';
import type { DB } from '../db/database.js';
import type { SubscriptionStatus } from '../db/schema.js';
import { badRequest, conflict, notFound } from '../http/errors.js';
import type { AuthUser, Membership } from '../http/routes.js';
import type { Logger } from '../logging/logger.js';
import type { BillingPlans, BillingRedirect } from './schemas.js';
import type { Catalogue } from './catalogue.js';
import { checkoutIdempotencyKey } from './checkout-key.js';
import { type PaidFeature, PlanOffer } from './plan-offer.js';
import { notConfigured, providerError } from './provider-errors.js';
import { checkoutLineItems, seatCap } from './seats.js';
import type { BillingSettings } from './settings.js';
import { StripeGatewayError, type BillingGateway, type CheckoutSessionParams } from './stripe-gateway.js';

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

export class BillingService {
  private readonly clock: () => Date;
  /** the plans, their prices and features, and the plan gate's lookups (plan-offer.ts) */
  private readonly planOffer: PlanOffer;
  /** The plan gate's lookups (`requires` route data): whether the organization's plan has a feature, and its subscription. */
  readonly featureOf: PlanOffer['featureOf'];
  readonly subscriptionOf: PlanOffer['subscriptionOf'];

  constructor(private readonly deps: BillingDeps) {
    this.clock = deps.clock ?? (() => new Date());
    this.planOffer = new PlanOffer(deps);
    this.featureOf = this.planOffer.featureOf;
    this.subscriptionOf = this.planOffer.subscriptionOf;
  }

  /** Lists a paid feature with the plans that open it: GET /api/billing/plans says which plan has which. */
  offer(feature: PaidFeature): void {
    this.planOffer.offer(feature);
  }

  /** The features modules offered (`offer`), with their plans. */
  get offered(): readonly PaidFeature[] {
    return this.planOffer.offered;
  }

  /** The plans on offer, with Stripe's prices when it has them (GET /api/billing/plans). */
  plans(): Promise<BillingPlans> {
    return this.planOffer.plans();
  }

  /** The plan catalogue (BILLING_PLANS_FILE, or BILLING_PLANS as flat prices). */
  get catalogue(): Catalogue {
    return this.planOffer.catalogue;
  }

  /** A plan's name for a stored plan: a price id BILLING_PLANS names now is read as its plan. */
  planName(stored: string | null): string | null {
    return this.planOffer.planName(stored);
  }

  /**
   * A Checkout Session for `planId`: mode `subscription`, the plan's price, the organization as
   * `client_reference_id`, its customer when it has one (else the caller's email), return URLs
   * under APP_URL/billing, the trial for a first subscription. 409 while a subscription runs.
   */
  async checkout(membership: Membership, user: AuthUser, planId: string, origin: RequestOrigin): Promise<BillingRedirect> {
    const { settings, gateway, db } = this.deps;
    const plan = settings.plans.find((p) => p.id === planId);
    if (!plan) {
      throw badRequest({ type: 'unknown-plan', message: phrase('There is no plan "{plan}"', { plan: planId }), plans: settings.plans.map((p) => p.id) });
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
      throw conflict(
        phrase("The organization's subscription is {status}: change the plan or cancel in the billing portal", { status: org.subscription_status }),
        {
          reason: 'already-subscribed',
          status: org.subscription_status,
        },
      );
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
