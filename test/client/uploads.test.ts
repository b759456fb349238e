/**
 * Uploads in the client (shell/uploads.ts, upload.ts) against a fake transport and a fake
 * sender: the three steps in order with what each sends (the declared file, the server's target
 * handed to the sender as it is, the completion of that upload), the progress as the sender
 * reports it (one event per whole percent), what shows the file asked for again once it is
 * complete, and every refusal kept beside the control with the server's or the store's words (no
 * toast), the steps after it not taken.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { registerAccount } from '../../src/client/account/events.js';
import { EventCore } from '../../src/client/core.js';
import type { TransportRequest } from '../../src/client/http.js';
import { registerOrgs, type Organization } from '../../src/client/orgs/events.js';
import { registerOrgPage } from '../../src/client/orgs/org-page-events.js';
import type { AppState } from '../../src/client/shell/state.js';
import type { UploadRequest } from '../../src/client/shell/uploads.js';
import { installUploads, refusalOf, type UploadSender, type UploadTarget } from '../../src/client/upload.js';
import { transitJson } from '../../src/shared/codecs.js';
import { ACCOUNT, answer, callOf, fakeClient } from '../support/client-events.js';

const UPLOAD_ID = '0b5e6c1e-2222-4c1e-9a3b-000000000009';
const ORG_ID = '00000000-0000-4000-8000-000000000002';
const LINKS = {
  id: '0b5e6c1e-3333-4c1e-9a3b-000000000010',
  url: 'http://app.test/api/storage/links/o',
  renditions: { '64': 'http://app.test/api/storage/links/s', '256': 'http://app.test/api/storage/links/l' },
};
const DISK: UploadTarget = { method: 'PUT', url: 'http://app.test/api/storage/uploads/token-1', fields: {} };
const S3: UploadTarget = { method: 'POST', url: 'https://files.s3.eu-west-3.amazonaws.com/', fields: { key: 'files/x', Policy: 'p', 'X-Amz-Signature': 's' } };
const STORED = { id: LINKS.id, name: 'me.png', 'content-type': 'image/png', size: 4, 'created-at': '2026-01-01T00:00:00.000Z', url: LINKS.url };
const ORG: Organization = {
  id: ORG_ID,
  name: 'Acme',
  slug: 'acme',
  personal: false,
  'created-at': '2026-01-01T00:00:00.000Z',
  role: 'owner',
  logo: null,
  subscription: { status: 'none', plan: null, 'current-period-end': null, 'cancel-at-period-end': false, 'has-customer': false },
};

const png = () => new File([new Uint8Array([0x89, 0x50, 0x4e, 0x47])], 'me.png', { type: 'image/png' });
const AVATAR: UploadRequest = { purpose: 'avatar', onDone: ['account/load'] };

interface Sent {
  target: UploadTarget;
  file: Blob;
}

/** A sender that reports the body's bytes in `steps` and answers `status` (and `text`). */
function sender(sent: Sent[], answerWith: { status: number; text?: string } = { status: 204 }, steps = [2, 4]): UploadSender {
  return async (target, file, onProgress) => {
    sent.push({ target, file });
    for (const loaded of steps) onProgress(loaded, file.size);
    return { status: answerWith.status, text: answerWith.text ?? '' };
  };
}

/** The account's and the organization page's events with `respond` answering the API and `send` the store. */
function setup(respond: (req: TransportRequest) => ReturnType<typeof answer> | undefined, send: UploadSender) {
  const client = fakeClient('settings', respond, { uploadSender: send });
  registerAccount(client.core, { replaceUrl: () => undefined, download: () => undefined });
  registerOrgs(client.core, { storage: { getItem: () => null, setItem: () => undefined, removeItem: () => undefined } });
  registerOrgPage(client.core);
  const bodyOf = (call: string) => {
    const req = client.requests.find((r) => callOf(r) === call);
    return req?.body ? transitJson.decode(req.body) : undefined;
  };
  return { ...client, calls: () => client.requests.map(callOf), bodyOf };
}

/** The usual server: the upload starts with `target` and completes; the account and the organization show the file only after. */
const server = (target: UploadTarget = DISK) => {
  let completed = false;
  return (req: TransportRequest) => {
    const links = completed ? LINKS : null;
    switch (callOf(req)) {
      case 'POST /api/uploads':
        return answer({ 'upload-id': UPLOAD_ID, ...target, 'expires-at': '2026-01-01T00:15:00.000Z' }, 201);
      case `POST /api/uploads/${UPLOAD_ID}/complete`:
        completed = true;
        return answer(STORED, 201);
      case 'GET /api/account/me':
        return answer({ ...ACCOUNT, avatar: links });
      case 'DELETE /api/account/avatar':
        return answer(null, 204);
      case `GET /api/orgs/${ORG_ID}`:
        return answer({ ...ORG, logo: links });
      case 'GET /api/orgs':
        return answer({ organizations: [{ ...ORG, logo: links }] });
      default:
        return undefined;
    }
  };
};

