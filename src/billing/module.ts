/**
 * Billing (docs/billing.md): organizations' plans and subscriptions through Stripe Checkout and
 * the Customer Portal, and the plan gate's data (`requires` on routes).
 */
import { mailModule } from '../mail/module.js';
import { NOTIFICATION_KINDS_KEY } from '../notifications/kinds.js';
import { notificationsModule } from '../notifications/module.js';
import { orgsModule } from '../orgs/module.js';
import { defineModule } from '../runtime/module.js';
import { ConfigError, int, list } from '../runtime/settings.js';
import { billingRoutes } from './routes.js';
import { BILLING_SCHEMAS } from './schemas.js';
import { BillingService } from './service.js';
import { billingSettings, checkRouteData, warnAboutBilling } from './settings.js';
import { stripeGateway } from './stripe-gateway.js';
import { BILLING_DUE_CHANNEL, StripeSync, type SubscriptionReader } from './stripe-sync.js';
import { queueSubscriptionRead } from './subscription-read.js';
import { UsageService } from './usage.js';
import { MESSAGES_KEY } from '../i18n/messages.js';
import { BILLING_MESSAGES } from './messages/index.js';

export { BillingService } from './service.js';
export type { UsageRecord, UsageService } from './usage.js';

export const billingModule = defineModule({
  name: 'billing',
  declares: {
    [MESSAGES_KEY]: [BILLING_MESSAGES],
    [NOTIFICATION_KINDS_KEY]: [
      { kind: 'usage-threshold', category: 'billing', description: "an organization's usage of a meter reached the plan's warning level (owners and admins)" },
      { kind: 'usage-limit-reached', category: 'billing', description: "an organization's usage of a meter reached the plan's hard limit (owners and admins)" },
    ],
  },
  settings: (env) => ({
    billing: billingSettings(env, (variable, problem) => new ConfigError(variable, problem)),
    webhookSecrets: list(env.STRIPE_WEBHOOK_SECRET),
    syncPollMs: int(env, 'BILLING_SYNC_POLL_MS', 1000, 10, 3_600_000),
  }),
  async start(ctx, settings) {
    const log = ctx.logs.logger('saas.billing');
    const gateway = await stripeGateway(settings.billing);
    const billing = new BillingService({
      db: ctx.db,
      settings: settings.billing,
      appUrl: ctx.config.appUrl,
      gateway,
      log,
    });
    const orgs = ctx.use(orgsModule);
    // deleting organizations (an account's deletion takes those it alone owns) cancels their subscriptions first
    orgs.onBeforeDeletion((ids) => billing.cancelForDeletion(ids));
    orgs.invitations.useCheck(billing.seatCap);
    const memberships = orgs.memberships;
    const usage = new UsageService({
      db: ctx.db,
      catalogue: () => billing.catalogue,
      mail: ctx.use(mailModule).mail,
      notifications: ctx.use(notificationsModule).notifications,
      log,
      appUrl: ctx.config.appUrl,
    });
    // seat quantities and meter events to Stripe, durably (docs/billing.md, "When Stripe is down")
    const sync = new StripeSync({ db: ctx.db, log, gateway, settings: settings.billing, pollMs: settings.syncPollMs, leaseMs: 60_000 });
    // its catch-up is a nudge of a worker that polls by itself: not at every tick while LISTEN is down
    ctx.listener.subscribe({
      channel: BILLING_DUE_CHANNEL,
      onNotification: () => sync.nudge(),
      catchUp: async () => sync.nudge(),
      catchUpWhileDisconnected: false,
    });
    sync.start();
    return {
      services: {
        billing,
        sync,
        usage,
        // re-reads of subscriptions whose events tied: queued by the payments module's webhook, applied by its reader
        subscriptionReads: { queue: queueSubscriptionRead, useReader: (reader: SubscriptionReader) => sync.useSubscriptionReader(reader) },
      },
      usageGate: usage,
      schemas: BILLING_SCHEMAS,
      routeGroups: [billingRoutes(billing, memberships, usage)],
      // the paid features (route data `requires`) of every module: their plans checked against BILLING_PLANS
      // and every route's `limit` meter and `requires.feature` against the catalogue
      ready: (app) => {
        warnAboutBilling(settings.billing, { env: ctx.config.env, webhookSecrets: settings.webhookSecrets }, log, app.routeGroups);
        checkRouteData(app.routeGroups, billing.catalogue, billing.offered, log);
      },
      stop: () => sync.stop(ctx.config.shutdownTimeoutMs),
    };
  },
});
