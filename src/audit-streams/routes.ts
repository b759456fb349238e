/**
 * The audit log streams' routes, as data (docs/audit.md, "Streams"): an organization's admins
 * and owners make, read, change, test, pause, resume and delete them. People only: a stream
 * sends the whole log out, so neither an API key nor an OAuth token reaches these routes.
 */
import { originOf } from '../audit/log.js';
import type { AuditStreamKind } from '../db/schema.js';
import { ref, route, type Actor, type Membership, type MembershipResolver, type RouteGroup } from '../http/routes.js';
import type { FastifyRequest } from 'fastify';
import { OrgId } from '../orgs/schemas.js';
import { AuditStream, AuditStreams, AuditStreamTestResult, CreateAuditStream, CreatedAuditStream, StreamParams, UpdateAuditStream } from './schemas.js';
import type { AuditStreamService, StreamCaller } from './service.js';

function callerOf(membership: Membership | undefined, actor: Actor | undefined, request: FastifyRequest): StreamCaller {
  // set on every `orgRole` route by the route layer
  if (!membership || !actor) throw new Error('orgRole route without a membership');
  return { organizationId: membership.organizationId, actor, origin: originOf(request) };
}

export function auditStreamRoutes(streams: AuditStreamService, memberships: MembershipResolver): RouteGroup {
  return {
    prefix: '/api/orgs',
    tags: ['Audit log streams'],
    auth: 'required',
    memberships,
    routes: [
      route({
        method: 'GET',
        path: '/:id/audit-log/streams',
        summary: "The organization's audit log streams",
        description: 'Each with its status, `lag` (entries waiting), `last-delivered-at` and `last-error`; credentials are never answered.',
        orgRole: 'admin',
        schemas: { params: OrgId, response: { 200: ref(AuditStreams) } },
        handler: ({ membership }) => streams.list(membership!.organizationId),
      }),
      route({
        method: 'POST',
        path: '/:id/audit-log/streams',
        summary: 'Stream the audit log to a SIEM',
        description:
          'Flat: `{kind: "https", url}`, `{kind: "splunk", url, token}`, `{kind: "datadog", site, api-key}` or ' +
          '`{kind: "s3", bucket, region, endpoint?, force-path-style?, prefix?, access-key-id, secret-access-key}`. ' +
          'Every entry from this one on (its own creation is its first) is delivered in order, at least once, in batches. ' +
          'An https stream answers its signing secret (`secret`) this once. 400 names a bad field; 409 past 10 streams.',
        orgRole: 'admin',
        verifiedEmail: true,
        schemas: { params: OrgId, body: ref(CreateAuditStream), response: { 201: ref(CreatedAuditStream) } },
        handler: ({ parameters, membership, actor, request }) =>
          streams.create(callerOf(membership, actor, request), parameters.body as typeof parameters.body & { kind: AuditStreamKind }),
      }),
      route({
        method: 'GET',
        path: '/:id/audit-log/streams/:sid',
        summary: 'An audit log stream',
        orgRole: 'admin',
        schemas: { params: StreamParams, response: { 200: ref(AuditStream) } },
        handler: ({ parameters, membership }) => streams.get(membership!.organizationId, parameters.path.sid),
      }),
      route({
        method: 'PATCH',
        path: '/:id/audit-log/streams/:sid',
        summary: 'Change an audit log stream',
        description: "Any of its kind's fields (a credential only to replace it); the batch in flight goes to the new destination at once.",
        orgRole: 'admin',
        verifiedEmail: true,
        schemas: { params: StreamParams, body: ref(UpdateAuditStream), response: { 200: ref(AuditStream) } },
        handler: ({ parameters, membership, actor, request }) => streams.update(callerOf(membership, actor, request), parameters.path.sid, parameters.body),
      }),
      route({
        method: 'DELETE',
        path: '/:id/audit-log/streams/:sid',
        summary: 'Delete an audit log stream',
        description: 'What it had not delivered yet is no longer owed to it (the entries stay in the log).',
        orgRole: 'admin',
        schemas: { params: StreamParams, response: { 204: null } },
        async handler({ parameters, membership, actor, request }) {
          await streams.remove(callerOf(membership, actor, request), parameters.path.sid);
          return undefined;
        },
      }),
      route({
        method: 'POST',
        path: '/:id/audit-log/streams/:sid/test',
        summary: 'Send a test event to an audit log stream',
        description:
          'Sends one `audit-stream.test` event to the destination now and answers how it went; nothing is kept or retried. ' +
          "429 (`rate-limited`, Retry-After) past the organization's tests (AUDIT_STREAM_TEST_LIMIT).",
        orgRole: 'admin',
        schemas: { params: StreamParams, response: { 200: ref(AuditStreamTestResult) } },
        handler: ({ parameters, membership, actor, request }) => streams.test(callerOf(membership, actor, request), parameters.path.sid),
      }),
      route({
        method: 'POST',
        path: '/:id/audit-log/streams/:sid/pause',
        summary: 'Pause an audit log stream',
        description: 'Nothing is sent until it is resumed; entries keep being owed to it.',
        orgRole: 'admin',
        schemas: { params: StreamParams, response: { 200: ref(AuditStream) } },
        handler: ({ parameters, membership, actor, request }) => streams.setStatus(callerOf(membership, actor, request), parameters.path.sid, 'paused'),
      }),
      route({
        method: 'POST',
        path: '/:id/audit-log/streams/:sid/resume',
        summary: 'Resume an audit log stream',
        description: 'It picks up where it stopped (the batch it was sending first): nothing is skipped.',
        orgRole: 'admin',
        schemas: { params: StreamParams, response: { 200: ref(AuditStream) } },
        handler: ({ parameters, membership, actor, request }) => streams.setStatus(callerOf(membership, actor, request), parameters.path.sid, 'active'),
      }),
    ],
  };
}
