/**
 * The API keys page's events against a fake transport: its route, the key made and shown once
 * (forgotten when closed, when the page is entered again, and when the key is revoked), copying,
 * and revoking.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { transitJson } from '../../src/shared/codecs.js';
import { apiKeysOrgIdOf, registerApiKeys, type ApiKey } from '../../src/client/api-keys/events.js';
import { routeOf } from '../../src/client/app.js';
import { answer, callOf, fakeClient } from '../support/client-events.js';

const ORG = '00000000-0000-4000-8000-000000000002';
const org = { id: ORG, name: 'Acme', slug: 'acme', personal: false, 'created-at': '2026-01-01T00:00:00.000Z', role: 'admin' };
const listed: ApiKey = {
  id: '00000000-0000-4000-8000-0000000000aa',
  name: 'CI',
  role: 'member',
  prefix: 'AbCd1234',
  'created-at': '2026-01-02T00:00:00.000Z',
  'last-used-at': null,
};
const SECRET = 'sk_AbCd1234_0123456789abcdefghijABCDEFGHIJklmnopqrst';

function setup(options: { copyFails?: boolean } = {}) {
  let keys: ApiKey[] = [];
  const copied: string[] = [];
  const { core, requests, run } = fakeClient('org-api-keys', (req) => {
    switch (callOf(req)) {
      case `GET /api/orgs/${ORG}`:
        return answer(org);
      case `GET /api/orgs/${ORG}/api-keys`:
        return answer({ 'api-keys': keys });
      case `POST /api/orgs/${ORG}/api-keys`:
        keys = [listed];
        return answer({ ...listed, key: SECRET }, 201);
      case `DELETE /api/orgs/${ORG}/api-keys/${listed.id}`:
        keys = [];
        return { status: 204, contentType: '', text: '' };
      default:
        return undefined;
    }
  });
  registerApiKeys(core, {
    copy: async (text) => {
      if (options.copyFails) throw new Error('denied');
      copied.push(text);
    },
  });
  return { core, requests, copied, run };
}

describe('client API key events', () => {
  it('routes /orgs/<id>/api-keys and reads the id', () => {
    assert.equal(routeOf(`/orgs/${ORG}/api-keys`), 'org-api-keys');
    assert.equal(routeOf(`/orgs/${ORG}`), 'org');
    assert.equal(apiKeysOrgIdOf(`/orgs/${ORG}/api-keys`), ORG);
    assert.equal(apiKeysOrgIdOf(`/orgs/${ORG}`), undefined);
  });

  it('shows a new key once: closing, entering again or revoking it forgets the secret', async () => {
    const s = setup();
    await s.run(['api-keys/open', ORG]);
    assert.deepEqual(s.requests.map(callOf), [`GET /api/orgs/${ORG}`, `GET /api/orgs/${ORG}/api-keys`]);
    assert.deepEqual(s.core.state.apiKeysPage?.keys, []);

    await s.run(['api-keys/create', { name: '  CI  ', role: 'member' }]);
    const create = s.requests.find((r) => r.method.toUpperCase() === 'POST')!;
    assert.deepEqual(transitJson.decode(create.body!), { name: 'CI', role: 'member' });
    assert.equal(s.core.state.apiKeysPage?.created?.key, SECRET);
    assert.deepEqual(s.core.state.apiKeysPage?.keys, [listed]);
    assert.equal(s.core.state.apiKeysPage?.formResets, 1, 'the form is cleared');

    await s.run(['api-keys/copy']);
    assert.deepEqual(s.copied, [SECRET]);
    assert.equal(s.core.state.toasts.at(-1)?.message, 'Key copied');
    await s.run(['api-keys/close-created']);
    assert.equal(s.core.state.apiKeysPage?.created, undefined);
    assert.ok(!JSON.stringify(s.core.state).includes(SECRET), 'the secret is nowhere in the state');

    await s.run(['api-keys/create', { name: 'CI', role: 'member' }]);
    await s.run(['api-keys/open', ORG]);
    assert.equal(s.core.state.apiKeysPage?.created, undefined, 'entering the page again forgets it');

    await s.run(['api-keys/create', { name: 'CI', role: 'member' }]);
    await s.run(['api-keys/revoke', listed.id]);
    assert.equal(s.core.state.apiKeysPage?.created, undefined, 'a revoked key is not shown');
    assert.deepEqual(s.core.state.apiKeysPage?.keys, []);
    assert.equal(s.core.state.toasts.at(-1)?.message, 'CI was revoked');
  });

  it('says so when copying fails', async () => {
    const s = setup({ copyFails: true });
    await s.run(['api-keys/open', ORG]);
    await s.run(['api-keys/create', { name: 'CI', role: 'member' }]);
    await s.run(['api-keys/copy']);
    assert.match(s.core.state.toasts.at(-1)?.message ?? '', /Copying failed/);
    assert.equal(s.core.state.toasts.at(-1)?.kind, 'error');
  });
});
