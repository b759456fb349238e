/** Named schemas of the billing routes (docs/billing.md, "The API"). */
import { Type, type Static } from 'typebox';

const PlanName = Type.String({ minLength: 1, maxLength: 50, pattern: '^[a-z0-9][a-z0-9-]*$', description: 'a plan of BILLING_PLANS, e.g. `pro`' });

const Limit = Type.Object(
  { soft: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]), hard: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]) },
  { additionalProperties: false },
);

export const BillingPlans = Type.Object(
  {
    plans: Type.Array(
      Type.Object(
        {
          id: Type.String({ description: "the plan's name" }),
          'price-id': Type.Union([Type.String(), Type.Null()], {
            description: 'the main Stripe price of the plan (flat, else per-seat, else the first metered one); null for the default plan',
          }),
          name: Type.Optional(
            Type.String({
              description:
                "the catalogue's name (BILLING_PLANS_FILE); with BILLING_PLANS, the price's product name in Stripe (absent without STRIPE_SECRET_KEY, or while Stripe cannot be reached)",
            }),
          ),
          default: Type.Optional(Type.Boolean({ description: 'the plan of every organization without a trialing or active subscription' })),
          prices: Type.Optional(
            Type.Union([
              Type.Object(
                {
                  flat: Type.Union([Type.String(), Type.Null()]),
                  'per-seat': Type.Union([Type.String(), Type.Null()]),
                  metered: Type.Record(Type.String(), Type.String(), { description: 'meter id to Stripe price' }),
                },
                { additionalProperties: false },
              ),
              Type.Null(),
            ]),
          ),
          seats: Type.Optional(
            Type.Object(
              {
                included: Type.Integer({ minimum: 0, description: "what the plan's prices include" }),
                max: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: 'the seat cap; null: unlimited' }),
              },
              { additionalProperties: false },
            ),
          ),
          limits: Type.Optional(Type.Record(Type.String(), Limit, { description: 'meter id to its soft and hard limit per billing period' })),
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
    meters: Type.Optional(
      Type.Array(Type.Object({ id: Type.String(), name: Type.String() }, { additionalProperties: false }), { description: 'what usage is measured in' }),
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

const Limit0 = Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]);

export const OrganizationUsage = Type.Object(
  {
    plan: Type.Union([Type.String(), Type.Null()], { description: "the organization's plan in the catalogue; null: none (no cap, no limits, no features)" }),
    period: Type.Object(
      { start: Type.String({ format: 'date-time' }), end: Type.String({ format: 'date-time', description: "exclusive: the next period's start" }) },
      { additionalProperties: false, description: "the subscription's current period, else the UTC calendar month" },
    ),
    seats: Type.Object(
      {
        used: Type.Integer({ minimum: 0, description: 'members not suspended plus pending invitations' }),
        included: Type.Integer({ minimum: 0 }),
        max: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]),
      },
      { additionalProperties: false },
    ),
    meters: Type.Array(
      Type.Object(
        {
          meter: Type.String(),
          name: Type.String(),
          used: Type.Integer({ minimum: 0, description: "this period's usage" }),
          soft: Limit0,
          hard: Limit0,
          daily: Type.Array(Type.Object({ date: Type.String({ format: 'date' }), used: Type.Integer({ minimum: 0 }) }, { additionalProperties: false }), {
            description: "each UTC day from the period's start to today, zeros included",
          }),
        },
        { additionalProperties: false },
      ),
      { description: "every meter of the catalogue, with the plan's limits (null where none)" },
    ),
  },
  { $id: 'organization-usage', additionalProperties: false },
);

export const BILLING_SCHEMAS = [BillingPlans, CheckoutRequest, BillingRedirect, OrganizationUsage];
