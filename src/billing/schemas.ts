/** Named schemas of the billing routes (DESIGN.md, "Billing"). */
import { Type, type Static } from 'typebox';

const PlanName = Type.String({ minLength: 1, maxLength: 50, pattern: '^[a-z0-9][a-z0-9-]*$', description: 'a plan of BILLING_PLANS, e.g. `pro`' });

export const BillingPlans = Type.Object(
  {
    plans: Type.Array(
      Type.Object(
        {
          id: Type.String({ description: "the plan's name" }),
          'price-id': Type.String({ description: 'the Stripe price a checkout of this plan uses' }),
          name: Type.Optional(
            Type.String({ description: "the price's product name in Stripe (absent without STRIPE_SECRET_KEY, or while Stripe cannot be reached)" }),
          ),
          amount: Type.Optional(Type.Integer({ minimum: 0, description: "the price in the currency's smallest unit (cents), from Stripe's Prices API" })),
          currency: Type.Optional(Type.String({ description: 'ISO 4217, lower case (`usd`), from Stripe' })),
          interval: Type.Optional(
            Type.Union([Type.Literal('day'), Type.Literal('week'), Type.Literal('month'), Type.Literal('year')], {
              description: 'how often it is charged, from Stripe',
            }),
          ),
          'interval-count': Type.Optional(Type.Integer({ minimum: 1, description: 'charged every this many intervals' })),
          features: Type.Array(Type.String(), {
            description: 'the paid features the plan opens (`usage-report`): a client asks for their data only on such a plan',
          }),
        },
        { additionalProperties: false },
      ),
      { description: "in the order of BILLING_PLANS; name, amount, currency and interval from Stripe's Prices API (cached) when Stripe is configured" },
    ),
    'trial-days': Type.Integer({ minimum: 0, description: "free days before the first charge of an organization's first subscription (BILLING_TRIAL_DAYS)" }),
    'checkout-enabled': Type.Boolean({ description: 'false when STRIPE_SECRET_KEY is not set: checkout and portal answer 503 `billing-not-configured`' }),
  },
  { $id: 'billing-plans', additionalProperties: false },
);
export type BillingPlans = Static<typeof BillingPlans>;

export const CheckoutRequest = Type.Object({ plan: PlanName }, { $id: 'checkout-request', additionalProperties: false });

export const BillingRedirect = Type.Object(
  { url: Type.String({ description: "where to send the browser: Stripe's hosted page" }) },
  { $id: 'billing-redirect', additionalProperties: false },
);
export type BillingRedirect = Static<typeof BillingRedirect>;

export const BILLING_SCHEMAS = [BillingPlans, CheckoutRequest, BillingRedirect];
