/**
 * Files on both drivers (docs/files.md): the disk in the test's temporary directory, and a real S3
 * API on loopback (`s3rver`) through the official client. The two-step upload of an avatar and an
 * organization logo (presigned POST, or the disk's signed PUT), completion that reads the stored
 * bytes (a forged type and an oversized body refused, their objects deleted), the 64 and 256 px
 * WebP renditions, signed links for `<img>` (nosniff, sandbox, attachment for non-images), the
 * `storage-bytes` hard limit (402 before anything is stored), removal, an account's and an
 * organization's deletion taking their objects, the export listing files, a store that is away.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import S3rver from 's3rver';
import sharp from 'sharp';
import { storageModule } from '../../src/storage/module.js';
import { catalogueFile, usageEnv } from '../billing/usage-support.js';
import { startFakeStripe, type FakeStripe } from '../billing/stripe-server.js';
import { account, addMember, as, createOrg, type TestAccount } from '../orgs/support.js';
import { PASSWORD } from '../support/auth.js';
import { freePort } from '../support/net.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

const CATALOGUE = {
  meters: {},
  plans: [
    { id: 'free', name: 'Free', default: true, seats: { included: 5, max: 10 }, limits: { 'storage-bytes': { soft: 150_000, hard: 200_000 } }, features: [] },
  ],
};

const png = (size = 300) =>
  sharp({ create: { width: size, height: size, channels: 3, background: '#3366ff' } })
    .png()
    .toBuffer();

interface Target {
  'upload-id': string;
  method: 'POST' | 'PUT';
  url: string;
  fields: Record<string, string>;
}

/** Sends the bytes where the upload says, as the browser does. */
async function send(target: Target, body: Buffer, contentType: string): Promise<number> {
  if (target.method === 'PUT') return (await fetch(target.url, { method: 'PUT', body: new Uint8Array(body), headers: { 'content-type': contentType } })).status;
  const form = new FormData();
  for (const [name, value] of Object.entries(target.fields)) form.append(name, value);
  form.append('file', new Blob([new Uint8Array(body)], { type: contentType }), 'upload');
  return (await fetch(target.url, { method: 'POST', body: form })).status;
}

/** Polls (every 50 ms, at most 10 s) until `check` holds. */
async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail(`never: ${what}`);
}

