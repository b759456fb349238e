/**
 * Test support for the audit log's streams: one receiver on 127.0.0.1 for the three HTTP kinds,
 * each path answering in its documented shape and checking its credentials as the real service
 * does, and reading the batches back as entries:
 * - `/https/...`: verifies every batch with the `standardwebhooks` package (NDJSON body);
 * - `/services/collector/event`: Splunk's HTTP Event Collector (`Authorization: Splunk <token>`,
 *   401 without one, 403 `Invalid token`, 200 `{"text":"Success","code":0}`; events one JSON
 *   object after another);
 * - `/api/v2/logs`: Datadog's logs intake (`DD-API-KEY`, 403 otherwise, 202 `{}`; a JSON array).
 * `down` makes every path answer 503 until it is set back. And `s3rver` with a bucket `audit`,
 * read back with the official client.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { Webhook } from 'standardwebhooks';
import { as, type TestAccount } from '../orgs/support.js';
import { freePort } from '../support/net.js';
import type { TestSystem } from '../support/system.js';

export interface StreamedEntry {
  id: string;
  action: string;
  [key: string]: unknown;
}

export interface ReceivedBatch {
  kind: 'https' | 'splunk' | 'datadog';
  path: string;
  /** `webhook-id` for https */
  id: string | undefined;
  entries: StreamedEntry[];
  /** the raw items as sent (Splunk's event objects, Datadog's log objects) */
  items: Record<string, unknown>[];
}

export interface StreamReceiver {
  url: string;
  /** accepted batches, in arrival order */
  batches: ReceivedBatch[];
  /** requests refused (down, bad credentials, bad signature) */
  refused: number;
  /** the secret each https path verifies with */
  secrets: Record<string, string>;
  splunkToken: string;
  datadogKey: string;
  /** answer 503 to everything while true */
  down: boolean;
  /** take requests and never answer while true; their `webhook-id`s are kept in `hung` */
  hang: boolean;
  hung: string[];
  /** the entries accepted at a path, oldest first as sent */
  entries(path: string): StreamedEntry[];
  close(): Promise<void>;
}

export const SPLUNK_TOKEN = '9a1c6f5e-3b1d-4f7a-8a7e-2b9f0c3d4e5f';
export const DATADOG_KEY = 'dd0123456789abcdef0123456789abcd';

