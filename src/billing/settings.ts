/**
 * The billing settings (docs/billing.md, "Configuration"), read and validated at start-up with the
 * rest of the configuration (src/config.ts calls {@link billingSettings}): `STRIPE_SECRET_KEY`,
 * `STRIPE_API_URL`, `BILLING_PLANS`, `BILLING_TRIAL_DAYS`. A bad value stops start-up with a
 * message naming the variable; the secret key's value never appears in a message.
 */
import type { RouteGroup } from '../http/routes.js';
import type { Logger } from '../logging/logger.js';
import { limitOf } from '../http/usage-gate.js';
import {
  API_CALLS_METER,
  DEFAULT_AUDIT_LOG_RETENTION_DAYS,
  STORAGE_BYTES_METER,
  type Catalogue,
  type ConfigProblem,
  mainPrice,
  pricesOf,
  readCatalogue,
} from './catalogue.js';

export type { ConfigProblem } from './catalogue.js';

/** A plan customers can buy: its name and the Stripe prices that stand for it. */
export interface BillingPlan {
  /** the plan's name in this app (`pro`): route data (`requires`) and `subscription.plan` use it */
  id: string;
  /** the price new checkouts use */
  priceId: string;
  /** older prices of the same plan (grandfathered subscriptions still count as this plan) */
  formerPriceIds: string[];
}

export interface BillingSettings {
  /** undefined: checkout and portal answer 503 `billing-not-configured` */
  secretKey: string | undefined;
  /** where the Stripe client sends its requests: Stripe's own API, or a local server in tests */
  apiUrl: URL;
  plans: BillingPlan[];
  /** free days before the first charge, for an organization's first subscription; 0: none */
  trialDays: number;
  /** the plans with their seats, limits and features (BILLING_PLANS_FILE, or BILLING_PLANS as flat prices) */
  catalogue: Catalogue;
  /** BILLING_PRORATION: how Stripe prorates a seat quantity change */
  proration: 'create_prorations' | 'always_invoice' | 'none';
  /** BILLING_RETRY_SCHEDULE: ms between attempts of a Stripe sync call, the last repeated */
  retryScheduleMs: number[];
}

export const STRIPE_API_URL = 'https://api.stripe.com';
/** Stripe refuses longer trials */
export const MAX_TRIAL_DAYS = 730;

type Env = Record<string, string | undefined>;

const PLAN_NAME = /^[a-z0-9][a-z0-9-]{0,49}$/;
// Stripe ids: letters, digits and underscores (`price_1Pq…`; a legacy plan's id may be custom)
const PRICE_ID = /^[A-Za-z0-9_-]{1,255}$/;
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * `BILLING_PLANS`: `pro=price_123,team=price_456`. A plan may list former prices after its
 * current one, `pro=price_new|price_old`, so subscriptions on an old price keep their plan.
 */
