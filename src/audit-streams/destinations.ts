/**
 * The four kinds of audit log stream (docs/audit.md, "Streams"): what each takes when an admin
 * makes or changes one (checked here, every refusal a 400 naming the field), what is answered
 * back (never a credential), and what is kept sealed.
 * - `https` `{url}`: NDJSON batches signed per Standard Webhooks with the stream's own secret;
 * - `splunk` `{url, token}`: the HTTP Event Collector;
 * - `datadog` `{site, api-key}`: the logs intake of a Datadog site (or a full intake URL);
 * - `s3` `{bucket, region, endpoint?, force-path-style?, prefix?, access-key-id, secret-access-key}`.
 * Every URL goes through the webhooks' address guard when it is given and again at each send.
 */
import type { AuditStreamKind } from '../db/schema.js';
import { requestCoercion, type Words } from '../http/errors.js';
import { msg, phrase } from '../i18n/messages.js';
import { checkEndpointUrl, type EndpointUrlRules } from '../webhooks/endpoint-url.js';
import { newWebhookSecret } from '../webhooks/signing.js';

export const STREAM_KINDS: readonly AuditStreamKind[] = ['https', 'splunk', 'datadog', 's3'];

/** Datadog's sites: `site` names one, or is the full URL of an intake endpoint (a proxy, a test). */
export const DATADOG_SITES = [
  'datadoghq.com',
  'us3.datadoghq.com',
  'us5.datadoghq.com',
  'datadoghq.eu',
  'ap1.datadoghq.com',
  'ap2.datadoghq.com',
  'ddog-gov.com',
];

/** What a stream's request body may carry, flat; which fields a kind takes is checked here. */
export interface StreamInput {
  kind?: AuditStreamKind;
  url?: string;
  token?: string;
  site?: string;
  'api-key'?: string;
  bucket?: string;
  region?: string;
  endpoint?: string | null;
  'force-path-style'?: boolean;
  prefix?: string;
  'access-key-id'?: string;
  'secret-access-key'?: string;
}

/** The settings kept in the clear and answered back. */
export interface StreamSettings {
  url?: string;
  site?: string;
  bucket?: string;
  region?: string;
  endpoint?: string;
  'force-path-style'?: boolean;
  prefix?: string;
}

/** The credentials, sealed at rest, never answered (the https kind's signing secret is shown once, at creation). */
export interface StreamCredentials {
  secret?: string;
  token?: string;
  apiKey?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
}

type Field = keyof StreamInput;
const FIELDS: Record<AuditStreamKind, { required: Field[]; optional: Field[] }> = {
  https: { required: ['url'], optional: [] },
  splunk: { required: ['url', 'token'], optional: [] },
  datadog: { required: ['site', 'api-key'], optional: [] },
  s3: { required: ['bucket', 'region', 'access-key-id', 'secret-access-key'], optional: ['endpoint', 'force-path-style', 'prefix'] },
};

const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const REGION = /^[a-z0-9-]{1,50}$/;
const PREFIX = /^[A-Za-z0-9!_.*'()/-]{0,512}$/;
/** printable ASCII without spaces: no header can be split by a credential */
const CREDENTIAL = /^[\x21-\x7e]{1,512}$/;

const refuse = (field: string, message: Words) => requestCoercion('body', [{ path: `/${field}`, message }]);

/** The intake URL of a Datadog `site`. */
export function datadogIntake(site: string): string {
  return DATADOG_SITES.includes(site) ? `https://http-intake.logs.${site}/api/v2/logs` : site;
}

/** The HEC event endpoint of a Splunk `url` (its base, or the endpoint itself). */
export function splunkEndpoint(url: string): string {
  const base = url.replace(/\/+$/, '');
  return base.endsWith('/services/collector/event') ? base : `${base}/services/collector/event`;
}

/** The S3 key prefix without leading or trailing slashes. */
const cleanPrefix = (prefix: string) => prefix.replace(/^\/+|\/+$/g, '');

export interface CheckedStream {
  settings: StreamSettings;
  credentials: StreamCredentials;
  /** the fields the input changed, for the audit entry */
  fields: string[];
}

/**
 * Checks a new stream's fields (`current` absent) or a change to one (`current`: what it has
 * now); resolves to what to keep. A field of another kind, a missing one, a bad value: 400.
 */
export async function checkStream(
  kind: AuditStreamKind,
  input: StreamInput,
  rules: EndpointUrlRules,
  current?: { settings: StreamSettings; credentials: StreamCredentials },
): Promise<CheckedStream> {
  const allowed = new Set<Field>([...FIELDS[kind].required, ...FIELDS[kind].optional]);
  for (const key of Object.keys(input) as Field[]) {
    if (key === 'kind') continue;
    if (!allowed.has(key)) throw refuse(key, phrase('is not a setting of a {kind} stream (it takes {settings})', { kind, settings: [...allowed].join(', ') }));
  }
  if (!current) {
    for (const key of FIELDS[kind].required) if (input[key] === undefined) throw refuse(key, phrase('is required for a {kind} stream', { kind }));
  }
  const settings: StreamSettings = { ...current?.settings };
  const credentials: StreamCredentials = { ...current?.credentials };
  const credential = (field: Field, value: string | undefined): string | undefined => {
    if (value === undefined) return undefined;
    if (!CREDENTIAL.test(value)) throw refuse(field, msg('must be 1..512 printable characters without spaces'));
    return value;
  };
  if (input.url !== undefined) settings.url = await checkEndpointUrl(input.url, rules, '/url');
  if (input.token !== undefined) credentials.token = credential('token', input.token);
  if (input['api-key'] !== undefined) credentials.apiKey = credential('api-key', input['api-key']);
  if (input['access-key-id'] !== undefined) credentials.accessKeyId = credential('access-key-id', input['access-key-id']);
  if (input['secret-access-key'] !== undefined) credentials.secretAccessKey = credential('secret-access-key', input['secret-access-key']);
  if (input.site !== undefined) {
    const site = input.site.trim().toLowerCase();
    // a named site is Datadog's own public host; anything else is a URL of an intake, checked like any URL
    settings.site = DATADOG_SITES.includes(site) ? site : await checkEndpointUrl(input.site, rules, '/site');
  }
  if (input.bucket !== undefined) {
    if (!BUCKET.test(input.bucket)) throw refuse('bucket', msg('must be an S3 bucket name (3..63 lower-case letters, digits, dots and hyphens)'));
    settings.bucket = input.bucket;
  }
  if (input.region !== undefined) {
    if (!REGION.test(input.region)) throw refuse('region', msg('must be a region such as us-east-1'));
    settings.region = input.region;
  }
  if (input.endpoint !== undefined) {
    if (input.endpoint === null || input.endpoint === '') delete settings.endpoint;
    else settings.endpoint = (await checkEndpointUrl(input.endpoint, rules, '/endpoint')).replace(/\/+$/, '');
  }
  if (input['force-path-style'] !== undefined) settings['force-path-style'] = input['force-path-style'];
  if (input.prefix !== undefined) {
    if (!PREFIX.test(input.prefix)) throw refuse('prefix', msg("must be at most 512 letters, digits and !_.*'()/- characters"));
    settings.prefix = cleanPrefix(input.prefix);
  }
  if (kind === 'https' && !credentials.secret) credentials.secret = newWebhookSecret();
  if (kind === 's3' && settings.prefix === undefined) settings.prefix = 'audit-log';
  return { settings, credentials, fields: Object.keys(input).filter((k) => k !== 'kind') };
}
