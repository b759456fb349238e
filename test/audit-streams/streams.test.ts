/**
 * The audit log's streams on both databases, against receivers started here: an HTTPS one
 * verifying with `standardwebhooks`, Splunk's HEC and Datadog's intake in their documented shapes
 * checking their credentials, and `s3rver` read back with the official client. Every entry of the
 * organization from the stream's creation on arrives, in order, none of another organization; a
 * receiver down for a while loses nothing and a retry resends the same batch under the same id;
 * pause and resume skip nothing; failing past AUDIT_STREAM_PAUSE_AFTER pauses the stream and tells
 * the admins; a wrong token shows as the stream's error until it is fixed; the test event; every
 * bad input a 400 naming the field; credentials never answered; the audit entries of each change.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { account, addMember, as, createOrg, type TestAccount } from '../orgs/support.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { waitFor } from '../webhooks/support.js';
import {
  auditS3,
  createStream,
  DATADOG_KEY,
  entriesSince,
  SPLUNK_TOKEN,
  streamReceiver,
  type AuditS3,
  type StreamedEntry,
  type StreamReceiver,
} from './support.js';

const ENV = {
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_TIMEOUT: '2',
  AUDIT_STREAM_POLL_MS: '20',
  AUDIT_STREAM_RETRY_SCHEDULE: '0.05,0.1',
  AUDIT_STREAM_PAUSE_AFTER: '3',
};

const ids = (entries: readonly StreamedEntry[]) => entries.map((e) => e.id);

for (const db of testDatabases()) {
  describe(`audit log streams on ${db.name}`, () => {
    let t: TestSystem;
    let owner: TestAccount;
    let admin: TestAccount;
    let member: TestAccount;
    let orgId: string;
    let otherOrg: string;
    let receiver: StreamReceiver;
    let s3: AuditS3;

    before(async () => {
      t = await startSystem(db, ENV);
      [receiver, s3] = await Promise.all([streamReceiver(), auditS3()]);
      [owner, admin, member] = await Promise.all([account(t), account(t), account(t)]);
      orgId = await createOrg(t, owner, 'Streamed');
      otherOrg = await createOrg(t, owner, 'Elsewhere');
      await addMember(t, orgId, owner, admin, 'admin');
      await addMember(t, orgId, owner, member, 'member');
    });
    after(async () => {
      await t?.stop();
      await receiver?.close();
      await s3?.close();
    });

    const streams = `/api/orgs/${'{org}'}/audit-log/streams`;
    const at = (path: string, org = orgId) => `${streams.replace('{org}', org)}${path}`;
    /** n audited changes in the organization (renames), and one in the other organization */
    const changes = async (n: number, tag: string) => {
      for (let i = 0; i < n; i++) {
        const res = await as(t, admin, 'PATCH', `/api/orgs/${orgId}`, { name: `Streamed ${tag} ${i}` });
        assert.equal(res.status, 200, res.text);
      }
      assert.equal((await as(t, owner, 'PATCH', `/api/orgs/${otherOrg}`, { name: `Elsewhere ${tag}` })).status, 200);
    };
    /** the id of the stream's own creation entry: the first it owes */
    const firstOf = async (streamId: string) => {
      const res = await as(t, admin, 'GET', `/api/orgs/${orgId}/audit-log?action=audit-stream.created&target-id=${streamId}`);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.entries.length, 1);
      return res.body.entries[0].id as string;
    };
    const stream = async (id: string) => (await as(t, admin, 'GET', at(`/${id}`))).body as Record<string, any>;
    /** every entry from the stream's creation on arrived, in order (repeats dropped by id, as a receiver does) */
    const arrivedInOrder = async (streamId: string, received: () => StreamedEntry[] | Promise<StreamedEntry[]>, what: string) => {
      const first = await firstOf(streamId);
      const expected = await entriesSince(t, admin, orgId, first);
      const got = await waitFor(what, async () => {
        const seen = new Map<string, StreamedEntry>();
        // what an earlier stream to the same receiver sent is not this one's
        for (const e of await received()) if (!seen.has(e.id) && BigInt(e.id) >= BigInt(first)) seen.set(e.id, e);
        const list = [...seen.values()];
        return list.length >= expected.length ? list : undefined;
      }).catch(async (err: Error) => {
        throw new Error(`${err.message}: the stream is ${JSON.stringify(await stream(streamId))}`);
      });
      assert.deepEqual(ids(got), ids(expected), 'the same entries, oldest first');
      assert.deepEqual(got, expected, 'each as the API answers it');
      await waitFor('nothing owed any more', async () => (await stream(streamId)).lag === 0);
    };

    it('refuses bad input with a 400 naming the field, a member 403, a non-member 404; never answers a credential', async () => {
      const post = (body: Record<string, unknown>, who = admin) => as(t, who, 'POST', at(''), body);
      const field = async (body: Record<string, unknown>, path: string, message: RegExp) => {
        const res = await post(body);
        assert.equal(res.status, 400, res.text);
        const error = res.body.errors.find((e: { path: string }) => e.path === path);
        assert.ok(error, `names ${path}: ${res.text}`);
        assert.match(error.message, message);
      };
      await field({ kind: 'https' }, '/url', /required/);
      await field({ kind: 'https', url: 'ftp://example.com/x' }, '/url', /http/);
      await field({ kind: 'https', url: 'https://169.254.169.254/latest' }, '/url', /link-local/);
      await field({ kind: 'https', url: 'https://no-such-host.invalid/x' }, '/url', /does not resolve|could not be resolved/);
      await field({ kind: 'https', url: `${receiver.url}/x`, token: 'abc' }, '/token', /not a setting of a https stream/);
      await field({ kind: 'splunk', url: receiver.url }, '/token', /required/);
      await field({ kind: 'splunk', url: receiver.url, token: 'has spaces in it' }, '/token', /printable/);
      await field({ kind: 'datadog', 'api-key': DATADOG_KEY }, '/site', /required/);
      await field({ kind: 'datadog', site: 'http://169.254.1.1/api', 'api-key': DATADOG_KEY }, '/site', /link-local/);
      await field({ kind: 's3', bucket: 'Bad_Bucket', region: 'us-east-1', 'access-key-id': 'a', 'secret-access-key': 'b' }, '/bucket', /bucket name/);
      await field(
        { kind: 's3', bucket: 'audit', region: 'us-east-1', 'access-key-id': 'a', 'secret-access-key': 'b', endpoint: 'http://169.254.169.254' },
        '/endpoint',
        /link-local/,
      );
      // a reason of the destinations' own, in the request's language
      const german = await t.client('POST', at(''), {
        headers: { authorization: `Bearer ${admin.token}`, 'accept-language': 'de' },
        body: { kind: 'https', url: `${receiver.url}/x`, token: 'abc' },
      });
      assert.match(german.body.errors.find((e: { path: string }) => e.path === '/token')?.message ?? german.text, /^ist keine Einstellung eines https-Streams/);
      const kind = await post({ kind: 'syslog', url: receiver.url });
      assert.equal(kind.status, 400, kind.text);
      assert.equal((await post({ kind: 'https', url: `${receiver.url}/x` }, member)).status, 403);
      const stranger = await account(t);
      assert.equal((await post({ kind: 'https', url: `${receiver.url}/x` }, stranger)).status, 404);
      assert.equal((await as(t, stranger, 'GET', at(''))).status, 404);

      const splunk = await createStream(t, admin, orgId, { kind: 'splunk', url: receiver.url, token: SPLUNK_TOKEN });
      const texts = [JSON.stringify(splunk), (await as(t, admin, 'GET', at(''))).text, (await as(t, admin, 'GET', at(`/${splunk.id}`))).text];
      for (const text of texts) assert.ok(!text.includes(SPLUNK_TOKEN), 'the token is never answered');
      assert.equal(splunk.secret, undefined);
      assert.equal(splunk.status, 'active');
      const log = (await as(t, admin, 'GET', `/api/orgs/${orgId}/audit-log?action=audit-stream.created&target-id=${splunk.id}`)).body.entries[0];
      assert.deepEqual(log.details, { kind: 'splunk', host: new URL(receiver.url).host });
      assert.equal((await as(t, admin, 'DELETE', at(`/${splunk.id}`))).status, 204);
      assert.equal((await as(t, admin, 'GET', at(`/${splunk.id}`))).status, 404);
    });

    it('https: every entry from its creation on arrives in order, signed, none of another organization; a receiver down loses nothing', async () => {
      const created = await createStream(t, admin, orgId, { kind: 'https', url: `${receiver.url}/siem` });
      assert.match(created.secret, /^whsec_/);
      receiver.secrets['/siem'] = created.secret;
      await changes(5, 'a');
      await arrivedInOrder(created.id, () => receiver.entries('/siem'), 'the first entries');
      // down for a while: the batch is retried as it was, under the same id, until it goes through
      receiver.down = true;
      const refusedBefore = receiver.refused;
      await changes(4, 'b');
      await waitFor('a refused attempt', () => receiver.refused > refusedBefore + 1);
      const failing = await stream(created.id);
      assert.match(failing['last-error'], /HTTP 503/);
      assert.ok(failing.lag > 0);
      assert.ok(failing['failing-since']);
      receiver.down = false;
      await arrivedInOrder(created.id, () => receiver.entries('/siem'), 'the entries after the outage');
      const healed = await stream(created.id);
      assert.equal(healed['last-error'], null);
      assert.equal(healed['failing-since'], null);
      assert.ok(healed.delivered >= 10);
      const batchIds = receiver.batches.filter((b) => b.path === '/siem').map((b) => b.id);
      assert.equal(new Set(batchIds).size, batchIds.length, 'each batch accepted once');
      for (const e of receiver.entries('/siem'))
        assert.ok(!String(e.details && JSON.stringify(e.details)).includes('Elsewhere'), 'nothing of another organization');
      await as(t, admin, 'DELETE', at(`/${created.id}`));
    });

    it('splunk: in the HEC shape; a wrong token is the stream error until fixed, then everything arrives', async () => {
      const created = await createStream(t, admin, orgId, { kind: 'splunk', url: receiver.url, token: 'wrong-token' });
      await changes(3, 'splunk');
      const failing = await waitFor('the error', async () => ((await stream(created.id))['last-error'] ? stream(created.id) : undefined));
      assert.match(failing['last-error'], /HTTP 403.*Invalid token/);
      assert.ok(!failing['last-error'].includes('wrong-token'));
      const fixed = await as(t, admin, 'PATCH', at(`/${created.id}`), { token: SPLUNK_TOKEN });
      assert.equal(fixed.status, 200, fixed.text);
      const splunkEntries = () => receiver.batches.filter((b) => b.kind === 'splunk').flatMap((b) => b.entries);
      await arrivedInOrder(created.id, splunkEntries, 'the Splunk events');
      const item = receiver.batches.find((b) => b.kind === 'splunk')!.items[0] as { time: number; event: StreamedEntry };
      assert.equal(item.time, new Date(item.event['created-at'] as string).getTime() / 1000);
      const updated = (await as(t, admin, 'GET', `/api/orgs/${orgId}/audit-log?action=audit-stream.updated&target-id=${created.id}`)).body.entries[0];
      assert.equal(updated.details.fields, 'token');
      await as(t, admin, 'DELETE', at(`/${created.id}`));
    });

    it('datadog: a JSON array of logs with the entry as the message; pause and resume skip nothing', async () => {
      const created = await createStream(t, admin, orgId, { kind: 'datadog', site: `${receiver.url}/api/v2/logs`, 'api-key': DATADOG_KEY });
      await changes(2, 'dd');
      const datadogEntries = () => receiver.batches.filter((b) => b.kind === 'datadog').flatMap((b) => b.entries);
      await arrivedInOrder(created.id, datadogEntries, 'the Datadog logs');
      const log = receiver.batches.find((b) => b.kind === 'datadog')!.items[0] as Record<string, string>;
      assert.match(log.ddtags, new RegExp(`organization:${orgId}`));
      const paused = await as(t, admin, 'POST', at(`/${created.id}/pause`));
      assert.equal(paused.status, 200, paused.text);
      assert.equal(paused.body.status, 'paused');
      assert.equal(paused.body['paused-reason'], 'manual');
      const before = datadogEntries().length;
      await changes(3, 'while-paused');
      await sleep(300);
      assert.equal(datadogEntries().length, before, 'nothing is sent while paused');
      assert.ok((await stream(created.id)).lag >= 4, 'the entries wait');
      const resumed = await as(t, admin, 'POST', at(`/${created.id}/resume`));
      assert.equal(resumed.body.status, 'active');
      await arrivedInOrder(created.id, datadogEntries, 'the entries after resuming');
      const actions = (await as(t, admin, 'GET', `/api/orgs/${orgId}/audit-log?action=audit-stream.paused&action=audit-stream.resumed&target-id=${created.id}`))
        .body.entries;
      assert.deepEqual(
        actions.map((e: StreamedEntry) => e.action),
        ['audit-stream.resumed', 'audit-stream.paused'],
      );
      await as(t, admin, 'DELETE', at(`/${created.id}`));
    });

    it('s3: one gzipped NDJSON object per batch at <prefix>/<org>/YYYY/MM/DD/HH/<first id>.ndjson.gz; a bucket that refuses is the error', async () => {
      const base = {
        kind: 's3',
        region: 'us-east-1',
        endpoint: s3.endpoint,
        'force-path-style': true,
        'access-key-id': 'S3RVER',
        'secret-access-key': 'S3RVER',
      };
      const refused = await createStream(t, admin, orgId, { ...base, bucket: 'no-such-bucket', prefix: 'x' });
      const created = await createStream(t, admin, orgId, { ...base, bucket: s3.bucket, prefix: '/siem/audit/' });
      assert.equal(created.prefix, 'siem/audit');
      assert.equal(JSON.stringify(created).includes('S3RVER'), false);
      await changes(3, 's3');
      const objects = () => s3.objects(`siem/audit/${orgId}/`);
      await arrivedInOrder(created.id, async () => (await objects()).flatMap((o) => o.entries), 'the objects');
      for (const object of await objects()) {
        const first = object.entries[0];
        const hour = (first['created-at'] as string).slice(0, 13).replace(/[-T]/g, '/');
        assert.equal(object.key, `siem/audit/${orgId}/${hour}/${first.id}.ndjson.gz`);
        assert.equal(object.encoding, 'gzip');
      }
      const error = await waitFor('the bucket refusal', async () => (await stream(refused.id))['last-error']);
      assert.match(error, /NoSuchBucket/);
      assert.ok(!error.includes('S3RVER'));
      const test = await as(t, admin, 'POST', at(`/${created.id}/test`));
      assert.equal(test.status, 200, test.text);
      assert.equal(test.body.delivered, true);
      assert.ok((await s3.objects('siem/audit/')).some((o) => o.key.includes('/test-') && o.entries[0].action === 'audit-stream.test'));
      await as(t, admin, 'DELETE', at(`/${refused.id}`));
      await as(t, admin, 'DELETE', at(`/${created.id}`));
    });

    it('the test event: delivered or not, with the status and error, changing nothing', async () => {
      const https = await createStream(t, admin, orgId, { kind: 'https', url: `${receiver.url}/tested` });
      receiver.secrets['/tested'] = https.secret;
      const ok = await as(t, admin, 'POST', at(`/${https.id}/test`));
      assert.equal(ok.status, 200, ok.text);
      assert.equal(ok.body.delivered, true);
      assert.equal(ok.body['status-code'], 204);
      const test = receiver.batches.find((b) => b.path === '/tested' && b.entries[0]?.action === 'audit-stream.test');
      assert.ok(test, 'the receiver got the test event');
      const datadog = await createStream(t, admin, orgId, { kind: 'datadog', site: `${receiver.url}/api/v2/logs`, 'api-key': 'not-the-key' });
      const refused = await as(t, admin, 'POST', at(`/${datadog.id}/test`));
      assert.equal(refused.body.delivered, false);
      assert.equal(refused.body['status-code'], 403);
      assert.match(refused.body.error, /Forbidden/);
      assert.equal((await as(t, member, 'POST', at(`/${https.id}/test`))).status, 403);
      await as(t, admin, 'DELETE', at(`/${https.id}`));
      await as(t, admin, 'DELETE', at(`/${datadog.id}`));
    });

    it('pauses itself after AUDIT_STREAM_PAUSE_AFTER of failing, tells the owners and admins, and resumes from where it stopped', async () => {
      const created = await createStream(t, admin, orgId, { kind: 'https', url: `${receiver.url}/flaky` });
      receiver.secrets['/flaky'] = 'whsec_' + Buffer.alloc(32).toString('base64'); // a secret that verifies nothing: every batch refused
      await changes(2, 'flaky');
      const paused = await waitFor('the pause', async () => ((await stream(created.id)).status === 'paused' ? stream(created.id) : undefined), 30_000);
      assert.equal(paused['paused-reason'], 'failing');
      for (const who of [owner, admin]) {
        const mail = await waitFor('the email', async () => (await t.system.mail.mailbox.list({ to: who.email, kind: 'audit-stream-paused' }))[0]);
        assert.match(mail.subject, /audit log stream of Streamed/);
        const notes = (await as(t, who, 'GET', '/api/notifications')).body.notifications;
        assert.ok(notes.some((n: { kind: string }) => n.kind === 'audit-stream-paused'));
      }
      assert.equal((await t.system.mail.mailbox.list({ to: member.email, kind: 'audit-stream-paused' })).length, 0);
      const auto = (await as(t, admin, 'GET', `/api/orgs/${orgId}/audit-log?action=audit-stream.paused&target-id=${created.id}`)).body.entries[0];
      assert.deepEqual(auto.details, { reason: 'failing', kind: 'https' });
      assert.equal(auto.actor['account-id'], null);
      receiver.secrets['/flaky'] = created.secret;
      assert.equal((await as(t, admin, 'POST', at(`/${created.id}/resume`))).status, 200);
      await arrivedInOrder(created.id, () => receiver.entries('/flaky'), 'everything after resuming');
      await as(t, admin, 'DELETE', at(`/${created.id}`));
    });
  });
}
