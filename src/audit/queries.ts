/** The query kind of the audit log: `orgs/audit-log`, with the route's rule (404 for a non-member, 403 below admin). */
import { phrase } from '../i18n/messages.js';
import { Type } from 'typebox';
import { forbidden, notFound, unauthorized } from '../http/errors.js';
import { hasRole, type MembershipResolver } from '../http/routes.js';
import { queryKind } from '../http/queries.js';
import { auditLogFilters } from './filters.js';
import { AUDIT_PAGE_DEFAULT } from './routes.js';
import { AuditLogPage, AuditLogQuery } from './schemas.js';
import type { AuditLog } from './service.js';

export function auditQueries(log: AuditLog, memberships: MembershipResolver) {
  return [
    queryKind({
      kind: 'orgs/audit-log',
      summary: "An organization's audit log, newest first (admins and owners; 404 for a non-member, 403 for a member)",
      auth: 'required',
      params: Type.Object({ 'org-id': Type.String({ format: 'uuid' }), ...AuditLogQuery.properties }, { additionalProperties: false }),
      result: AuditLogPage,
      async run({ user, params }) {
        if (!user) throw unauthorized();
        const membership = await memberships(params['org-id'], user.id);
        if (!membership) throw notFound('No such organization');
        if (!hasRole(membership.role, 'admin')) {
          throw forbidden(phrase('This needs the role admin or above in the organization; yours is {role}', { role: membership.role }), {
            'required-role': 'admin',
            role: membership.role,
          });
        }
        return log.page(membership.organizationId, params.limit ?? AUDIT_PAGE_DEFAULT, params.cursor, 'body', auditLogFilters(params, 'body'));
      },
    }),
  ];
}