function splitJsonObjects(body: string): Record<string, unknown>[] {
  // Splunk takes events one after another, separated by whitespace or not; ours are one per line
  return body
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

export async function streamReceiver(): Promise<StreamReceiver> {
  const self: StreamReceiver = {
    url: '',
    batches: [],
    refused: 0,
    secrets: {},
    splunkToken: SPLUNK_TOKEN,
    datadogKey: DATADOG_KEY,
    down: false,
    hang: false,
    hung: [],
    entries: (path) => self.batches.filter((b) => b.path === path).flatMap((b) => b.entries),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const answer = (req: IncomingMessage, body: string): { status: number; body: string } => {
    const path = (req.url ?? '/').split('?')[0];
    if (self.down) return { status: 503, body: 'down for maintenance' };
    if (path === '/services/collector/event') {
      const auth = req.headers.authorization;
      if (!auth) return { status: 401, body: '{"text":"Token is required","code":2}' };
      if (auth !== `Splunk ${self.splunkToken}`) return { status: 403, body: '{"text":"Invalid token","code":4}' };
      const items = splitJsonObjects(body);
      for (const item of items) {
        assert.equal(item.source, 'saas');
        assert.equal(item.sourcetype, 'saas:audit');
        assert.equal(typeof item.time, 'number');
        assert.equal(typeof item.host, 'string');
      }
      self.batches.push({ kind: 'splunk', path, id: undefined, items, entries: items.map((i) => i.event as StreamedEntry) });
      return { status: 200, body: '{"text":"Success","code":0}' };
    }
    if (path === '/api/v2/logs') {
      if (req.headers['dd-api-key'] !== self.datadogKey) return { status: 403, body: '{"errors":["Forbidden"]}' };
      const items = JSON.parse(body) as Record<string, unknown>[];
      assert.ok(Array.isArray(items));
      for (const item of items) assert.equal(item.ddsource, 'saas');
      self.batches.push({ kind: 'datadog', path, id: undefined, items, entries: items.map((i) => JSON.parse(i.message as string) as StreamedEntry) });
      return { status: 202, body: '{}' };
    }
    const secret = self.secrets[path];
    if (!secret) return { status: 404, body: 'no such receiver' };
    // the libraries' verify() parses the payload as one JSON document; an NDJSON batch is verified
    // with their sign(): the expected signature for the id, timestamp and body, compared to each one sent
    const timestamp = Number(req.headers['webhook-timestamp']);
    const expected = new Webhook(secret).sign(String(req.headers['webhook-id']), new Date(timestamp * 1000), body);
    const sent = String(req.headers['webhook-signature'] ?? '').split(' ');
    if (!sent.includes(expected) || Math.abs(Date.now() / 1000 - timestamp) > 300) return { status: 401, body: 'bad signature' };
    assert.equal(req.headers['content-type'], 'application/x-ndjson');
    const entries = splitJsonObjects(body) as StreamedEntry[];
    self.batches.push({ kind: 'https', path, id: req.headers['webhook-id'] as string, items: entries, entries });
    return { status: 204, body: '' };
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (self.hang) {
        self.hung.push(String(req.headers['webhook-id']));
        return;
      }
      const { status, body } = answer(req, Buffer.concat(chunks).toString('utf8'));
      if (status >= 300) self.refused++;
      res.writeHead(status, { 'content-type': 'application/json' }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  self.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return self;
}

export interface AuditS3 {
  endpoint: string;
  bucket: string;
  client: S3Client;
  /** every object under `prefix`, with its key and its entries */
  objects(prefix: string): Promise<Array<{ key: string; entries: StreamedEntry[]; encoding: string | undefined }>>;
  close(): Promise<void>;
}

export async function auditS3(): Promise<AuditS3> {
  const directory = await mkdtemp(join(tmpdir(), 's3rver-audit-'));
  const s3 = new S3rver({ port: await freePort(), address: '127.0.0.1', silent: true, directory, configureBuckets: [{ name: 'audit', configs: [] }] });
  const { port } = await s3.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
  return {
    endpoint,
    bucket: 'audit',
    client,
    async objects(prefix) {
      const listed = await client.send(new ListObjectsV2Command({ Bucket: 'audit', Prefix: prefix }));
      const keys = (listed.Contents ?? []).map((c) => c.Key!).sort();
      return Promise.all(
        keys.map(async (key) => {
          const object = await client.send(new GetObjectCommand({ Bucket: 'audit', Key: key }));
          const bytes = Buffer.from(await object.Body!.transformToByteArray());
          const text = gunzipSync(bytes).toString('utf8');
          return { key, encoding: object.ContentEncoding, entries: splitJsonObjects(text) as StreamedEntry[] };
        }),
      );
    },
    async close() {
      client.destroy();
      await s3.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** Creates a stream (asserted 201) and answers its body. */
export async function createStream(t: TestSystem, who: TestAccount, orgId: string, body: Record<string, unknown>): Promise<Record<string, any>> {
  const res = await as(t, who, 'POST', `/api/orgs/${orgId}/audit-log/streams`, body);
  assert.equal(res.status, 201, res.text);
  return res.body as Record<string, any>;
}

/** The organization's entries from `fromId` on (inclusive), oldest first, through the API's pages. */
export async function entriesSince(t: TestSystem, who: TestAccount, orgId: string, fromId: string): Promise<StreamedEntry[]> {
  const all: StreamedEntry[] = [];
  let cursor: string | null = null;
  do {
    const res = await as(t, who, 'GET', `/api/orgs/${orgId}/audit-log?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
    assert.equal(res.status, 200, res.text);
    all.push(...(res.body.entries as StreamedEntry[]));
    cursor = res.body['next-cursor'] as string | null;
    if (all.length > 0 && BigInt(all[all.length - 1].id) < BigInt(fromId)) break;
  } while (cursor);
  return all.filter((e) => BigInt(e.id) >= BigInt(fromId)).reverse();
}
