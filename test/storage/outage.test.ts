/**
 * The file store as a dependency that fails (docs/files.md): two instances of one PostgreSQL on
 * one bucket (an upload started on one completes on the other, its link served by either); the
 * bucket taken away: readiness says `storage: down` and stays 200, completing an upload is 503 with
 * Retry-After (the pending upload waits for a retry), a deletion waits in its queue; the bucket
 * back: the waiting deletion goes through by itself.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import S3rver from 's3rver';
import sharp from 'sharp';
import { storageModule } from '../../src/storage/module.js';
import { account, as, type TestAccount } from '../orgs/support.js';
import { freePort } from '../support/net.js';
import { startSystem, testDatabases, type TestDatabase, type TestSystem } from '../support/system.js';

const postgres = testDatabases().find((d) => d.name === 'postgres');

async function eventually(what: string, check: () => Promise<boolean>, tries = 300): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail(`never: ${what}`);
}

describe('Files on two instances of one bucket, and the bucket away', { skip: postgres ? false : 'TEST_DATABASE_URL not set' }, () => {
  let a: TestSystem;
  let b: TestSystem;
  let drop: () => Promise<void>;
  let s3: S3rver;
  let s3Port: number;
  let s3Dir: string;
  let person: TestAccount;
  const startBucket = async () => {
    s3 = new S3rver({ port: s3Port, address: '127.0.0.1', silent: true, directory: s3Dir, configureBuckets: [{ name: 'files', configs: [] }] });
    await s3.run();
  };

  before(async () => {
    let url: string;
    ({ url, drop } = await postgres!.create());
    const shared: TestDatabase = { name: 'postgres', create: async () => ({ url, drop: async () => undefined }) };
    s3Dir = await mkdtemp(join(tmpdir(), 's3rver-'));
    s3Port = await freePort();
    await startBucket();
    const port = await freePort();
    const env = {
      APP_URL: `http://127.0.0.1:${port}`,
      STORAGE: 's3',
      S3_BUCKET: 'files',
      S3_ENDPOINT: `http://127.0.0.1:${s3Port}`,
      S3_FORCE_PATH_STYLE: 'true',
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
    };
    a = await startSystem(shared, { ...env, PORT: String(port) });
    b = await startSystem(shared, env);
    person = await account(a);
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await drop?.();
    await s3?.close().catch(() => undefined);
    if (s3Dir) await rm(s3Dir, { recursive: true, force: true });
  });

  const start = (on: TestSystem, size: number) =>
    as(on, person, 'POST', '/api/uploads', { purpose: 'avatar', name: 'me.png', 'content-type': 'image/png', size });
  const sendTo = async (target: { url: string; fields: Record<string, string> }, body: Buffer) => {
    const form = new FormData();
    for (const [name, value] of Object.entries(target.fields)) form.append(name, value);
    form.append('file', new Blob([new Uint8Array(body)], { type: 'image/png' }), 'me.png');
    return (await fetch(target.url, { method: 'POST', body: form })).status;
  };

  it('an upload started on one instance completes on the other; either serves its links', async () => {
    const image = await sharp({ create: { width: 120, height: 120, channels: 3, background: '#00aa55' } })
      .png()
      .toBuffer();
    const started = await start(a, image.length);
    assert.equal(started.status, 201, started.text);
    assert.equal(await sendTo(started.body, image), 204);
    const completed = await as(b, person, 'POST', `/api/uploads/${started.body['upload-id']}/complete`);
    assert.equal(completed.status, 201, completed.text);
    for (const on of [a, b]) {
      const me = await as(on, person, 'GET', '/api/account/me');
      const res = await fetch(me.body.avatar.renditions['64']);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'image/webp');
    }
  });

  it('with the bucket away: readiness tells it and stays 200, completing an upload is 503 with Retry-After (the pending upload waits), a deletion waits; back, the deletion goes through by itself', async () => {
    const before = await as(a, person, 'GET', '/api/account/me');
    const avatarKey = `files/${before.body.avatar.id}`;
    await s3.close();
    const ready = await a.client('GET', '/api/health/ready');
    await eventually('readiness says storage down', async () => (await a.client('GET', '/api/health/ready')).body.storage === 'down');
    assert.equal(ready.status, 200);
    const rows = async () =>
      Number(
        (
          await a.system.database.db
            .selectFrom('stored_file')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const count = await rows();
    // a presigned POST is computed locally: starting works; completing needs the bucket and is 503
    const started = await start(a, 100);
    assert.equal(started.status, 201);
    const completed = await as(a, person, 'POST', `/api/uploads/${started.body['upload-id']}/complete`);
    assert.equal(completed.status, 503, completed.text);
    assert.equal(completed.body.type, 'service-unavailable');
    assert.ok(Number(completed.headers['retry-after']) > 0);
    assert.equal(await rows(), count + 1, 'the pending upload is kept for a retry, nothing else written');
    // removing the avatar commits; its objects' deletion waits in the queue
    assert.equal((await as(a, person, 'DELETE', '/api/account/avatar')).status, 204);
    const queued = () => a.system.database.db.selectFrom('storage_deletion').select(['key', 'attempts']).where('key', '=', avatarKey).executeTakeFirst();
    await eventually('a failed deletion attempt', async () => ((await queued())?.attempts ?? 0) >= 1);
    await startBucket();
    await eventually('readiness says storage ok', async () => (await a.client('GET', '/api/health/ready')).body.storage === 'ok');
    // the deletion is tried again after its backoff (5 s first), with nobody asking
    await eventually(
      'the waiting deletion went through',
      async () => (await queued()) === undefined && (await a.system.services(storageModule).driver.size(avatarKey)) === undefined,
      400,
    );
  });
});
