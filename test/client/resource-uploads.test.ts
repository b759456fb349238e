/**
 * A resource form's file fields against a fake transport (src/client/resources/uploads.ts,
 * docs/files.md): a chosen file is declared (its purpose `<plural>.<field>`, the organization),
 * sent where the answer says with its progress, completed, and its id saved with the item; a
 * refusal at any step lands beside the field and the field keeps what it held; a later choice
 * wins over one under way; a save waits for no upload; Remove clears an optional field; an edit
 * that leaves a file alone does not send it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TransportRequest } from '../../src/client/http.js';
import { registerResource, type ResourceConfig, type ResourceItem } from '../../src/client/resources/events.js';
import type { SendFile } from '../../src/client/resources/uploads.js';
import { transitJson } from '../../src/shared/codecs.js';
import type { FileValue } from '../../src/shared/resource-fields.js';
import { answer, callOf, fakeClient } from '../support/client-events.js';

const ORG = '00000000-0000-4000-8000-000000000002';
const ITEM = '00000000-0000-4000-8000-0000000000aa';
const CONFIG: ResourceConfig = {
  name: 'document',
  plural: 'documents',
  title: { one: 'Document', many: 'Documents' },
  fields: { title: { type: 'string' }, attachment: { type: 'file' }, cover: { type: 'image', optional: true } },
  writeRole: 'admin',
};
const org = { id: ORG, name: 'Acme', slug: 'acme', personal: false, 'created-at': '2026-01-01T00:00:00.000Z', role: 'owner' };
const stored = (id: string, name: string): FileValue => ({ id, name, 'content-type': 'text/plain', size: 12, url: `http://x/api/storage/links/${id}` });
const OLD = stored('00000000-0000-4000-8000-0000000000f1', 'old.txt');
const COVER = { ...stored('00000000-0000-4000-8000-0000000000f2', 'cover.png'), renditions: { '64': 'http://x/64', '256': 'http://x/256' } };
const item: ResourceItem = {
  id: ITEM,
  title: 'Plan',
  attachment: OLD,
  cover: COVER,
  'created-at': '2026-01-02T00:00:00.000Z',
  'updated-at': '2026-01-02T00:00:00.000Z',
};
const target = (n: number) => ({
  'upload-id': `00000000-0000-4000-8000-00000000010${n}`,
  method: 'PUT',
  url: `http://x/api/storage/uploads/t${n}`,
  fields: {},
  'expires-at': '2026-01-02T00:15:00.000Z',
});

/** The page open on its organization, uploads answered by `uploads`; `resources/send-file` recorded, not run. */
async function setup(respond: { start?: (req: TransportRequest) => ReturnType<typeof answer>; complete?: ReturnType<typeof answer> } = {}) {
  let started = 0;
  const client = fakeClient('org-documents', (req) => {
    switch (callOf(req)) {
      case `GET /api/orgs/${ORG}`:
        return answer(org);
      case `GET /api/orgs/${ORG}/documents`:
        return answer({ documents: [item], 'next-cursor': null });
      case 'POST /api/uploads':
        return respond.start?.(req) ?? answer(target(++started), 201);
      case `POST /api/orgs/${ORG}/documents`:
      case `PATCH /api/orgs/${ORG}/documents/${ITEM}`:
        return answer(item, req.method === 'POST' ? 201 : 200);
    }
    if (/^POST \/api\/uploads\/[0-9a-f-]+\/complete$/.test(callOf(req)))
      return respond.complete ?? answer(stored(`00000000-0000-4000-8000-00000000020${started}`, `new-${started}.txt`), 201);
    return undefined;
  });
  registerResource(client.core, CONFIG);
  const sends: SendFile[] = [];
  client.core.regFx('resources/send-file', (send: SendFile) => sends.push(send));
  await client.run(['documents/open', ORG]);
  const upload = (field: string) => client.core.state.resourcePages?.documents?.uploads?.[field];
  const errors = () => client.core.state.fieldErrors?.['document-form'];
  const bodyOf = (method: string) => {
    const sent = client.requests.filter((r) => r.method === method).at(-1);
    return sent && (transitJson.decode(String(sent.body)) as Record<string, unknown>);
  };
  return { ...client, sends, upload, errors, bodyOf };
}

const chosen = (name = 'notes.txt', text = 'hello, world') => new File([text], name, { type: 'text/plain' });

