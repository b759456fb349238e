/**
 * Sample items' file fields on both file stores (docs/sample-items.md, docs/files.md): the disk
 * in the test's temporary directory, and a real S3 API on loopback (`s3rver`). Files uploaded
 * through the API make an item whose answer links to their bytes; a file replaced or cleared, and
 * the files of a deleted item or organization, are deleted with their objects; a file that is not
 * a completed upload of the field in the organization, or that another item holds, is refused
 * naming the field; a forged type is refused; uploading takes the write role.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { hasRole } from '../../src/http/routes.js';
import { SAMPLE_ITEM_FIELDS } from '../../src/sample-items/fields.js';
import { SAMPLE_ITEM_WRITE_ROLE } from '../../src/sample-items/routes.js';
import { isFileType, type FieldSpecs, type FileValue } from '../../src/shared/resource-fields.js';
import { storageModule } from '../../src/storage/module.js';
import { account, addMember, as, createOrg, type TestAccount } from '../orgs/support.js';
import { freePort } from '../support/net.js';
import { fileBytes, inputWithFiles, uploaded, uploadFor } from '../support/resources.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { eventually, startS3, uploadAndComplete, type S3Server } from '../support/uploads.js';

// every field spec as the general type: a comparison with a type the resource lacks still type-checks
const FIELDS: FieldSpecs = SAMPLE_ITEM_FIELDS;
const FILE_FIELDS = Object.entries(FIELDS).filter(([, spec]) => isFileType(spec.type));

type Item = Record<string, unknown> & { id: string };

for (const driver of ['disk', 's3'] as const) {
  describe(`sample items' files on the ${driver} store`, () => {
    let t: TestSystem;
    let s3: S3Server | undefined;
    let owner: TestAccount;
    let member: TestAccount;
    let orgId: string;
    const base = (organizationId = orgId) => `/api/orgs/${organizationId}/sample-items`;
    /** item `n`'s create body, its files uploaded by the owner */
    const inputOf = (n: number, organizationId = orgId) => inputWithFiles(t, owner, organizationId, 'sample-items', FIELDS, n);
    const create = async (input: Record<string, unknown>, organizationId = orgId) => {
      const res = await as(t, owner, 'POST', base(organizationId), input);
      assert.equal(res.status, 201, res.text);
      return res.body as Item;
    };
    /** the store's key of a stored file, while its row is there */
    const keyOf = async (id: string) => (await t.system.database.db.selectFrom('stored_file').select('key').where('id', '=', id).executeTakeFirst())?.key;
    /** the item's files, their rows' keys */
    const keysOf = async (item: Item) => {
      const keys = new Map<string, string>();
      for (const [name] of FILE_FIELDS) {
        const file = item[name] as FileValue | null;
        if (file) keys.set(file.id, (await keyOf(file.id))!);
      }
      return keys;
    };
    /** the files' rows are gone now */
    const rowsGone = async (keys: Map<string, string>) => {
      for (const id of keys.keys()) assert.equal(await keyOf(id), undefined, `the row of ${id} is gone`);
    };
    /** their objects soon (the storage module's durable job; its poll, at most 5 s) */
    const objectsGone = async (keys: Map<string, string>) => {
      const store = t.system.services(storageModule).driver;
      await eventually('the objects deleted from the store', async () => {
        for (const key of keys.values()) if ((await store.size(key)) !== undefined) return false;
        return true;
      });
    };

    before(async () => {
      s3 = driver === 's3' ? await startS3() : undefined;
      // the signed links are APP_URL's: the system listens where APP_URL says
      const port = await freePort();
      t = await startSystem(testDatabases()[0], { ...s3?.env, PORT: String(port), APP_URL: `http://127.0.0.1:${port}` });
      owner = await account(t);
      member = await account(t);
      orgId = await createOrg(t, owner);
      await addMember(t, orgId, owner, member, 'member');
    });
    after(async () => {
      await t?.stop();
      await s3?.close();
    });

    it('makes an item of uploaded files, answered with links that serve their bytes', async () => {
      const input = await inputOf(1);
      const created = await create(input);
      const read = await as(t, member, 'GET', `${base()}/${created.id}`);
      assert.equal(read.status, 200, read.text);
      const listed = (await as(t, member, 'GET', base())).body['sample-items'] as Item[];
      for (const [name, spec] of FILE_FIELDS) {
        const file = read.body[name] as FileValue;
        const sent = uploaded(input[name] as string)!;
        const { url, renditions, ...stored } = file;
        assert.deepEqual(stored, sent.file, name);
        assert.equal((listed.find((i) => i.id === created.id)?.[name] as FileValue | undefined)?.name, sent.file.name, `${name} in the list`);
        const res = await fetch(url);
        assert.equal(res.status, 200, `${name}: ${url}`);
        assert.equal(res.headers.get('content-type')?.split(';')[0], sent.file['content-type']);
        assert.deepEqual(Buffer.from(await res.arrayBuffer()), sent.body, `${name}: the bytes uploaded`);
        if (spec.type === 'image') {
          for (const width of ['64', '256'] as const) {
            const rendition = await fetch(renditions![width]);
            assert.equal(rendition.status, 200, `${name}: ${width} px`);
            assert.equal(rendition.headers.get('content-type'), 'image/webp');
          }
        } else assert.equal(renditions, undefined, `${name}: a file has no renditions`);
      }
    });

    it('deletes a file replaced or cleared, and the files of a deleted item, with their objects', async () => {
      const created = await create(await inputOf(2));
      const first = await keysOf(created);
      const replacement = await inputOf(3);
      const changes = Object.fromEntries(FILE_FIELDS.map(([name]) => [name, replacement[name]]));
      const replaced = await as(t, owner, 'PATCH', `${base()}/${created.id}`, changes);
      assert.equal(replaced.status, 200, replaced.text);
      for (const [name] of FILE_FIELDS) assert.equal((replaced.body[name] as FileValue).id, changes[name], name);
      await rowsGone(first);
      const letGo = new Map(first);

      const optional = FILE_FIELDS.filter(([, spec]) => spec.optional).map(([name]) => name);
      if (optional.length > 0) {
        const before = await keysOf(replaced.body);
        const cleared = await as(t, owner, 'PATCH', `${base()}/${created.id}`, Object.fromEntries(optional.map((name) => [name, null])));
        assert.equal(cleared.status, 200, cleared.text);
        for (const name of optional) assert.equal(cleared.body[name], null, name);
        const clearedFiles = new Map([...before].filter(([id]) => optional.some((name) => (replaced.body[name] as FileValue).id === id)));
        await rowsGone(clearedFiles);
        for (const [id, key] of clearedFiles) letGo.set(id, key);
      }

      const held = await keysOf((await as(t, owner, 'GET', `${base()}/${created.id}`)).body);
      assert.equal((await as(t, owner, 'DELETE', `${base()}/${created.id}`)).status, 204);
      await rowsGone(held);
      await objectsGone(new Map([...letGo, ...held]));
    });

    it('refuses a file that is not a completed upload of the field in the organization, or that another item holds, naming the field', async () => {
      const valid = await inputOf(4);
      const [name, spec] = FILE_FIELDS[0];
      const { type } = await fileBytes(spec, name, 4);
      const pending = await as(t, owner, 'POST', '/api/uploads', {
        purpose: `sample-items.${name}`,
        name: 'x',
        'content-type': type,
        size: 10,
        'organization-id': orgId,
      });
      assert.equal(pending.status, 201, pending.text);
      const elsewhere = await createOrg(t, owner, 'Elsewhere');
      const avatar = await uploadAndComplete(
        t,
        owner,
        { purpose: 'avatar', name: 'me.png', 'content-type': 'image/png' },
        (await fileBytes({ type: 'image' }, 'avatar', 1)).body,
      );
      assert.equal(avatar.completed.status, 201, avatar.completed.text);
      const other = await create(await inputOf(5));
      const refused: Array<[string, string]> = [
        ['an id no upload has', randomUUID()],
        ['an upload not completed', pending.body['upload-id']],
        ["another organization's file", await uploadFor(t, owner, elsewhere, 'sample-items', name, spec, 5)],
        ['a file of another purpose', avatar.completed.body.id],
        ['the file of another item', (other[name] as FileValue).id],
      ];
      for (const [why, id] of refused) {
        const res = await as(t, owner, 'POST', base(), { ...valid, [name]: id });
        assert.equal(res.status, 400, `${why}: ${res.text}`);
        assert.equal(res.body.type, 'request-coercion', why);
        assert.deepEqual(
          (res.body.errors as Array<{ path: string }>).map((e) => e.path),
          [`/${name}`],
          why,
        );
      }
      const change = await as(t, owner, 'PATCH', `${base()}/${other.id}`, { [name]: pending.body['upload-id'] });
      assert.equal(change.status, 400, change.text);
      assert.equal((await as(t, owner, 'GET', `${base()}/${other.id}`)).body[name].id, (other[name] as FileValue).id, 'the item keeps its file');
      // what was refused took none of the valid input's files
      await create(valid);
    });

    it('refuses a forged type: bytes that contradict the declared one, and for an image anything but PNG, JPEG or WebP', async () => {
      const png = (await fileBytes({ type: 'image' }, 'forged', 1)).body;
      const html = Buffer.from('<html><script>alert(1)</script></html>'.padEnd(400, ' '));
      for (const [name, spec] of FILE_FIELDS) {
        const purpose = `sample-items.${name}`;
        const forged =
          spec.type === 'image'
            ? { name: 'x.png', 'content-type': 'image/png', body: html, says: /not the image\/png declared/ }
            : { name: 'x.pdf', 'content-type': 'application/pdf', body: png, says: /its bytes are image\/png/ };
        const { target, completed } = await uploadAndComplete(
          t,
          owner,
          { purpose, name: forged.name, 'content-type': forged['content-type'], 'organization-id': orgId },
          forged.body,
        );
        assert.equal(completed.status, 400, `${name}: ${completed.text}`);
        assert.equal(completed.body.type, 'file-rejected');
        assert.match(completed.body.message, forged.says);
        assert.equal(await keyOf(target['upload-id']), undefined, 'nothing kept');
        if (spec.type === 'image') {
          const svg = await as(t, owner, 'POST', '/api/uploads', {
            purpose,
            name: 'x.svg',
            'content-type': 'image/svg+xml',
            size: 100,
            'organization-id': orgId,
          });
          assert.equal(svg.status, 400, svg.text);
          assert.equal(svg.body.type, 'file-rejected');
        }
      }
    });

    it("takes the write role to upload; the organization's deletion takes its items' files", async () => {
      const [name, spec] = FILE_FIELDS[0];
      const { type } = await fileBytes(spec, name, 1);
      const byMember = await as(t, member, 'POST', '/api/uploads', {
        purpose: `sample-items.${name}`,
        name: 'm',
        'content-type': type,
        size: 10,
        'organization-id': orgId,
      });
      assert.equal(byMember.status, hasRole('member', SAMPLE_ITEM_WRITE_ROLE) ? 201 : 403, byMember.text);
      const team = await createOrg(t, owner, 'Team');
      const keys = await keysOf(await create(await inputOf(6, team), team));
      assert.ok(keys.size > 0);
      assert.equal((await as(t, owner, 'DELETE', `/api/orgs/${team}`)).status, 204);
      await rowsGone(keys);
      await objectsGone(keys);
    });
  });
}
