/**
 * The sample items page's events against a fake transport (docs/sample-items.md): the page
 * loads the organization and a page of items, more on demand; a new item's form sends typed
 * values; an edit sends only the fields it changed; the server's field errors land beside their
 * fields; delete asks the API and reloads.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { registerApp, type AppState } from '../../src/client/app.js';
import { EventCore, type EventVector } from '../../src/client/core.js';
import type { TransportRequest, TransportResponse } from '../../src/client/http.js';
import { ACCOUNT, answer, callOf } from '../support/client-events.js';
import { registerResource, type ResourceItem } from '../../src/client/resources/events.js';
import { inputTextOf } from '../../src/client/resources/form-values.js';
import { SAMPLE_ITEMS } from '../../src/client/sample-items/fields.js';
import { transitJson } from '../../src/shared/codecs.js';
import { validInput } from '../support/resources.js';

const ORG = '00000000-0000-4000-8000-000000000002';
const ITEM = '00000000-0000-4000-8000-0000000000aa';
const org = { id: ORG, name: 'Acme', slug: 'acme', personal: false, 'created-at': '2026-01-01T00:00:00.000Z', role: 'owner' };
const item: ResourceItem = {
  id: ITEM,
  ...validInput(SAMPLE_ITEMS.fields, 1),
  'created-at': '2026-01-02T00:00:00.000Z',
  'updated-at': '2026-01-02T00:00:00.000Z',
};
const [firstField] = Object.keys(SAMPLE_ITEMS.fields);

function setup(answers: { create?: TransportResponse } = {}) {
  const requests: TransportRequest[] = [];
  const core = new EventCore<AppState>({ route: 'org-sample-items', toasts: [], busy: false, ready: true, locale: 'en', token: 'access-1', account: ACCOUNT });
  registerApp(
    core,
    {
      transport: async (req) => {
        requests.push(req);
        switch (callOf(req)) {
          case `GET /api/orgs/${ORG}`:
            return answer(org);
          case `GET /api/orgs/${ORG}/sample-items`:
            return answer(
              new URL(req.url, 'http://x').searchParams.has('cursor')
                ? { 'sample-items': [], 'next-cursor': null }
                : { 'sample-items': [item], 'next-cursor': 'next-1' },
            );
          case `POST /api/orgs/${ORG}/sample-items`:
            return answers.create ?? answer(item, 201);
          case `PATCH /api/orgs/${ORG}/sample-items/${ITEM}`:
            return answer(item);
          case `DELETE /api/orgs/${ORG}/sample-items/${ITEM}`:
            return { status: 204, contentType: '', text: '' };
          default:
            return answer({ type: 'not-found', message: 'no such route' }, 404);
        }
      },
      csrfToken: () => 'csrf-1',
    },
    () => undefined,
  );
  registerResource(core, SAMPLE_ITEMS);
  core.regFx('later', () => undefined);
  const run = async (event: EventVector) => {
    core.dispatch(event);
    await sleep(30);
  };
  return { core, requests, run };
}

describe('the sample items page', () => {
  it('loads the organization and a page of items, and the next page on demand', async () => {
    const { core, requests, run } = setup();
    await run(['sample-items/open', ORG]);
    const page = core.state.resourcePages?.['sample-items'];
    assert.equal(page?.status, 'ready');
    assert.deepEqual(page?.items, [item]);
    assert.equal(page?.nextCursor, 'next-1');
    await run(['sample-items/load', ORG, 'next-1']);
    assert.match(requests.at(-1)!.url, /cursor=next-1/);
    assert.equal(core.state.resourcePages?.['sample-items']?.nextCursor, null);
  });

  it("sends a new item's fields typed, and closes the form once it is created", async () => {
    const { core, requests, run } = setup();
    await run(['sample-items/open', ORG]);
    await run(['sample-items/edit', null]);
    const form = Object.fromEntries(Object.entries(validInput(SAMPLE_ITEMS.fields, 2)).map(([k, v]) => [k, v === true ? 'on' : String(v)]));
    await run(['sample-items/save', form]);
    const sent = requests.find((r) => r.method === 'POST');
    assert.ok(sent, 'a POST');
    const body = transitJson.decode(String(sent.body)) as Record<string, unknown>;
    for (const [name, spec] of Object.entries(SAMPLE_ITEMS.fields)) {
      if (spec.type === 'integer') assert.equal(typeof body[name], 'number', name);
      if (spec.type === 'boolean') assert.equal(typeof body[name], 'boolean', name);
      if (spec.type === 'datetime') assert.match(String(body[name]), /[+-]\d{2}:\d{2}$|Z$/, name);
    }
    assert.equal(core.state.resourcePages?.['sample-items']?.editing, undefined);
  });

  it('sends only the fields an edit changed, and nothing when none did', async () => {
    const { core, requests, run } = setup();
    const fields = SAMPLE_ITEMS.fields;
    await run(['sample-items/open', ORG]);
    // the form as it starts for the item (an empty input is not among a form's fields)
    const started = Object.fromEntries(
      Object.entries(fields).flatMap(([name, spec]) => (inputTextOf(spec, item[name]) ? [[name, inputTextOf(spec, item[name])]] : [])),
    );
    await run(['sample-items/edit', ITEM]);
    await run(['sample-items/save', started]);
    assert.equal(requests.filter((r) => r.method === 'PATCH').length, 0, 'nothing changed: nothing sent');
    assert.equal(core.state.resourcePages?.['sample-items']?.editing, undefined);
    const other = validInput(fields, 2);
    const field = Object.keys(fields).find((name) => inputTextOf(fields[name], other[name]) !== inputTextOf(fields[name], item[name]));
    if (!field) return; // (one enum of one value: no other value to change to)
    await run(['sample-items/edit', ITEM]);
    await run(['sample-items/save', { ...started, [field]: inputTextOf(fields[field], other[field]) }]);
    const sent = requests.find((r) => r.method === 'PATCH');
    assert.ok(sent, 'a PATCH');
    assert.deepEqual(Object.keys(transitJson.decode(String(sent.body)) as Record<string, unknown>), [field]);
  });

  it("shows the server's field errors beside their fields and keeps the form open", async () => {
    const refusal = answer(
      { type: 'request-coercion', message: 'Invalid request body', in: 'body', errors: [{ path: `/${firstField}`, message: 'is invalid' }] },
      400,
    );
    const { core, run } = setup({ create: refusal });
    await run(['sample-items/open', ORG]);
    await run(['sample-items/edit', null]);
    await run(['sample-items/save', {}]);
    assert.deepEqual(core.state.fieldErrors?.['sample-item-form'], { [firstField]: 'is invalid' });
    assert.deepEqual(core.state.resourcePages?.['sample-items']?.editing, { id: null });
  });

  it('deletes through the API and loads the list again', async () => {
    const { requests, run } = setup();
    await run(['sample-items/open', ORG]);
    const before = requests.length;
    await run(['sample-items/delete', ITEM]);
    assert.deepEqual(requests.slice(before).map(callOf), [`DELETE /api/orgs/${ORG}/sample-items/${ITEM}`, `GET /api/orgs/${ORG}/sample-items`]);
  });
});
