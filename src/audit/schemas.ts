/** Named schemas of the audit log (docs/audit.md). */
import { Type, type Static } from 'typebox';
import { AuditLogFilterProperties } from './filters.js';

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);
const Uuid = Type.String({ format: 'uuid' });

const auditEntryProperties = {
  id: Type.String({ pattern: '^[0-9]+$', description: "the entry's number: later entries have larger ones" }),
  action: Type.String({ description: '`area.verb`, e.g. `account.logged-in`, `org.member-role-changed` (docs/audit.md lists them)' }),
  actor: Type.Object(
    {
      'account-id': Nullable(Uuid),
      email: Type.Optional(Type.String({ description: 'present while the account is a member of the organization' })),
      'api-key-id': Nullable(Uuid),
    },
    { additionalProperties: false, description: 'who acted: an account, an API key, or neither (the system, a payment provider, an unauthenticated caller)' },
  ),
  target: Type.Union([
    Type.Object(
      {
        type: Type.String({ description: '`account`, `session`, `organization`, `invitation`, ...' }),
        id: Type.String(),
        email: Type.Optional(Type.String({ description: 'for an `account` target that is a member of the organization' })),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ]),
  impersonated: Type.Optional(
    Type.Object(
      {
        'account-id': Uuid,
        email: Type.Optional(Type.String({ description: 'present while the account is a member of the organization' })),
      },
      {
        additionalProperties: false,
        description: 'only for a change made in an impersonated session: the account a platform admin (the actor) acted as (docs/admin.md)',
      },
    ),
  ),
  ip: Nullable(Type.String()),
  'user-agent': Nullable(Type.String()),
  details: Type.Object(
    {},
    {
      additionalProperties: Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]),
      description: 'small flat facts of the action (e.g. `role`, `previous-role`); never a secret',
    },
  ),
  'created-at': Type.String({ format: 'date-time' }),
};

export const AuditEntry = Type.Object(auditEntryProperties, { $id: 'audit-entry', additionalProperties: false });
export type AuditEntry = Static<typeof AuditEntry>;

export const AuditLogPage = Type.Object(
  {
    entries: Type.Array(AuditEntry, { description: 'newest first' }),
    'next-cursor': Type.Union([Type.String(), Type.Null()], { description: 'pass as `cursor` for the next (older) page; null on the last page' }),
  },
  { $id: 'audit-log-page', additionalProperties: false },
);
export type AuditLogPage = Static<typeof AuditLogPage>;

export const AuditLogQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: '`next-cursor` of the previous page (with the same filters)' })),
    ...AuditLogFilterProperties,
  },
  { additionalProperties: false },
);

export const AuditLogExportQuery = Type.Object(
  {
    format: Type.Union([Type.Literal('csv'), Type.Literal('ndjson')], { description: '`csv` (RFC 4180, a header row) or `ndjson` (one entry per line)' }),
    ...AuditLogFilterProperties,
  },
  { additionalProperties: false },
);

/** The export's body: not JSON, streamed. */
export const AuditLogExportBody = Type.Unsafe<import('node:stream').Readable>({
  type: 'string',
  description: 'the selection, newest first: CSV (`text/csv`) or NDJSON (`application/x-ndjson`), streamed; gzip when the client accepts it',
});

/** An entry in the account's export: the same fields, with the organization whose log shows it. */
export const ExportedAuditEntry = Type.Object(
  { ...auditEntryProperties, 'organization-id': Nullable(Uuid) },
  { $id: 'exported-audit-entry', additionalProperties: false },
);
export type ExportedAuditEntry = Static<typeof ExportedAuditEntry>;

/** Embedded ones first (see system.ts). */
export const AUDIT_SCHEMAS = [AuditEntry, AuditLogPage, ExportedAuditEntry];
