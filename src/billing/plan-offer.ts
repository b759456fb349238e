/**
 * The plans on offer (docs/billing.md, "The API", "The catalogue"): the catalogue's plans with
 * what each opens (the catalogue's features and those modules offer) and their prices as Stripe
 * has them, read through a cache; a stored plan's name; and the plan gate's lookups (`requires`
 * route data).
 */
import type { DB } from '../db/database.js';
import type { OrganizationPlan } from '../http/routes.js';
import type { Logger } from '../logging/logger.js';
import type { BillingPlans } from './schemas.js';
import { type Catalogue, mainPrice } from './catalogue.js';
import { orgBilling, planOf } from './org-plan.js';
import { planOfPrice, type BillingSettings } from './settings.js';
import { StripeGatewayError, type BillingGateway, type PriceDetails } from './stripe-gateway.js';

/** How long the prices read from Stripe are reused; after a failed read, how long until the next try. */
export const PRICE_CACHE_MS = 10 * 60 * 1000;
export const PRICE_RETRY_MS = 60 * 1000;

/** A paid feature (route data `requires`) and the plans that open it. */
export interface PaidFeature {
  id: string;
  plans: readonly string[];
}

export interface PlanOfferDeps {
  db: DB;
  settings: BillingSettings;
  /** undefined without STRIPE_SECRET_KEY: the plans come without prices */
  gateway: BillingGateway | undefined;
  log: Logger;
  clock?: () => Date;
}

export class PlanOffer {
  private readonly clock: () => Date;
  /** the prices of BILLING_PLANS as Stripe has them, read at most once per PRICE_CACHE_MS by all requests together */
  private prices: { until: number; value: Promise<Map<string, PriceDetails> | undefined> } | undefined;

  private readonly features: PaidFeature[] = [];

  constructor(private readonly deps: PlanOfferDeps) {
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
}
