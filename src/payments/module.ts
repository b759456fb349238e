/**
 * The payment provider's webhook (Stripe, docs/billing.md): events verified from the raw bytes,
 * stored once, applied to organizations' subscriptions in the same transaction.
 */
import { billingModule } from '../billing/module.js';
import { NOTIFICATION_KINDS_KEY } from '../notifications/kinds.js';
import { notificationsModule } from '../notifications/module.js';
import { defineModule } from '../runtime/module.js';
import { list } from '../runtime/settings.js';
import { BillingEffects } from './effects.js';
import { paymentQueries, PaymentEventsPage } from './queries.js';
import { paymentRoutes, WebhookReceipt } from './routes.js';
import { PaymentService } from './service.js';
import { currentSubscriptionEvent, stripeProvider } from './stripe.js';
import { MESSAGES_KEY } from '../i18n/messages.js';
import { PAYMENTS_MESSAGES } from './messages/index.js';

export const paymentsModule = defineModule({
  name: 'payments',
  declares: {
    [MESSAGES_KEY]: [PAYMENTS_MESSAGES],
    [NOTIFICATION_KINDS_KEY]: [
      { kind: 'trial-ending', category: 'billing', description: "an organization's trial ends in three days (to its owners)" },
      { kind: 'payment-failed', category: 'billing', description: "an organization's payment failed: its subscription is past due (owners and admins)" },
    ],
  },
  settings: (env) => ({ stripeWebhookSecrets: list(env.STRIPE_WEBHOOK_SECRET) }),
  start(ctx, settings) {
    const { metrics } = ctx;
    const log = ctx.logs.logger('saas.payments');
    const { billing, subscriptionReads } = ctx.use(billingModule);
    const effects = new BillingEffects({
      notifications: ctx.use(notificationsModule).notifications,
      log,
      planOf: (priceId) => billing.planName(priceId),
      queueSubscriptionRead: subscriptionReads.queue,
    });
    const stripe = stripeProvider(settings.stripeWebhookSecrets);
    const payments = new PaymentService(ctx.db, [stripe], effects, log, {
      onWebhook: metrics && ((provider, type, outcome) => metrics.webhook(provider, type, outcome)),
    });
    // a subscription whose events tied, as Stripe has it now (retrieved by the Stripe sync)
    subscriptionReads.useReader((subscription) => payments.applyCurrent(stripe, currentSubscriptionEvent(subscription, new Date())));
    return {
      services: { payments },
      schemas: [WebhookReceipt, PaymentEventsPage],
      routeGroups: [paymentRoutes(payments)],
      queries: paymentQueries(payments),
    };
  },
});
