/**
 * The billing routes, as data (docs/billing.md, "The API"): the plans for anyone, and for an
 * organization's admins a Checkout Session and a Customer Portal session.
 */
import { originOf } from '../audit/log.js';
import { ErrorBody, notFound, unauthorized } from '../http/errors.js';
import { ref, route, type MembershipResolver, type RouteGroup } from '../http/routes.js';
import { OrgId } from '../orgs/schemas.js';
import { BillingPlans, BillingRedirect, CheckoutRequest, OrganizationUsage } from './schemas.js';
import type { BillingService } from './service.js';
import type { UsageService } from './usage.js';

const error = ref(ErrorBody);
/** set on every `orgRole` route by the route layer */
function required<T>(value: T | undefined): T {
  if (!value) throw unauthorized();
  return value;
}

const STRIPE_ERRORS =
  '503 `billing-not-configured` without STRIPE_SECRET_KEY; 502 `payment-provider-error` when Stripe fails ' +
  "(with Stripe's `provider-code` and `provider-request-id` when it gives them).";

export function billingRoutes(billing: BillingService, memberships: MembershipResolver, usage: UsageService): RouteGroup {
  return {
    prefix: '/api',
    tags: ['Billing'],
    auth: 'none',
    bodyLimit: 4 * 1024,
    memberships,
    routes: [
      route({
        method: 'GET',
        path: '/billing/plans',
        summary: 'The plans on offer',
        description:
          'The plans of BILLING_PLANS with the Stripe price a checkout uses, the paid features each opens, the trial length, and whether checkout works on this server. ' +
          "With STRIPE_SECRET_KEY each plan also has its `name`, `amount`, `currency` and `interval` from Stripe's Prices API (read once per 10 minutes); " +
          'while Stripe cannot be reached the plans come without them.',
        schemas: { response: { 200: ref(BillingPlans) } },
        handler: () => billing.plans(),
      }),
      route({
        method: 'POST',
        path: '/orgs/:id/billing/checkout',
        summary: 'Start a checkout for a plan',
        description:
          'Creates a Stripe Checkout Session (mode `subscription`) for the plan and answers its `url`; the browser goes there, ' +
          'and comes back to `APP_URL/billing?org=<id>&checkout=success` (or `canceled`). The subscription itself arrives through the webhook. ' +
          'A repeated request with the same facts within 10 minutes answers the same session (an Idempotency-Key derived from them). ' +
          '400 `unknown-plan` (with `plans`); 409 (`reason: already-subscribed`) while a subscription is trialing, active or past due: the portal changes plans. ' +
          STRIPE_ERRORS,
        orgRole: 'admin',
        schemas: { params: OrgId, body: ref(CheckoutRequest), response: { 200: ref(BillingRedirect), 409: error, 502: error, 503: error } },
        handler: ({ parameters, membership, user, request }) => billing.checkout(required(membership), required(user), parameters.body.plan, originOf(request)),
      }),
      route({
        method: 'POST',
        path: '/orgs/:id/billing/portal',
        summary: 'Open the billing portal',
        description:
          "Creates a Stripe Customer Portal session for the organization's customer and answers its `url` " +
          '(payment methods, invoices, plan changes, cancellation, as configured in Stripe); it returns to `APP_URL/billing?org=<id>`. ' +
          "409 (`reason: no-customer`) before the organization's first checkout. " +
          STRIPE_ERRORS,
        orgRole: 'admin',
        schemas: { params: OrgId, response: { 200: ref(BillingRedirect), 409: error, 502: error, 503: error } },
        handler: ({ membership, user, request }) => billing.portal(required(membership), required(user), originOf(request)),
      }),
      route({
        method: 'GET',
        path: '/orgs/:id/usage',
        summary: "The organization's seats and usage",
        description:
          "The organization's plan, its billing period (the subscription's current period, else the UTC calendar month; `end` exclusive), " +
          "its seats (members not suspended plus pending invitations) against the plan's `included` and `max`, and every meter of the catalogue " +
          "with this period's usage, the plan's soft and hard limits (null where none) and the usage of each UTC day from the period's start to today.",
        orgRole: 'member',
        schemas: { params: OrgId, response: { 200: ref(OrganizationUsage) } },
        async handler({ membership }) {
          const found = await usage.usageOf(required(membership).organizationId);
          if (!found) throw notFound('No such organization');
          return found;
        },
      }),
    ],
  };
}
