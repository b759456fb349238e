/**
 * Reports: the example of a paid feature (route data `requires: {plans}`, docs/billing.md).
 */
import { billingModule } from '../billing/module.js';
import { orgsModule } from '../orgs/module.js';
import { defineModule } from '../runtime/module.js';
import { reportRoutes, USAGE_REPORT_FEATURE, USAGE_REPORT_PLANS, UsageReport } from './routes.js';

export const reportsModule = defineModule({
  name: 'reports',
  start(ctx) {
    const { billing } = ctx.use(billingModule);
    // the client asks for the report only on a plan that opens it
    billing.offer({ id: USAGE_REPORT_FEATURE, plans: USAGE_REPORT_PLANS });
    return {
      services: {},
      schemas: [UsageReport],
      routeGroups: [reportRoutes(ctx.db, ctx.use(orgsModule).memberships, billing.featureOf)],
    };
  },
});
