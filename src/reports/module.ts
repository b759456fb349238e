/**
 * Reports: the example of a paid feature (route data `requires: {plans}`, docs/billing.md).
 */
import { billingModule } from '../billing/module.js';
import { orgsModule } from '../orgs/module.js';
import { defineModule } from '../runtime/module.js';
import { reportRoutes, UsageReport } from './routes.js';

export const reportsModule = defineModule({
  name: 'reports',
  start(ctx) {
    const { billing } = ctx.use(billingModule);
    return {
      services: {},
      schemas: [UsageReport],
      routeGroups: [reportRoutes(ctx.db, ctx.use(orgsModule).memberships, billing.subscriptionOf)],
    };
  },
});