export function parsePlans(raw: string | undefined, problem: ConfigProblem): BillingPlan[] {
  const plans: BillingPlan[] = [];
  const seenPrices = new Set<string>();
  for (const entry of (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const eq = entry.indexOf('=');
    const name = eq > 0 ? entry.slice(0, eq).trim() : '';
    const prices =
      eq > 0
        ? entry
            .slice(eq + 1)
            .split('|')
            .map((p) => p.trim())
        : [];
    if (!PLAN_NAME.test(name) || prices.length === 0) {
      throw problem(
        'BILLING_PLANS',
        `must be comma-separated plan=price_id pairs such as "pro=price_123,team=price_456" ` +
          `(plan names: lower-case letters, digits and hyphens), got "${entry}"`,
      );
    }
    for (const price of prices) {
      if (!PRICE_ID.test(price)) throw problem('BILLING_PLANS', `plan "${name}": "${price}" is not a Stripe price id (such as price_123)`);
      if (seenPrices.has(price)) throw problem('BILLING_PLANS', `the price "${price}" is named twice: a price belongs to one plan`);
      seenPrices.add(price);
    }
    if (plans.some((p) => p.id === name)) throw problem('BILLING_PLANS', `the plan "${name}" is named twice`);
    plans.push({ id: name, priceId: prices[0], formerPriceIds: prices.slice(1) });
  }
  return plans;
}

function parseApiUrl(raw: string | undefined, problem: ConfigProblem): URL {
  const value = raw?.trim() || STRIPE_API_URL;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw problem('STRIPE_API_URL', `must be an http(s) origin such as ${STRIPE_API_URL}, got "${value}"`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw problem('STRIPE_API_URL', `must be an https URL, got "${value}"`);
  if (url.username || url.password || url.pathname !== '/' || url.search || url.hash) {
    throw problem('STRIPE_API_URL', `must be an origin only (scheme, host, port), got "${value}"`);
  }
  // the secret key travels in every request's Authorization header: plain HTTP only to this machine (a test server)
  if (url.protocol === 'http:' && !LOOPBACK.has(url.hostname)) {
    throw problem('STRIPE_API_URL', `may use plain http only for a server on this machine (127.0.0.1, localhost, ::1); use https, got "${value}"`);
  }
  return url;
}

export function billingSettings(env: Env, problem: ConfigProblem): BillingSettings {
  const secretKey = env.STRIPE_SECRET_KEY?.trim() || undefined;
  // secret (sk_) or restricted (rk_) keys; the value itself is never repeated
  if (secretKey && !/^(sk|rk)_(test|live)_[A-Za-z0-9]{8,}$/.test(secretKey)) {
    throw problem('STRIPE_SECRET_KEY', 'must be a Stripe secret or restricted key (sk_live_…, sk_test_…, rk_live_…, rk_test_…)');
  }
  const trialRaw = env.BILLING_TRIAL_DAYS?.trim() || '0';
  if (!/^\d{1,4}$/.test(trialRaw) || Number(trialRaw) > MAX_TRIAL_DAYS) {
    throw problem('BILLING_TRIAL_DAYS', `must be a whole number of days from 0 to ${MAX_TRIAL_DAYS}, got "${trialRaw}"`);
  }
  const file = env.BILLING_PLANS_FILE?.trim() || undefined;
  if (file && env.BILLING_PLANS?.trim())
    throw problem('BILLING_PLANS_FILE', 'and BILLING_PLANS are both set: use one (BILLING_PLANS_FILE holds everything BILLING_PLANS does)');
  let plans: BillingPlan[];
  let catalogue: Catalogue;
  if (file) {
    catalogue = readCatalogue(file, problem);
    // what checkout and the webhook read: each priced plan, its main price, every other price of it counted as it
    plans = catalogue.plans
      .filter((p) => p.prices)
      .map((p) => {
        const priceId = mainPrice(p)!;
        return { id: p.id, priceId, formerPriceIds: pricesOf(p).filter((x) => x !== priceId) };
      });
  } else {
    plans = parsePlans(env.BILLING_PLANS, problem);
    catalogue = envCatalogue(plans);
  }
  const proration = env.BILLING_PRORATION?.trim() || 'create_prorations';
  if (proration !== 'create_prorations' && proration !== 'always_invoice' && proration !== 'none') {
    throw problem('BILLING_PRORATION', `must be create_prorations, always_invoice or none, got "${proration}"`);
  }
  return {
    secretKey,
    apiUrl: parseApiUrl(env.STRIPE_API_URL, problem),
    plans,
    trialDays: Number(trialRaw),
    catalogue,
    proration,
    retryScheduleMs: parseSchedule(env.BILLING_RETRY_SCHEDULE, problem),
  };
}

/** BILLING_PLANS as a catalogue: each plan one flat price, no seat cap, no limits, no features. */
export function envCatalogue(plans: readonly BillingPlan[]): Catalogue {
  return {
    source: 'env',
    meters: [API_CALLS_METER, STORAGE_BYTES_METER],
    plans: plans.map((p) => ({
      id: p.id,
      name: p.id,
      default: false,
      prices: { flat: p.priceId, perSeat: null, metered: {}, former: [...p.formerPriceIds] },
      seats: { included: 0, max: null },
      limits: {},
      features: [],
      auditLogRetentionDays: DEFAULT_AUDIT_LOG_RETENTION_DAYS,
    })),
  };
}

/** BILLING_RETRY_SCHEDULE: seconds between attempts, the last repeated (default 5,30,120,600,3600). */
function parseSchedule(raw: string | undefined, problem: ConfigProblem): number[] {
  const value = raw?.trim() || '5,30,120,600,3600';
  const items = value.split(',').map((x) => x.trim());
  if (items.length > 30 || items.some((x) => !/^\d+(\.\d+)?$/.test(x) || Number(x) > 86_400)) {
    throw problem('BILLING_RETRY_SCHEDULE', `must list at most 30 delays in seconds (such as 5,30,120; each at most 86400), got "${value}"`);
  }
  return items.map((x) => Math.round(Number(x) * 1000));
}

/** The plan a stored price id belongs to, or undefined for a price BILLING_PLANS does not name. */
export function planOfPrice(plans: readonly BillingPlan[], priceId: string): BillingPlan | undefined {
  return plans.find((p) => p.priceId === priceId || p.formerPriceIds.includes(priceId));
}

/**
 * Settings that start but cannot work as meant, said once at start-up; and paid routes
 * (`requires`) none of whose plans BILLING_PLANS names (no organization could open them).
 */
export function warnAboutBilling(
  settings: BillingSettings,
  context: { env: string; webhookSecrets: readonly string[] },
  log: Logger,
  groups: RouteGroup[],
): void {
  const { secretKey, plans } = settings;
  if (secretKey && context.webhookSecrets.length === 0) {
    log.warn(
      'billing/no-webhook-secret',
      'STRIPE_SECRET_KEY is set but STRIPE_WEBHOOK_SECRET is not: checkouts work, but no subscription will ever reach the organizations',
    );
  }
  if (secretKey && plans.length === 0) log.warn('billing/no-plans', 'STRIPE_SECRET_KEY is set but BILLING_PLANS is empty: there is nothing to check out');
  if (secretKey?.includes('_test_') && context.env === 'prod')
    log.warn('billing/test-key', 'STRIPE_SECRET_KEY is a test-mode key while APP_ENV=prod: no real payment is taken');
  if (plans.length === 0) return;
  for (const group of groups) {
    for (const r of group.routes) {
      if (r.requires && 'plans' in r.requires && !r.requires.plans.some((plan) => plans.some((p) => p.id === plan))) {
        log.warn(
          'billing/gated-plans-unknown',
          `${r.method} ${group.prefix}${r.path} needs the plan ${r.requires.plans.join(' or ')}, ` +
            'which BILLING_PLANS does not name: no organization can open it',
          { route: `${r.method} ${group.prefix}${r.path}` },
        );
      }
    }
  }
}

/**
 * Route data checked against the catalogue at start-up: a `limit` (or an API-key route's
 * `api-calls`) naming a meter the catalogue lacks stops start-up (its requests could only fail);
 * a `requires: {feature}` no plan of a BILLING_PLANS_FILE has is said once per route (no
 * organization can open it; without the file no plan has features, and such routes are closed
 * by design until one is written).
 */
export function checkRouteData(
  groups: RouteGroup[],
  catalogue: Pick<Catalogue, 'source' | 'meters' | 'plans'>,
  offered: readonly { id: string; plans: readonly string[] }[],
  log: Logger,
): void {
  const meters = new Set(catalogue.meters.map((m) => m.id));
  // a plan has a feature when the catalogue lists it there, or when a module offers it to that plan (`billing.offer`)
  const planIds = new Set(catalogue.plans.map((p) => p.id));
  const features = new Set([...catalogue.plans.flatMap((p) => p.features), ...offered.filter((f) => f.plans.some((id) => planIds.has(id))).map((f) => f.id)]);
  const unknownMeters: string[] = [];
  for (const group of groups) {
    for (const r of group.routes) {
      const route = `${r.method} ${group.prefix}${r.path}`;
      const meter = limitOf(r);
      if (meter !== undefined && !meters.has(meter)) unknownMeters.push(`${route} (limit "${meter}")`);
      if (catalogue.source === 'file' && r.requires && 'feature' in r.requires && !features.has(r.requires.feature)) {
        log.warn(
          'billing/gated-feature-unknown',
          `${route} needs the feature ${r.requires.feature}, which no plan of the catalogue has: no organization can open it`,
          {
            route,
            feature: r.requires.feature,
          },
        );
      }
    }
  }
  if (unknownMeters.length > 0) {
    throw new Error(
      `Routes limited by a meter the plan catalogue does not have: ${unknownMeters.join(', ')}; add the meter to BILLING_PLANS_FILE's "meters" (docs/billing.md, "Adding a meter")`,
    );
  }
}