for (const driver of ['disk', 's3'] as const) {
  describe(`Files on the ${driver} driver`, () => {
    let t: TestSystem;
    let stripe: FakeStripe;
    let s3: S3rver | undefined;
    let s3Dir: string | undefined;
    let owner: TestAccount;
    let orgId: string;
    const stored = (key: string) => t.system.services(storageModule).driver.size(key);
    const keyOf = async (id: string) => (await t.system.database.db.selectFrom('stored_file').select('key').where('id', '=', id).executeTakeFirst())?.key;

    const upload = async (who: TestAccount, input: Record<string, unknown>) => as(t, who, 'POST', '/api/uploads', input);
    const uploadAndComplete = async (who: TestAccount, input: Record<string, unknown>, body: Buffer) => {
      const started = await upload(who, { size: body.length, ...input });
      assert.equal(started.status, 201, started.text);
      assert.equal(await send(started.body, body, String(input['content-type'])), driver === 'disk' ? 204 : 204);
      return { started: started.body as Target, completed: await as(t, who, 'POST', `/api/uploads/${started.body['upload-id']}/complete`) };
    };

    before(async () => {
      stripe = await startFakeStripe();
      const env: Record<string, string> = {};
      if (driver === 's3') {
        s3Dir = await mkdtemp(join(tmpdir(), 's3rver-'));
        s3 = new S3rver({ port: await freePort(), address: '127.0.0.1', silent: true, directory: s3Dir, configureBuckets: [{ name: 'files', configs: [] }] });
        const { port } = await s3.run();
        Object.assign(env, {
          STORAGE: 's3',
          S3_BUCKET: 'files',
          S3_ENDPOINT: `http://127.0.0.1:${port}`,
          S3_FORCE_PATH_STYLE: 'true',
          S3_ACCESS_KEY_ID: 'S3RVER',
          S3_SECRET_ACCESS_KEY: 'S3RVER',
        });
      }
      const port = await freePort();
      t = await startSystem(testDatabases()[0], {
        ...usageEnv(stripe.url, { BILLING_PLANS_FILE: catalogueFile(CATALOGUE) }),
        ...env,
        PORT: String(port),
        APP_URL: `http://127.0.0.1:${port}`,
      });
      owner = await account(t);
      orgId = await createOrg(t, owner, 'Acme');
    });
    after(async () => {
      await t?.stop();
      await stripe?.close();
      await s3?.close();
      if (s3Dir) await rm(s3Dir, { recursive: true, force: true });
    });

    it('uploads an avatar straight to the store, with its renditions, shown through signed links', async () => {
      const image = await png();
      const { started, completed } = await uploadAndComplete(owner, { purpose: 'avatar', name: 'me.png', 'content-type': 'image/png' }, image);
      assert.equal(started.method, driver === 'disk' ? 'PUT' : 'POST');
      if (driver === 's3') assert.ok(!started.url.startsWith(t.url), 'the bytes go to the bucket, not the server');
      assert.equal(completed.status, 201, completed.text);
      assert.deepEqual(
        { name: completed.body.name, type: completed.body['content-type'], size: completed.body.size },
        { name: 'me.png', type: 'image/png', size: image.length },
      );
      const me = await as(t, owner, 'GET', '/api/account/me');
      const avatar = me.body.avatar;
      assert.equal(avatar.id, completed.body.id);
      for (const [url, type] of [
        [avatar.url, 'image/png'],
        [avatar.renditions['64'], 'image/webp'],
        [avatar.renditions['256'], 'image/webp'],
      ] as const) {
        const res = await fetch(url);
        assert.equal(res.status, 200, url);
        assert.equal(res.headers.get('content-type'), type);
        const bytes = Buffer.from(await res.arrayBuffer());
        if (type === 'image/webp') assert.equal((await sharp(bytes).metadata()).width, url === avatar.renditions['64'] ? 64 : 256);
        if (driver === 'disk') {
          assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
          assert.match(String(res.headers.get('content-security-policy')), /sandbox/);
        }
      }
      // a link with a changed signature is refused
      const forged = `${avatar.url.slice(0, -3)}AAA`;
      assert.equal((await fetch(forged)).status, 403);
      // a new avatar replaces the old one, whose objects go
      const oldKey = (await keyOf(avatar.id))!;
      const second = await uploadAndComplete(owner, { purpose: 'avatar', name: 'new.png', 'content-type': 'image/png' }, await png(100));
      assert.equal(second.completed.status, 201);
      await eventually(
        'the replaced avatar deleted from the store',
        async () => (await stored(oldKey)) === undefined && (await stored(`${oldKey}.64.webp`)) === undefined,
      );
      const exported = await as(t, owner, 'GET', '/api/account/export');
      assert.ok(exported.body.files.some((f: { id: string }) => f.id === second.completed.body.id));
    });

    it('keeps a large upload byte for byte (its chunks stream to the store)', async () => {
      // noise does not compress: a PNG of about 1.5 MB, sent in many socket reads
      const noise = Buffer.alloc(700 * 700 * 3);
      for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24;
      const image = await sharp(noise, { raw: { width: 700, height: 700, channels: 3 } })
        .png({ compressionLevel: 0 })
        .toBuffer();
      assert.ok(image.length > 1_000_000 && image.length < 2 * 1024 * 1024, `${image.length} bytes`);
      const { completed } = await uploadAndComplete(owner, { purpose: 'avatar', name: 'noise.png', 'content-type': 'image/png' }, image);
      assert.equal(completed.status, 201, completed.text);
      const served = Buffer.from(await (await fetch(completed.body.url)).arrayBuffer());
      assert.equal(createHash('sha256').update(served).digest('hex'), createHash('sha256').update(image).digest('hex'));
    });

    it('refuses a type the purpose does not allow at once, and bytes that contradict the declared type at completion, deleting them', async () => {
      const svg = await upload(owner, { purpose: 'avatar', name: 'x.svg', 'content-type': 'image/svg+xml', size: 100 });
      assert.equal(svg.status, 400);
      assert.equal(svg.body.type, 'file-rejected');
      const big = await upload(owner, { purpose: 'avatar', name: 'x.png', 'content-type': 'image/png', size: 3 * 1024 * 1024 });
      assert.equal(big.status, 400);
      assert.match(big.body.message, /at most/);
      const html = Buffer.from('<html><script>alert(1)</script></html>'.padEnd(400, ' '));
      const { started, completed } = await uploadAndComplete(owner, { purpose: 'avatar', name: 'x.png', 'content-type': 'image/png' }, html);
      assert.equal(completed.status, 400, completed.text);
      assert.equal(completed.body.type, 'file-rejected');
      assert.match(completed.body.message, /not the image\/png declared/);
      await eventually('the forged file deleted from the store', async () => (await stored(`files/${started['upload-id']}`)) === undefined);
      assert.equal(await keyOf(started['upload-id']), undefined);
    });

    it('refuses a body larger than declared, keeping nothing', async () => {
      const image = await png();
      const started = await upload(owner, { purpose: 'avatar', name: 'x.png', 'content-type': 'image/png', size: 100 });
      assert.equal(started.status, 201);
      const status = await send(started.body, image, 'image/png');
      if (driver === 'disk') assert.equal(status, 413);
      // S3 checks the policy's content-length-range (s3rver does not): completion checks the stored size either way
      const completed = await as(t, owner, 'POST', `/api/uploads/${started.body['upload-id']}/complete`);
      assert.equal(completed.status, 400);
      assert.equal(completed.body.type, 'file-rejected');
      await eventually('nothing kept', async () => (await stored(`files/${started.body['upload-id']}`)) === undefined);
    });

    it('an organization logo needs an admin, counts toward storage-bytes, and past the hard limit is 402 before anything is stored', async () => {
      const member = await account(t);
      const outsider = await upload(member, { purpose: 'organization-logo', name: 'l.png', 'content-type': 'image/png', size: 100, 'organization-id': orgId });
      assert.equal(outsider.status, 404, 'not a member');
      const image = await png();
      const { completed } = await uploadAndComplete(
        owner,
        { purpose: 'organization-logo', name: 'logo.png', 'content-type': 'image/png', 'organization-id': orgId },
        image,
      );
      assert.equal(completed.status, 201, completed.text);
      const usage = await as(t, owner, 'GET', `/api/orgs/${orgId}/usage`);
      const meter = usage.body.meters.find((m: { meter: string }) => m.meter === 'storage-bytes');
      assert.equal(meter.used, image.length);
      assert.equal(meter.hard, 200_000);
      const over = await upload(owner, { purpose: 'organization-logo', name: 'big.png', 'content-type': 'image/png', size: 200_000, 'organization-id': orgId });
      assert.equal(over.status, 402, over.text);
      assert.equal(over.body.type, 'usage-limit');
      assert.equal(over.body.meter, 'storage-bytes');
      const removed = await as(t, owner, 'DELETE', `/api/orgs/${orgId}/logo`);
      assert.equal(removed.status, 204);
      assert.equal((await as(t, owner, 'GET', `/api/orgs/${orgId}/usage`)).body.meters.find((m: { meter: string }) => m.meter === 'storage-bytes').used, 0);
    });

    it("an organization answers its logo, and its members list each member's avatar, as signed links", async () => {
      const team = await createOrg(t, owner, 'Shapes');
      const member = await account(t);
      await addMember(t, team, owner, member, 'member');
      const orgOf = async (who: TestAccount) => (await as(t, who, 'GET', `/api/orgs/${team}`)).body;
      assert.equal((await orgOf(member)).logo, null, 'no logo yet');
      const avatar = await uploadAndComplete(member, { purpose: 'avatar', name: 'me.png', 'content-type': 'image/png' }, await png(90));
      assert.equal(avatar.completed.status, 201, avatar.completed.text);
      const logo = await uploadAndComplete(
        owner,
        { purpose: 'organization-logo', name: 'logo.png', 'content-type': 'image/png', 'organization-id': team },
        await png(120),
      );
      assert.equal(logo.completed.status, 201, logo.completed.text);

      const seen = await orgOf(member);
      assert.equal(seen.logo.id, logo.completed.body.id, 'a member sees the logo');
      const small = await fetch(seen.logo.renditions['64']);
      assert.equal(small.status, 200);
      assert.equal((await sharp(Buffer.from(await small.arrayBuffer())).metadata()).width, 64);
      const listed = (await as(t, member, 'GET', '/api/orgs')).body.organizations.find((o: { id: string }) => o.id === team);
      assert.equal(listed.logo.id, logo.completed.body.id, 'the list answers it too');

      const members = (await as(t, owner, 'GET', `/api/orgs/${team}/members`)).body.members as Array<{
        'account-id': string;
        avatar: { id: string; renditions: Record<string, string> } | null;
      }>;
      const memberRow = members.find((m) => m['account-id'] === member.id)!;
      assert.equal(memberRow.avatar?.id, avatar.completed.body.id, "the owner sees the member's avatar");
      assert.equal((await fetch(memberRow.avatar!.renditions['256'])).status, 200);
      const ownerRow = members.find((m) => m['account-id'] === owner.id)!;
      assert.equal(ownerRow.avatar?.id ?? null, (await as(t, owner, 'GET', '/api/account/me')).body.avatar?.id ?? null);

      assert.equal((await as(t, owner, 'DELETE', `/api/orgs/${team}/logo`)).status, 204);
      assert.equal((await orgOf(owner)).logo, null, 'removed');
      assert.equal((await as(t, member, 'DELETE', '/api/account/avatar')).status, 204);
      const after = (await as(t, owner, 'GET', `/api/orgs/${team}/members`)).body.members.find((m: { 'account-id': string }) => m['account-id'] === member.id);
      assert.equal(after.avatar, null);
    });

    it("an account's deletion and an organization's take their files' objects with them", async () => {
      const leaving = await account(t);
      const { completed } = await uploadAndComplete(leaving, { purpose: 'avatar', name: 'me.png', 'content-type': 'image/png' }, await png(80));
      const avatarKey = (await keyOf(completed.body.id))!;
      const team = await createOrg(t, owner, 'Team');
      const logo = await uploadAndComplete(
        owner,
        { purpose: 'organization-logo', name: 'l.png', 'content-type': 'image/png', 'organization-id': team },
        await png(80),
      );
      const logoKey = (await keyOf(logo.completed.body.id))!;
      assert.equal((await as(t, leaving, 'POST', '/api/account/delete', { password: PASSWORD })).status, 204);
      assert.equal((await as(t, owner, 'DELETE', `/api/orgs/${team}`)).status, 204);
      await eventually('both objects deleted', async () => (await stored(avatarKey)) === undefined && (await stored(logoKey)) === undefined);
    });

    it(
      driver === 's3' ? "the client page's CSP lets the browser post to the bucket and load images from it" : "the client page's CSP names no other origin",
      async () => {
        const page = await t.client('GET', '/', { headers: { accept: 'text/html' } });
        const policy = new Map(
          String(page.headers['content-security-policy'])
            .split(';')
            .map((d) => d.trim().split(/\s+/))
            .map(([name, ...sources]) => [name, sources]),
        );
        const started = await upload(owner, { purpose: 'avatar', name: 'x.png', 'content-type': 'image/png', size: 100 });
        assert.equal(started.status, 201, started.text);
        const target = new URL(started.body.url).origin;
        if (driver === 's3') {
          assert.notEqual(target, new URL(t.url).origin);
          assert.deepEqual(policy.get('connect-src'), ["'self'", target], 'the upload goes there');
          assert.deepEqual(policy.get('img-src'), ["'self'", 'data:', target], 'signed links redirect there');
        } else {
          assert.equal(target, new URL(t.url).origin, 'the disk driver uploads to the server itself');
          assert.equal(policy.get('connect-src'), undefined, "default-src 'self' covers it");
          assert.deepEqual(policy.get('img-src'), ["'self'", 'data:']);
        }
        // the API's own answers keep their short policy
        assert.equal(started.headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'");
      },
    );

    it('a completion before any bytes, or of another account’s upload, is refused', async () => {
      const started = await upload(owner, { purpose: 'avatar', name: 'x.png', 'content-type': 'image/png', size: 100 });
      const early = await as(t, owner, 'POST', `/api/uploads/${started.body['upload-id']}/complete`);
      assert.equal(early.status, 400);
      assert.match(early.body.message, /nothing was uploaded/);
      const stranger = await account(t);
      assert.equal((await as(t, stranger, 'POST', `/api/uploads/${started.body['upload-id']}/complete`)).status, 404);
      if (driver === 'disk') {
        // the disk's upload URL is single use
        assert.equal(await send(started.body, await png(5), 'image/png'), 204);
        assert.equal(await send(started.body, await png(5), 'image/png'), 403);
      }
    });
  });
}
