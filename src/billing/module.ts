/**
 * Billing (docs/billing.md): organizations' plans and subscriptions through Stripe Checkout and
 * the Customer Portal, and the plan gate's data (`requires` on routes).
 */
import { orgsModule } from '../orgs/module.js';
import { defineModule } from '../runtime/module.js';
import { ConfigError, list } from '../runtime/settings.js';
import { billingRoutes } from './routes.js';
import { BILLING_SCHEMAS } from './schemas.js';
import { BillingService } from './service.js';
import { billingSettings, warnAboutBilling } from './settings.js';
import { stripeGateway } from './stripe-gateway.js';

export { BillingService } from './service.js';

export const billingModule = defineModule({
  name: 'billing',
  settings: (env) => ({
    billing: billingSettings(env, (variable, problem) => new ConfigError(variable, problem)),
    webhookSecrets: list(env.STRIPE_WEBHOOK_SECRET),
  }),
  async start(ctx, settings) {
    const log = ctx.logs.logger('saas.billing');
    const billing = new BillingService({
      db: ctx.db,
      settings: settings.billing,
      appUrl: ctx.config.appUrl,
      gateway: await stripeGateway(settings.billing),
      log,
    });
    const orgs = ctx.use(orgsModule);
    // deleting organizations (an account's deletion takes those it alone owns) cancels their subscriptions first
    orgs.onBeforeDeletion((ids) => billing.cancelForDeletion(ids));
    const memberships = orgs.memberships;
    return {
      services: { billing },
      schemas: BILLING_SCHEMAS,
      routeGroups: [billingRoutes(billing, memberships)],
      // the paid features (route data `requires`) of every module: their plans checked against BILLING_PLANS
      ready: (app) => warnAboutBilling(settings.billing, { env: ctx.config.env, webhookSecrets: settings.webhookSecrets }, log, app.routeGroups),
    };
  },
});
