/**
 * The audit log (docs/audit.md): entries are written by every module in the transaction of the
 * change (audit/log.ts); this module reads them back for an organization's admins.
 */
import { orgsModule } from '../orgs/module.js';
import { defineModule } from '../runtime/module.js';
import { auditQueries } from './queries.js';
import { auditRoutes } from './routes.js';
import { AUDIT_SCHEMAS } from './schemas.js';
import { AuditLog } from './service.js';
import { MESSAGES_KEY } from '../i18n/messages.js';
import { AUDIT_MESSAGES } from './messages/index.js';

export const auditModule = defineModule({
  name: 'audit',
  declares: { [MESSAGES_KEY]: [AUDIT_MESSAGES] },
  start(ctx) {
    const auditLog = new AuditLog(ctx.db);
    const { memberships } = ctx.use(orgsModule);
    return {
      services: { auditLog },
      schemas: AUDIT_SCHEMAS,
      routeGroups: [auditRoutes(auditLog, memberships, ctx.db)],
      queries: auditQueries(auditLog, memberships),
    };
  },
});
