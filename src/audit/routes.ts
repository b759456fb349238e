/**
 * The audit log's route, as data: an organization's entries for its admins and owners, newest
 * first, a page at a time (docs/audit.md). No route updates or deletes an entry.
 */
import { ref, route, type MembershipResolver, type RouteGroup } from '../http/routes.js';
import { OrgId } from '../orgs/schemas.js';
import { AuditLogPage, AuditLogQuery } from './schemas.js';
import type { AuditLog } from './service.js';

export const AUDIT_PAGE_DEFAULT = 50;

export function auditRoutes(log: AuditLog, memberships: MembershipResolver): RouteGroup {
  return {
    prefix: '/api',
    tags: ['Organizations'],
    auth: 'required',
    memberships,
    routes: [
      route({
        method: 'GET',
        path: '/orgs/:id/audit-log',
        summary: "The organization's audit log",
        description:
          'Security-relevant changes (log-ins, passwords, sessions, members, roles, invitations, ...) with who acted, ' +
          'on what, from where and when, newest first. `limit` 1..100 (default 50); `cursor` is the `next-cursor` of the previous page ' +
          "(400 `request-coercion` for one the service did not issue). A personal organization's log holds its account's own events.",
        orgRole: 'admin',
        schemas: { params: OrgId, querystring: AuditLogQuery, response: { 200: ref(AuditLogPage) } },
        handler({ parameters, membership }) {
          // set on every `orgRole` route by the route layer
          if (!membership) throw new Error('orgRole route without a membership');
          return log.page(membership.organizationId, parameters.query.limit ?? AUDIT_PAGE_DEFAULT, parameters.query.cursor, 'query');
        },
      }),
    ],
  };
}
