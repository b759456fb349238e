/**
 * Sending one batch of entries to a stream's destination, in each kind's documented shape
 * (docs/audit.md, "Streams"). HTTP kinds go through the webhooks' guarded sender (the address
 * guard, one budget, no redirects); S3 through the official client with agents whose `lookup`
 * applies the same guard, after checking the endpoint's own host. Never throws: every way a send
 * ends is a result, its error a short line for the stream's `last-error` with no credential in it.
 */
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { LookupFunction } from 'node:net';
import { gzipSync } from 'node:zlib';
import type { AuditEntry } from '../audit/schemas.js';
import type { AuditStreamKind } from '../db/schema.js';
import { allowedAddresses, bareHost, pinned } from '../webhooks/address-guard.js';
import type { EndpointUrlRules } from '../webhooks/endpoint-url.js';
import type { AttemptResult, WebhookSender } from '../webhooks/sender.js';
import { signatureHeader } from '../webhooks/signing.js';
import { datadogIntake, splunkEndpoint, type StreamCredentials, type StreamSettings } from './destinations.js';

export interface Batch {
  /** the batch's id: `webhook-id` of an https stream; the same on every retry */
  id: string;
  organizationId: string;
  /** oldest first */
  entries: AuditEntry[];
}

export interface StreamTarget {
  kind: AuditStreamKind;
  settings: StreamSettings;
  credentials: StreamCredentials;
}

export interface SendResult {
  ok: boolean;
  statusCode: number | null;
  /** null on success; else a short line: the failure's code, the status, the start of the receiver's answer */
  error: string | null;
  durationMs: number;
}

export interface StreamSenderOptions {
  sender: Pick<WebhookSender, 'post'>;
  rules: EndpointUrlRules;
  /** the app's host name: Splunk's `host`, Datadog's `hostname` */
  host: string;
  /** Datadog's `service` */
  service: string;
  timeoutMs: number;
}

const ERROR_LENGTH = 300;

/** The start of a receiver's answer on one line, with any credential of the stream cut out. */
function describe(result: AttemptResult, credentials: StreamCredentials): string {
  let line = result.error ?? 'failed';
  if (result.statusCode !== null) line += ` (HTTP ${result.statusCode})`;
  if (result.response) line += `: ${result.response.replace(/\s+/g, ' ').trim()}`;
  return redact(line, credentials).slice(0, ERROR_LENGTH);
}

function redact(text: string, credentials: StreamCredentials): string {
  let out = text;
  for (const secret of Object.values(credentials)) if (secret && secret.length >= 4) out = out.split(secret).join('[redacted]');
  return out;
}

const ndjson = (entries: readonly AuditEntry[]) => entries.map((e) => `${JSON.stringify(e)}\n`).join('');

/** `<prefix>/<org-id>/YYYY/MM/DD/HH/<first-entry-id>.ndjson.gz`, the hour of its first entry (UTC). */
export function s3Key(prefix: string | undefined, batch: Batch): string {
  const first = batch.entries[0];
  const at = new Date(first ? first['created-at'] : Date.now());
  const pad = (n: number) => String(n).padStart(2, '0');
  const hour = `${at.getUTCFullYear()}/${pad(at.getUTCMonth() + 1)}/${pad(at.getUTCDate())}/${pad(at.getUTCHours())}`;
  // a test event's object is named by its batch: it has no entry of its own
  const name = first && !batch.id.startsWith('test-') ? first.id : batch.id;
  return `${prefix ? `${prefix}/` : ''}${batch.organizationId}/${hour}/${name}.ndjson.gz`;
}

export class StreamSender {
  constructor(private readonly options: StreamSenderOptions) {}

  async send(target: StreamTarget, batch: Batch): Promise<SendResult> {
    if (target.kind === 's3') return this.putObject(target, batch);
    const result = await this.options.sender.post(this.request(target, batch));
    return {
      ok: result.ok,
      statusCode: result.statusCode,
      error: result.ok ? null : describe(result, target.credentials),
      durationMs: result.durationMs,
    };
  }