describe('client uploads', () => {
  it('starts, sends the bytes where the server says with progress, completes, then asks for the account again (new links)', async () => {
    const sent: Sent[] = [];
    const progress: Array<[number, number]> = [];
    const c = setup(server(), sender(sent));
    c.core.subscribe((s) => {
      const u = s.uploads?.['avatar-upload'];
      if (u?.phase === 'sending') progress.push([u.loaded, u.total]);
    });
    const file = png();
    await c.run(['upload/choose', 'avatar-upload', file, AVATAR], 60);
    assert.deepEqual(c.calls(), ['POST /api/uploads', `POST /api/uploads/${UPLOAD_ID}/complete`, 'GET /api/account/me']);
    assert.deepEqual(c.bodyOf('POST /api/uploads'), { purpose: 'avatar', name: 'me.png', 'content-type': 'image/png', size: 4 });
    assert.equal(sent.length, 1);
    assert.deepEqual(sent[0].target, DISK, "the server's target, as it is");
    assert.equal(sent[0].file, file);
    assert.deepEqual(progress.at(-1), [4, 4], 'the progress reaches the whole file before completion');
    assert.deepEqual(c.core.state.uploads?.['avatar-upload'], { phase: 'done', name: 'me.png', loaded: 4, total: 4 });
    assert.deepEqual(c.core.state.account?.avatar, LINKS, 'the account shows the new picture');
    assert.deepEqual(c.core.state.toasts, []);
  });

  it("hands S3's presigned POST (its fields) to the sender, and an organization's logo names its organization, then reloads it and the switcher's list", async () => {
    const sent: Sent[] = [];
    const c = setup(server(S3), sender(sent));
    c.core.dispatchSync(['org/open', ORG_ID]);
    await sleep(30);
    assert.equal(c.core.state.orgPage?.org?.logo, null, 'no logo before');
    const request: UploadRequest = { purpose: 'organization-logo', organizationId: ORG_ID, onDone: ['org/logo-changed', ORG_ID] };
    await c.run(['upload/choose', 'logo-upload', png(), request], 60);
    assert.deepEqual(sent[0].target, S3);
    assert.equal((c.bodyOf('POST /api/uploads') as Record<string, unknown>)['organization-id'], ORG_ID);
    assert.ok(c.calls().includes('GET /api/orgs'), "the switcher's list");
    assert.deepEqual(c.core.state.orgPage?.org?.logo, LINKS, "the page's organization shows the new logo");
    assert.deepEqual(c.core.state.orgs?.[0].logo, LINKS);
  });

  it("keeps a completion's refusal (file-rejected) beside the control, with the server's words, and shows nothing new", async () => {
    const sent: Sent[] = [];
    const message = 'The file is text/plain, not the image/png declared';
    const c = setup((req) => {
      if (callOf(req) === `POST /api/uploads/${UPLOAD_ID}/complete`) return answer({ type: 'file-rejected', message }, 400);
      return server()(req);
    }, sender(sent));
    await c.run(['upload/choose', 'avatar-upload', new File(['not a picture'], 'x.png', { type: 'image/png' }), AVATAR], 60);
    const upload = c.core.state.uploads?.['avatar-upload'];
    assert.equal(upload?.phase, 'failed');
    assert.equal(upload?.message, message);
    assert.ok(!c.calls().includes('GET /api/account/me'), 'nothing to show again');
    assert.deepEqual(c.core.state.toasts, [], 'beside the control, not a toast');
  });

  it('a start refused (usage-limit, 402) sends no byte', async () => {
    const sent: Sent[] = [];
    const message = "The organization's files would hold more than its plan's 200000 bytes (199000 used)";
    const c = setup(
      (req) => (callOf(req) === 'POST /api/uploads' ? answer({ type: 'usage-limit', message, meter: 'storage-bytes' }, 402) : undefined),
      sender(sent),
    );
    await c.run(['upload/choose', 'logo-upload', png(), { purpose: 'organization-logo', organizationId: ORG_ID, onDone: ['org/logo-changed', ORG_ID] }]);
    assert.equal(sent.length, 0);
    assert.deepEqual(c.calls(), ['POST /api/uploads']);
    assert.deepEqual([c.core.state.uploads?.['logo-upload']?.phase, c.core.state.uploads?.['logo-upload']?.message], ['failed', message]);
  });

  it("the store's refusal (S3's XML, the disk's JSON, no answer) is told beside the control, and nothing is completed", async () => {
    const answers = [
      { status: 403, text: '<?xml version="1.0"?><Error><Code>AccessDenied</Code><Message>Invalid according to Policy: Policy expired.</Message></Error>' },
      { status: 413, text: JSON.stringify({ type: 'payload-too-large', message: 'The upload holds at most 4 bytes' }) },
      { status: 0 },
    ];
    const said: string[] = [];
    for (const refusal of answers) {
      const c = setup(server(S3), sender([], refusal));
      await c.run(['upload/choose', 'avatar-upload', png(), AVATAR], 60);
      assert.deepEqual(c.calls(), ['POST /api/uploads'], 'no completion of bytes the store refused');
      assert.equal(c.core.state.uploads?.['avatar-upload']?.phase, 'failed');
      said.push(c.core.state.uploads?.['avatar-upload']?.message ?? '');
    }
    assert.deepEqual(said, [
      'The store refused the file: Invalid according to Policy: Policy expired.',
      'The upload holds at most 4 bytes',
      'The file could not be sent: the connection failed. Try again.',
    ]);
  });

  it('an empty file is refused without a request; a type the browser cannot tell is declared as octet-stream (the server names the refusal)', async () => {
    const c = setup(server(), sender([]));
    await c.run(['upload/choose', 'avatar-upload', new File([], 'empty.png', { type: 'image/png' }), AVATAR]);
    assert.deepEqual(c.calls(), []);
    assert.equal(c.core.state.uploads?.['avatar-upload']?.message, 'The file is empty.');
    await c.run(['upload/choose', 'avatar-upload', new File(['x'], 'x.heic', { type: '' }), AVATAR], 60);
    assert.equal((c.bodyOf('POST /api/uploads') as Record<string, unknown>)['content-type'], 'application/octet-stream');
  });

  it('a navigation forgets a finished upload, not one under way', async () => {
    let release: (() => void) | undefined;
    const slow: UploadSender = async () => {
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      return { status: 204, text: '' };
    };
    const c = setup(server(), slow);
    await c.run(['upload/choose', 'avatar-upload', png(), AVATAR]);
    c.core.dispatchSync(['upload/choose', 'other', new File([], 'e.png'), AVATAR]);
    assert.equal(c.core.state.uploads?.other?.phase, 'failed');
    await c.run(['router/navigate', { route: 'account' }]);
    assert.deepEqual(Object.keys(c.core.state.uploads ?? {}), ['avatar-upload'], 'the one under way stays');
    release?.();
    await sleep(30);
    assert.equal(c.core.state.uploads?.['avatar-upload']?.phase, 'done');
  });

  it('removing the picture deletes it and asks for the account again', async () => {
    const c = setup((req) => (callOf(req) === 'GET /api/account/me' ? answer({ ...ACCOUNT, avatar: null }) : server()(req)), sender([]));
    c.core.dispatchSync(['account/loaded', { ...ACCOUNT, avatar: LINKS }]);
    await c.run(['avatar/remove']);
    assert.deepEqual(c.calls(), ['DELETE /api/account/avatar', 'GET /api/account/me']);
    assert.equal(c.core.state.account?.avatar, null);
  });

  it('reports one progress event per whole percent, however often the browser reports', async () => {
    const core = new EventCore<AppState>({ route: 'settings', toasts: [], busy: false, ready: true, locale: 'en' });
    const seen: number[] = [];
    let done = false;
    core.regEvent('progress', (_ctx, [, loaded]) => {
      seen.push(loaded as number);
    });
    core.regEvent('sent', () => {
      done = true;
    });
    const file = new File([new Uint8Array(10_000)], 'big.png', { type: 'image/png' });
    installUploads(core, async (_target, f, onProgress) => {
      for (let loaded = 0; loaded <= f.size; loaded += 10) onProgress(loaded, f.size);
      return { status: 204, text: '' };
    });
    core.regEvent('send', () => ({ 'upload/send': { target: DISK, file, onProgress: ['progress'], onSuccess: ['sent'], onFailure: ['failed'] } }));
    core.dispatch(['send']);
    await sleep(30);
    assert.ok(done);
    assert.equal(seen.length, 101, '0 % to 100 %');
    assert.equal(seen.at(-1), 10_000);
  });

  it("reads a refusal's words from JSON or S3's XML, else names the status", () => {
    assert.equal(refusalOf({ status: 500, text: 'oops' }), 'The store refused the file (HTTP 500).');
    assert.equal(refusalOf({ status: 400, text: '<Error><Message>EntityTooLarge</Message></Error>' }), 'The store refused the file: EntityTooLarge');
  });
});
