/** Named schemas of the audit log's streams (docs/audit.md, "Streams"). */
import { Type, type Static } from 'typebox';

const DateTime = Type.String({ format: 'date-time' });
const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);
const Kind = Type.Union([Type.Literal('https'), Type.Literal('splunk'), Type.Literal('datadog'), Type.Literal('s3')], {
  description: '`https` (NDJSON batches signed per Standard Webhooks), `splunk` (HTTP Event Collector), `datadog` (logs intake), `s3` (gzipped NDJSON objects)',
});

const fields = {
  url: Type.String({ minLength: 1, maxLength: 2000, description: 'https: the receiver; splunk: the HTTP Event Collector (`https://host:8088`)' }),
  token: Type.String({ minLength: 1, maxLength: 512, description: 'splunk: the HEC token (write-only)' }),
  site: Type.String({
    minLength: 1,
    maxLength: 2000,
    description: 'datadog: the site (`datadoghq.com`, `datadoghq.eu`, `us3.datadoghq.com`, ...) or the full URL of an intake endpoint',
  }),
  'api-key': Type.String({ minLength: 1, maxLength: 512, description: 'datadog: an API key (write-only)' }),
  bucket: Type.String({ minLength: 3, maxLength: 63, description: 's3: the bucket' }),
  region: Type.String({ minLength: 1, maxLength: 50, description: 's3: its region, such as `us-east-1`' }),
  endpoint: Type.Union([Type.String({ maxLength: 2000 }), Type.Null()], { description: 's3: an S3-compatible endpoint (R2, MinIO); absent: AWS' }),
  'force-path-style': Type.Boolean({ description: 's3: path-style addressing (MinIO)' }),
  prefix: Type.String({ maxLength: 512, description: 's3: the key prefix (default `audit-log`)' }),
  'access-key-id': Type.String({ minLength: 1, maxLength: 512, description: 's3: the access key id (write-only)' }),
  'secret-access-key': Type.String({ minLength: 1, maxLength: 512, description: 's3: the secret access key (write-only)' }),
};
const optional = Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, Type.Optional(v)])) as {
  [K in keyof typeof fields]: ReturnType<typeof Type.Optional<(typeof fields)[K]>>;
};

export const CreateAuditStream = Type.Object(
  { kind: Kind, ...optional },
  { $id: 'create-audit-stream', additionalProperties: false, description: "flat: `kind` and that kind's fields" },
);
export type CreateAuditStream = Static<typeof CreateAuditStream>;

export const UpdateAuditStream = Type.Object(optional, {
  $id: 'update-audit-stream',
  additionalProperties: false,
  description: "any of the stream's kind's fields; a credential only to change it",
});
export type UpdateAuditStream = Static<typeof UpdateAuditStream>;

export const AuditStream = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    kind: Kind,
    status: Type.Union([Type.Literal('active'), Type.Literal('paused')]),
    'paused-reason': Type.Union([Type.Literal('manual'), Type.Literal('failing'), Type.Null()], {
      description: '`manual` (an admin), `failing` (every batch failed for AUDIT_STREAM_PAUSE_AFTER)',
    }),
    url: Type.Optional(Type.String()),
    site: Type.Optional(Type.String()),
    bucket: Type.Optional(Type.String()),
    region: Type.Optional(Type.String()),
    endpoint: Type.Optional(Type.String()),
    'force-path-style': Type.Optional(Type.Boolean()),
    prefix: Type.Optional(Type.String()),
    'created-at': DateTime,
    'last-delivered-at': Nullable(DateTime),
    delivered: Type.Integer({ minimum: 0, description: 'entries delivered so far' }),
    lag: Type.Integer({ minimum: 0, description: 'entries waiting to be delivered' }),
    'last-error': Nullable(Type.String({ description: "the last failed batch's error; null once a batch goes through" })),
    'last-error-at': Nullable(DateTime),
    'failing-since': Nullable(DateTime),
  },
  { $id: 'audit-stream', additionalProperties: false },
);
export type AuditStream = Static<typeof AuditStream>;

export const CreatedAuditStream = Type.Object(
  {
    ...AuditStream.properties,
    secret: Type.Optional(Type.String({ description: 'https: the signing secret (`whsec_...`), shown this once' })),
  },
  { $id: 'created-audit-stream', additionalProperties: false },
);
export type CreatedAuditStream = Static<typeof CreatedAuditStream>;

export const AuditStreams = Type.Object({ streams: Type.Array(AuditStream) }, { $id: 'audit-streams', additionalProperties: false });
export type AuditStreams = Static<typeof AuditStreams>;

export const AuditStreamTestResult = Type.Object(
  {
    delivered: Type.Boolean(),
    'status-code': Type.Union([Type.Integer(), Type.Null()]),
    error: Nullable(Type.String()),
    'duration-ms': Type.Integer({ minimum: 0 }),
  },
  { $id: 'audit-stream-test-result', additionalProperties: false },
);
export type AuditStreamTestResult = Static<typeof AuditStreamTestResult>;

export const StreamParams = Type.Object({ id: Type.String({ format: 'uuid' }), sid: Type.String({ format: 'uuid' }) });

export const AUDIT_STREAM_SCHEMAS = [CreateAuditStream, UpdateAuditStream, AuditStream, CreatedAuditStream, AuditStreams, AuditStreamTestResult];
