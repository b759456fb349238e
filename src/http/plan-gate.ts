/**
 * The plan gate of route data `requires: {plans}` (docs/billing.md, "Gating a route by plan"):
 * after the role check of an `orgRole` route, the organization's subscription must be `active`
 * or `trialing` on one of the plans, else 402 `payment-required`. routes.ts wires it in.
 */
import type { FastifyRequest } from 'fastify';
import { list, phrase } from '../i18n/messages.js';
import { notFound, paymentRequired } from './errors.js';

/** The subscription of an organization as the plan gate reads it: `plan` is the plan's name (BILLING_PLANS). */
export interface OrganizationPlan {
  status: 'none' | 'trialing' | 'active' | 'past-due' | 'canceled';
  plan: string | null;
}

/** Finds an organization's subscription for `requires` routes; undefined for a missing organization. */
export type SubscriptionResolver = (organizationId: string) => Promise<OrganizationPlan | undefined>;

/** Statuses that open a gated route: the plan is paid for, or in its trial. */
const PAID_STATUSES: ReadonlySet<OrganizationPlan['status']> = new Set(['active', 'trialing']);

/**
 * Whether an organization's plan has a feature (route data `requires: {feature}`), and the plans
 * that have it; undefined for a missing organization.
 */
export type FeatureResolver = (
  organizationId: string,
  feature: string,
) => Promise<{ has: boolean; plans: string[]; subscription: OrganizationPlan } | undefined>;

/** What a route requires: one of some plans, or a feature of the organization's plan. */
export type Requirement = { plans: string[] } | { feature: string };

/** Start-up checks of the route data; `where` names the route. */
export function validateRequires(where: string, requires: Requirement, hasOrgRole: boolean, hasResolver: boolean, hasFeatures = false): void {
  if (!hasOrgRole) throw new Error(`Route ${where}: requires needs orgRole: the plans are the organization's`);
  if ('feature' in requires) {
    if (typeof requires.feature !== 'string' || !/^[a-z0-9][a-z0-9-]*$/.test(requires.feature)) throw new Error(`Route ${where}: requires needs a feature id`);
    if (!hasFeatures) throw new Error(`Route ${where}: requires (feature) needs the group's features resolver`);
    return;
  }
  if (!Array.isArray(requires.plans) || requires.plans.length === 0) throw new Error(`Route ${where}: requires needs at least one plan`);
  if (!hasResolver) throw new Error(`Route ${where}: requires needs the group's subscriptions resolver`);
}

export const featureSentence = (feature: string) =>
  `Needs a plan with the feature \`${feature}\` (402 \`payment-required\` with \`feature\` and the \`plans\` that have it otherwise).`;

/** The preHandler of a `requires: {feature}` route, after the role check. */
export function featureCheck(resolve: FeatureResolver, feature: string, param: string) {
  return async (request: FastifyRequest): Promise<void> => {
    const organizationId = (request.params as Record<string, string>)[param];
    const found = await resolve(organizationId, feature);
    if (!found) throw notFound('No such organization');
    if (found.has) return;
    const words = phrase('This needs a plan with the feature {feature}: {count, plural, =0 {no plan has it} one {{last}} other {{others} or {last}}}', {
      feature,
      ...planValues(found.plans),
    });
    throw paymentRequired(words, found.plans, {
      feature,
      status: found.subscription.status,
      plan: found.subscription.plan,
    });
  };
}

/**
 * Plans as a phrase's values, for `{count, plural, =0 {…} one {{last}} other {{others} or {last}}}`: the
 * last two are joined by the message's own word, the others by the reader's "or" (`Intl.ListFormat`).
 */
const planValues = (plans: readonly string[]) => ({ count: plans.length, others: list(plans.slice(0, -1), 'disjunction'), last: plans.at(-1) ?? '' });

export const planList = (plans: readonly string[]) => plans.map((p) => `\`${p}\``).join(' or ');

/** The sentence the OpenAPI description gets. */
export const plansSentence = (plans: readonly string[]) =>
  `Needs an active or trialing subscription of the organization on the plan ${planList(plans)} (402 \`payment-required\` otherwise).`;

/**
 * The preHandler of a `requires` route, after the role check (a non-member learns nothing about
 * the organization's plan): one subscription lookup; 402 unless it is `active` or `trialing` on
 * one of the plans.
 */
export function planCheck(resolve: SubscriptionResolver, plans: readonly string[], param: string) {
  return async (request: FastifyRequest): Promise<void> => {
    const organizationId = (request.params as Record<string, string>)[param];
    const subscription = await resolve(organizationId);
    if (!subscription) throw notFound('No such organization');
    if (PAID_STATUSES.has(subscription.status) && subscription.plan !== null && plans.includes(subscription.plan)) return;
    const words = phrase(
      "This needs an active subscription on the plan {count, plural, =0 {} one {{last}} other {{others} or {last}}}; the organization's subscription is {status}{hasPlan, select, yes { ({plan})} other {}}",
      { ...planValues(plans), status: subscription.status, hasPlan: subscription.plan ? 'yes' : 'no', plan: subscription.plan ?? '' },
    );
    throw paymentRequired(words, plans, { status: subscription.status, plan: subscription.plan });
  };
}
