/**
 * The audit log's routes, as data: an organization's entries for its admins and owners, newest
 * first, a page at a time or all at once as an export (docs/audit.md). No route updates or
 * deletes an entry.
 */
import { negotiate } from '@fastify/accept-negotiator';
import { createGzip } from 'node:zlib';
import { pipeline } from 'node:stream';
import type { DB } from '../db/database.js';
import { ref, route, type MembershipResolver, type RouteGroup } from '../http/routes.js';
import { OrgId } from '../orgs/schemas.js';
import { EXPORT_CONTENT_TYPES, exportFileName, exportStream } from './export.js';
import { auditLogFilters, describeFilters } from './filters.js';
import { appendAudit, originOf } from './log.js';
import { AuditLogExportBody, AuditLogExportQuery, AuditLogPage, AuditLogQuery } from './schemas.js';
import type { AuditLog } from './service.js';

export const AUDIT_PAGE_DEFAULT = 50;

const FILTERS_TEXT =
  'Filters: `action` (repeat it for several), `actor-id` (an account or an API key), `target-type`, `target-id`, ' +
  '`from` (inclusive) and `to` (exclusive), ISO 8601 date-times with a zone; a bad one is 400 `request-coercion` naming it.';

export function auditRoutes(log: AuditLog, memberships: MembershipResolver, db: DB): RouteGroup {
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
          "(400 `request-coercion` for one the service did not issue). A personal organization's log holds its account's own events. " +
          FILTERS_TEXT,
        orgRole: 'admin',
        schemas: { params: OrgId, querystring: AuditLogQuery, response: { 200: ref(AuditLogPage) } },
        handler({ parameters, membership }) {
          // set on every `orgRole` route by the route layer
          if (!membership) throw new Error('orgRole route without a membership');
          const { limit, cursor } = parameters.query;
          return log.page(membership.organizationId, limit ?? AUDIT_PAGE_DEFAULT, cursor, 'query', auditLogFilters(parameters.query, 'query'));
        },
      }),
      route({
        method: 'GET',
        path: '/orgs/:id/audit-log/export',
        summary: "Export the organization's audit log",
        description:
          'The whole selection, newest first, streamed (no row limit): `format=ndjson` one entry per line as the API answers it, ' +
          '`format=csv` RFC 4180 with the columns `id, created-at, action, actor-type, actor-id, actor-email, target-type, target-id, ip, user-agent, details`; ' +
          "a cell a spreadsheet would read as a formula starts with `'`. " +
          FILTERS_TEXT +
          ' Recorded as `audit-log.exported`.',
        orgRole: 'admin',
        schemas: { params: OrgId, querystring: AuditLogExportQuery, response: { 200: AuditLogExportBody } },
        async handler({ parameters, membership, request, reply, actor }) {
          if (!membership) throw new Error('orgRole route without a membership');
          const { format } = parameters.query;
          const filters = auditLogFilters(parameters.query, 'query');
          const organizationId = membership.organizationId;
          await appendAudit(db, {
            action: 'audit-log.exported',
            organizationId,
            accountId: actor && 'accountId' in actor ? actor.accountId : null,
            actor: actor ?? {},
            target: { type: 'organization', id: organizationId },
            details: { format, ...describeFilters(filters) },
            origin: originOf(request),
          });
          reply
            .type(EXPORT_CONTENT_TYPES[format])
            .header('content-disposition', `attachment; filename="${exportFileName(organizationId, filters, format)}"`)
            .header('cache-control', 'no-store')
            .header('vary', 'accept-encoding');
          const body = exportStream(db, organizationId, filters, format);
          const accepted = request.headers['accept-encoding'];
          if (!accepted || negotiate(accepted.toLowerCase(), ['gzip']) !== 'gzip') return body;
          reply.header('content-encoding', 'gzip');
          // level 4: most of the saving at a fraction of the default's time
          return pipeline(body, createGzip({ level: 4 }), () => undefined);
        },
      }),
    ],
  };
}
