/**
 * The audit log's export and an https stream in prod (APP_ENV=prod), as one tries it on one's own
 * machine (APP_URL http on 127.0.0.1) and as it runs behind a TLS-ending proxy (APP_URL https,
 * TRUST_PROXY): the owner's export, CSV and NDJSON, plain and gzip, answers 200 with the whole
 * file and its Content-Disposition; a stream's URL must be https in prod, and an https stream
 * (to the receiver behind a TLS proxy of its own, its certificate trusted by this process, so the
 * sender verifies it) delivers batches the receiver verifies with `standardwebhooks`.
 * WEBHOOK_ALLOW_PRIVATE is not refused in prod: it is how a receiver on loopback is reached.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import { CSV_COLUMNS } from '../../src/audit/export.js';
import { account, as, createOrg, type TestAccount } from '../orgs/support.js';
import { makeClient } from '../support/http.js';
import { freePort } from '../support/net.js';
import { startSystem, testDatabases, TEST_JWT_SECRET, type TestSystem } from '../support/system.js';
import { startTlsProxy, type TlsProxy } from '../support/tls-proxy.js';
import { waitFor } from '../webhooks/support.js';
import { createStream, entriesSince, streamReceiver, type StreamedEntry, type StreamReceiver } from './support.js';

const PROD = {
  APP_ENV: 'prod',
  JWT_SECRET: TEST_JWT_SECRET,
  MAIL_URL: 'smtp://127.0.0.1:9',
  LOG_CONSOLE: 'off',
  SHUTDOWN_DELAY: '0',
  // the receiver is on loopback, as in every stream test; prod takes the setting as it is
  WEBHOOK_ALLOW_PRIVATE: 'true',
  AUDIT_STREAM_POLL_MS: '20',
  AUDIT_STREAM_RETRY_SCHEDULE: '0.05',
};

const MODES = [
  { name: 'http on loopback', tls: false },
  { name: 'https behind a TLS-ending proxy', tls: true },
] as const;

const defaultCAs = getCACertificates('default');

for (const mode of MODES) {
  describe(`the audit log in prod, ${mode.name}`, () => {
    let t: TestSystem;
    let proxy: TlsProxy | undefined;
    let receiver: StreamReceiver;
    let receiverTls: TlsProxy;
    /** the system as its clients reach it: through the proxy when there is one */
    let app: TestSystem;
    let owner: TestAccount;
    let orgId: string;

    before(async () => {
      receiver = await streamReceiver();
      receiverTls = await startTlsProxy(receiver.url);
      // the app's sender verifies the receiver's certificate as any other: this process trusts it
      setDefaultCACertificates([...defaultCAs, receiverTls.ca]);
      const port = await freePort();
      if (mode.tls) {
        const proxyPort = await freePort();
        t = await startSystem(testDatabases()[0], { ...PROD, PORT: String(port), APP_URL: `https://127.0.0.1:${proxyPort}`, TRUST_PROXY: '1' });
        proxy = await startTlsProxy(t.url, proxyPort);
        app = { ...t, client: makeClient(`https://127.0.0.1:${proxy.port}`, proxy.ca) };
      } else {
        t = await startSystem(testDatabases()[0], { ...PROD, PORT: String(port), APP_URL: `http://127.0.0.1:${port}` });
        app = t;
      }
      assert.equal(t.system.config.env, 'prod');
      owner = await account(app);
      orgId = await createOrg(app, owner, 'Production');
      for (let i = 0; i < 3; i++) assert.equal((await as(app, owner, 'PATCH', `/api/orgs/${orgId}`, { name: `Production ${i}` })).status, 200);
    });
    after(async () => {
      await proxy?.close();
      await t?.stop();
      await receiverTls?.close();
      await receiver?.close();
      setDefaultCACertificates(defaultCAs);
    });

    const exported = (format: string, headers: Record<string, string> = {}) =>
      app.client('GET', `/api/orgs/${orgId}/audit-log/export?format=${format}`, { headers: { authorization: `Bearer ${owner.token}`, ...headers } });
    /** the organization's entries, newest first, as the API pages them */
    const page = async () => {
      const res = await as(app, owner, 'GET', `/api/orgs/${orgId}/audit-log?limit=100`);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body['next-cursor'], null);
      return res.body.entries as StreamedEntry[];
    };

    for (const gzip of [false, true]) {
      it(`the owner exports NDJSON${gzip ? ', gzip' : ''}: the whole log with its file name`, async () => {
        const api = await page();
        const res = await exported('ndjson', gzip ? { 'accept-encoding': 'gzip' } : {});
        assert.equal(res.status, 200, res.text.slice(0, 300));
        assert.equal(res.headers['content-type'], 'application/x-ndjson');
        assert.equal(res.headers['content-encoding'], gzip ? 'gzip' : undefined);
        if (gzip) assert.deepEqual([...res.raw.subarray(0, 2)], [0x1f, 0x8b], 'gzip, once');
        assert.match(String(res.headers['content-disposition']), new RegExp(`^attachment; filename="audit-log-${orgId}-all-\\d{8}T\\d{6}Z\\.ndjson"$`));
        const lines = res.text.split('\n');
        assert.equal(lines.pop(), '', 'each line ends with a newline');
        const entries = lines.map((l) => JSON.parse(l) as StreamedEntry);
        assert.equal(entries[0].action, 'audit-log.exported');
        assert.deepEqual(entries.slice(1), api);
      });

      it(`the owner exports CSV${gzip ? ', gzip' : ''}: the header row and one record per entry`, async () => {
        const api = await page();
        const res = await exported('csv', gzip ? { 'accept-encoding': 'gzip' } : {});
        assert.equal(res.status, 200, res.text.slice(0, 300));
        assert.equal(res.headers['content-type'], 'text/csv; charset=utf-8');
        assert.equal(res.headers['content-encoding'], gzip ? 'gzip' : undefined);
        assert.match(String(res.headers['content-disposition']), new RegExp(`^attachment; filename="audit-log-${orgId}-all-\\d{8}T\\d{6}Z\\.csv"$`));
        const rows = res.text.split('\r\n');
        assert.equal(rows.pop(), '', 'each record ends with CRLF');
        assert.equal(rows[0], CSV_COLUMNS.join(','));
        // the details of these entries hold no line break: a record is a line; its id, the first cell
        const ids = rows.slice(1).map((row) => row.split(',')[0]);
        assert.deepEqual(
          ids.slice(1),
          api.map((e) => e.id),
        );
        assert.match(rows[1], /^\d+,[^,]+,audit-log\.exported,account,/);
      });
    }

    it('a stream URL must be https in prod', async () => {
      const res = await as(app, owner, 'POST', `/api/orgs/${orgId}/audit-log/streams`, { kind: 'https', url: `${receiver.url}/plain` });
      assert.equal(res.status, 400, res.text);
      assert.ok(
        res.body.errors.some((e: { path: string; message: string }) => e.path === '/url' && /https/.test(e.message)),
        res.text,
      );
    });

    it('an https stream delivers its batches, verified by the receiver', async () => {
      const created = await createStream(app, owner, orgId, { kind: 'https', url: `https://127.0.0.1:${receiverTls.port}/prod` });
      receiver.secrets['/prod'] = created.secret;
      for (let i = 0; i < 2; i++) assert.equal((await as(app, owner, 'PATCH', `/api/orgs/${orgId}`, { name: `Streamed ${i}` })).status, 200);
      const first = (await as(app, owner, 'GET', `/api/orgs/${orgId}/audit-log?action=audit-stream.created&target-id=${created.id}`)).body.entries[0].id;
      const expected = await entriesSince(app, owner, orgId, first);
      const stream = async () => (await as(app, owner, 'GET', `/api/orgs/${orgId}/audit-log/streams/${created.id}`)).body as Record<string, any>;
      await waitFor('every entry at the receiver', () => receiver.entries('/prod').length >= expected.length).catch(async (err: Error) => {
        throw new Error(`${err.message}: the stream is ${JSON.stringify(await stream())}`);
      });
      const batches = receiver.batches.filter((b) => b.path === '/prod');
      assert.ok(batches.length > 0 && batches.every((b) => b.kind === 'https' && b.id), 'signed https batches, each under its id');
      assert.equal(new Set(batches.map((b) => b.id)).size, batches.length, 'each batch accepted once');
      assert.deepEqual(receiver.entries('/prod'), expected, 'every entry from the stream on, oldest first');
      assert.equal(receiver.refused, 0, 'no batch refused (signature, time)');
      await waitFor('nothing owed', async () => (await stream()).lag === 0);
      assert.equal((await stream())['last-error'], null);
    });
  });
}