  private request(target: StreamTarget, batch: Batch): { url: string; headers: Record<string, string>; body: Buffer } {
    const { settings, credentials } = target;
    const { host, service } = this.options;
    if (target.kind === 'https') {
      const body = ndjson(batch.entries);
      const timestamp = Math.floor(Date.now() / 1000);
      return {
        url: settings.url!,
        body: Buffer.from(body),
        headers: {
          'content-type': 'application/x-ndjson',
          'webhook-id': batch.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signatureHeader([credentials.secret!], batch.id, timestamp, body),
        },
      };
    }
    if (target.kind === 'splunk') {
      const events = batch.entries.map((event) =>
        JSON.stringify({ time: new Date(event['created-at']).getTime() / 1000, host, source: 'saas', sourcetype: 'saas:audit', event }),
      );
      return {
        url: splunkEndpoint(settings.url!),
        body: Buffer.from(events.join('\n')),
        headers: { 'content-type': 'application/json', authorization: `Splunk ${credentials.token}` },
      };
    }
    const logs = batch.entries.map((entry) => ({
      ddsource: 'saas',
      service,
      hostname: host,
      ddtags: `organization:${batch.organizationId},action:${entry.action}`,
      message: JSON.stringify(entry),
    }));
    return {
      url: datadogIntake(settings.site!),
      body: Buffer.from(JSON.stringify(logs)),
      headers: { 'content-type': 'application/json', 'dd-api-key': credentials.apiKey! },
    };
  }

  private async putObject(target: StreamTarget, batch: Batch): Promise<SendResult> {
    const { settings, credentials } = target;
    const { rules, timeoutMs } = this.options;
    const started = performance.now();
    const duration = () => Math.max(0, Math.round(performance.now() - started));
    const endpoint = settings.endpoint ?? `https://s3.${settings.region}.amazonaws.com`;
    const lookup = guardedLookup(rules);
    const client = new S3Client({
      region: settings.region!,
      ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
      forcePathStyle: settings['force-path-style'] === true,
      credentials: { accessKeyId: credentials.accessKeyId!, secretAccessKey: credentials.secretAccessKey! },
      requestHandler: {
        connectionTimeout: Math.min(3000, timeoutMs),
        requestTimeout: timeoutMs,
        httpAgent: new HttpAgent({ lookup }),
        httpsAgent: new HttpsAgent({ lookup }),
      },
      maxAttempts: 1,
    });
    try {
      // an address literal is never looked up: the guard is applied to it here
      await allowedAddresses(bareHost(new URL(endpoint)), rules.resolve, rules.allowPrivate);
      await client.send(
        new PutObjectCommand({
          Bucket: settings.bucket!,
          Key: s3Key(settings.prefix, batch),
          Body: gzipSync(ndjson(batch.entries)),
          ContentType: 'application/x-ndjson',
          ContentEncoding: 'gzip',
        }),
      );
      return { ok: true, statusCode: 200, error: null, durationMs: duration() };
    } catch (err) {
      const e = err as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
      const status = e.$metadata?.httpStatusCode ?? null;
      const name = e.name === 'AddressNotAllowed' ? 'address-not-allowed' : e.name === 'HostNotFound' ? 'dns-failed' : (e.name ?? 'failed');
      const line = `${name}${status ? ` (HTTP ${status})` : ''}${e.message && e.message !== name ? `: ${e.message}` : ''}`;
      return { ok: false, statusCode: status, error: redact(line, credentials).slice(0, ERROR_LENGTH), durationMs: duration() };
    } finally {
      client.destroy();
    }
  }
}

/** A socket `lookup` that connects only to addresses the guard allows (and to those it checked: no rebinding). */
function guardedLookup(rules: EndpointUrlRules): LookupFunction {
  return (hostname, options, callback) => {
    allowedAddresses(hostname, rules.resolve, rules.allowPrivate).then(
      (addresses) => pinned(addresses)(hostname, options, callback),
      (err: NodeJS.ErrnoException) => callback(err, '', 4),
    );
  };
}