describe("a resource form's file fields", () => {
  it('declares a chosen file, sends it with its progress, completes it, and saves its id with the item', async () => {
    const { run, requests, sends, upload, bodyOf } = await setup();
    await run(['documents/edit', null]);
    await run(['documents/upload', 'attachment', chosen()]);
    assert.deepEqual(bodyOf('POST'), { purpose: 'documents.attachment', name: 'notes.txt', 'content-type': 'text/plain', size: 12, 'organization-id': ORG });
    assert.equal(sends.length, 1);
    assert.equal(sends[0].target.url, 'http://x/api/storage/uploads/t1');
    assert.equal(sends[0].contentType, 'text/plain');
    assert.equal(upload('attachment')?.status, 'sending');
    await run([...sends[0].onProgress, 6] as [string, ...unknown[]]);
    assert.deepEqual([upload('attachment')?.sent, upload('attachment')?.total], [6, 12]);
    await run(sends[0].onSuccess);
    assert.equal(callOf(requests.at(-1)!), `POST /api/uploads/${target(1)['upload-id']}/complete`);
    assert.equal(upload('attachment')?.status, 'done');
    const id = upload('attachment')?.file?.id;
    await run(['documents/save', { title: 'Plan', attachment: id }]);
    assert.deepEqual(bodyOf('POST'), { title: 'Plan', attachment: id });
    assert.equal(upload('attachment'), undefined, 'saved: the uploads are forgotten');
  });

  it("puts the server's refusal beside the field, and the field keeps what it held", async () => {
    const refusal = answer({ type: 'file-rejected', message: 'The file cannot be kept: its bytes are text/html, not the image/png declared' }, 400);
    const { run, sends, upload, errors } = await setup({ complete: refusal });
    await run(['documents/edit', ITEM]);
    await run(['documents/upload', 'cover', new File(['<html>'], 'x.png', { type: 'image/png' })]);
    await run(sends[0].onSuccess);
    assert.equal(errors()?.cover, 'The file cannot be kept: its bytes are text/html, not the image/png declared');
    assert.equal(upload('cover'), undefined, 'the item’s cover again');

    const declared = answer({ type: 'request-coercion', message: 'Invalid request body', errors: [{ path: '/size', message: 'must be >= 1' }] }, 400);
    const empty = await setup({ start: () => declared });
    await empty.run(['documents/edit', null]);
    await empty.run(['documents/upload', 'attachment', chosen('empty.txt', '')]);
    assert.equal(empty.errors()?.attachment, "The file's size must be >= 1");
    assert.equal(empty.sends.length, 0, 'nothing sent');

    // the store refused the bytes: the error beside the field, an earlier upload kept
    const { run: go, sends: sent, upload: now, errors: said } = await setup();
    await go(['documents/edit', null]);
    await go(['documents/upload', 'attachment', chosen('first.txt')]);
    await go(sent[0].onSuccess);
    const first = now('attachment')?.file;
    await go(['documents/upload', 'attachment', chosen('second.txt')]);
    await go([...sent[1].onFailure, { message: 'The file store refused the file (HTTP 403)' }] as [string, ...unknown[]]);
    assert.equal(said()?.attachment, 'The file store refused the file (HTTP 403)');
    assert.deepEqual(now('attachment')?.file, first, 'the first upload is still the field’s');
  });

  it('lets a later choice win over one under way, and refuses a save while a file is being sent', async () => {
    const { run, sends, upload, errors, requests } = await setup();
    await run(['documents/edit', null]);
    await run(['documents/upload', 'attachment', chosen('slow.txt')]);
    await run(['documents/upload', 'attachment', chosen('fast.txt')]);
    assert.equal(sends.length, 2);
    await run(['documents/save', { title: 'Plan' }]);
    assert.match(errors()?.attachment ?? '', /still being uploaded/);
    assert.equal(requests.filter((r) => callOf(r) === `POST /api/orgs/${ORG}/documents`).length, 0, 'nothing saved');
    await run(sends[1].onSuccess);
    assert.equal(upload('attachment')?.name, 'fast.txt');
    // the first choice's answers come late: ignored
    await run(sends[0].onSuccess);
    await run([...sends[0].onProgress, 3] as [string, ...unknown[]]);
    assert.equal(upload('attachment')?.status, 'done');
    assert.equal(upload('attachment')?.name, 'fast.txt');
  });

  it('sends an edit without the files left alone, the new file of one replaced, and null for one removed', async () => {
    const { run, sends, upload, bodyOf, requests } = await setup();
    await run(['documents/edit', ITEM]);
    // the form as it starts: each file field's hidden input holds the item's file id
    const started = { title: 'Plan', attachment: OLD.id, cover: COVER.id };
    await run(['documents/save', { ...started, title: 'Plan B' }]);
    assert.deepEqual(bodyOf('PATCH'), { title: 'Plan B' });

    await run(['documents/edit', ITEM]);
    await run(['documents/upload', 'attachment', chosen()]);
    await run(sends[0].onSuccess);
    await run(['documents/upload-remove', 'cover']);
    assert.equal(upload('cover')?.status, 'removed');
    const replacement = upload('attachment')?.file?.id;
    assert.ok(replacement && replacement !== OLD.id);
    const patches = requests.filter((r) => r.method === 'PATCH').length;
    // a removed field's hidden input is empty: not among the form's fields
    await run(['documents/save', { title: 'Plan', attachment: replacement }]);
    assert.equal(requests.filter((r) => r.method === 'PATCH').length, patches + 1);
    assert.deepEqual(bodyOf('PATCH'), { attachment: replacement, cover: null });
  });
});
