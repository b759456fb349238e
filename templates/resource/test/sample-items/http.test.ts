/**
 * Sample items over HTTP on PGlite and PostgreSQL (docs/sample-items.md): the five routes in each
 * role and for an API key, the audit entries and webhook events of each change, bad input, keyset
 * pages while items are added, the query kind, and the OpenAPI document.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { hasRole, type OrgRole } from '../../src/http/routes.js';
import { SAMPLE_ITEM_FIELDS } from '../../src/sample-items/fields.js';
import type { FieldSpecs } from '../../src/shared/resource-fields.js';
import { SAMPLE_ITEM_WRITE_ROLE } from '../../src/sample-items/routes.js';
import { account, addMember, as, createOrg, type TestAccount } from '../orgs/support.js';
import { answeredFields, badValue, inputWithFiles, validInput, withoutLinks } from '../support/resources.js';
import { freePort } from '../support/net.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { createEndpoint, receiver, waitFor, type Receiver } from '../webhooks/support.js';
import * as oauth from 'openid-client';
import { authorize, createApp, newBrowser, REDIRECT } from '../oauth/support.js';

const ENV = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '20' };
// every field spec as the general type: a comparison with a type the resource lacks still type-checks
const FIELDS: FieldSpecs = SAMPLE_ITEM_FIELDS;

for (const db of testDatabases()) {
  describe(`sample items on ${db.name}`, () => {
    let t: TestSystem;
    let orgId: string;
    let outsiderOrgId: string;
    const people = {} as Record<OrgRole | 'outsider', TestAccount>;
    let hook: Receiver;

    before(async () => {
      // the OAuth issuer is APP_URL's: the system listens where APP_URL says
      const port = await freePort();
      t = await startSystem(db, { ...ENV, PORT: String(port), APP_URL: `http://127.0.0.1:${port}` });
      people.owner = await account(t);
      orgId = await createOrg(t, people.owner);
      for (const role of ['admin', 'member'] as const) {
        people[role] = await account(t);
        await addMember(t, orgId, people.owner, people[role], role);
      }
      people.outsider = await account(t);
      outsiderOrgId = await createOrg(t, people.outsider, 'Elsewhere');
      hook = await receiver();
      const endpoint = await createEndpoint(t, people.owner, orgId, {
        url: `${hook.url}/sample-items`,
        events: ['sample-item.created', 'sample-item.updated', 'sample-item.deleted'],
      });
      hook.secrets.push(endpoint.secret);
    });
    after(async () => {
      await hook?.close();
      await t?.stop();
    });

    const base = () => `/api/orgs/${orgId}/sample-items`;
    /** item `n`'s create body (a file field's: a new upload, by the owner) */
    const inputOf = (n: number, organizationId = orgId) => inputWithFiles(t, people.owner, organizationId, 'sample-items', FIELDS, n);
    const create = async (who: TestAccount, input: Record<string, unknown>) => {
      const res = await as(t, who, 'POST', base(), input);
      assert.equal(res.status, 201, res.text);
      return res.body as Record<string, unknown> & { id: string };
    };

    it('creates, reads, changes and deletes with an audit entry and a verified webhook event for each change', async () => {
      const input = await inputOf(1);
      const created = await create(people.owner, input);
      assert.deepEqual(
        { ...withoutLinks(created), id: undefined, 'created-at': undefined, 'updated-at': undefined },
        { ...answeredFields(FIELDS, input), id: undefined, 'created-at': undefined, 'updated-at': undefined },
      );
      // (a file's links are signed when answered: the rest is the same)
      assert.deepEqual(withoutLinks((await as(t, people.member, 'GET', `${base()}/${created.id}`)).body), withoutLinks(created));

      const [field] = Object.keys(FIELDS);
      const changes = { [field]: (await inputOf(2))[field] };
      const updated = await as(t, people.owner, 'PATCH', `${base()}/${created.id}`, changes);
      assert.equal(updated.status, 200, updated.text);
      assert.deepEqual(withoutLinks(updated.body[field]), answeredFields(FIELDS, changes)[field]);
      assert.ok(updated.body['updated-at'] >= String(created['updated-at']));

      assert.equal((await as(t, people.owner, 'DELETE', `${base()}/${created.id}`)).status, 204);
      assert.equal((await as(t, people.owner, 'GET', `${base()}/${created.id}`)).status, 404);
      assert.equal((await as(t, people.owner, 'DELETE', `${base()}/${created.id}`)).status, 404);

      const log = await as(t, people.owner, 'GET', `/api/orgs/${orgId}/audit-log?limit=100`);
      const entries = (log.body.entries as Array<{ action: string; target: { id: string } | null; details: Record<string, unknown> }>).filter(
        (e) => e.target?.id === created.id,
      );
      assert.deepEqual(entries.map((e) => e.action).sort(), ['sample-item.created', 'sample-item.deleted', 'sample-item.updated']);
      assert.equal(entries.find((e) => e.action === 'sample-item.updated')?.details.fields, field);

      const events = await waitFor('three deliveries', () => {
        const got = hook.verified('/sample-items').filter((d) => d.event.data['sample-item']?.id === created.id);
        return got.length === 3 ? got : undefined;
      });
      assert.deepEqual(
        events.map((d) => d.event.type),
        ['sample-item.created', 'sample-item.updated', 'sample-item.deleted'],
      );
      assert.equal(events[0].event.data['organization-id'], orgId);
      assert.deepEqual(withoutLinks(events[2].event.data['sample-item']), withoutLinks(updated.body), 'deleted: the item as it was');
    });

    it('lets every member read, the write role write, and nobody outside in', async () => {
      const item = await create(people.owner, await inputOf(3));
      for (const role of ['owner', 'admin', 'member'] as const) {
        assert.equal((await as(t, people[role], 'GET', base())).status, 200, role);
        const write = await as(t, people[role], 'POST', base(), await inputOf(4));
        assert.equal(write.status, hasRole(role, SAMPLE_ITEM_WRITE_ROLE) ? 201 : 403, `${role}: ${write.text}`);
        // one field: a change is never empty, even when every field is optional
        const [field] = Object.keys(FIELDS);
        const patch = await as(t, people[role], 'PATCH', `${base()}/${item.id}`, { [field]: (await inputOf(5))[field] });
        assert.equal(patch.status, hasRole(role, SAMPLE_ITEM_WRITE_ROLE) ? 200 : 403, role);
      }
      assert.equal((await as(t, people.outsider, 'GET', base())).status, 404);
      assert.equal((await as(t, people.outsider, 'GET', `${base()}/${item.id}`)).status, 404);
      assert.equal((await as(t, undefined, 'GET', base())).status, 401);
      // an item of another organization is not found through this one
      assert.equal((await as(t, people.outsider, 'GET', `/api/orgs/${outsiderOrgId}/sample-items/${item.id}`)).status, 404);
    });

    it("acts for the organization's API keys with their role", async () => {
      const made = await as(t, people.owner, 'POST', `/api/orgs/${orgId}/api-keys`, { name: 'sample items', role: 'admin' });
      assert.equal(made.status, 201, made.text);
      const key = { authorization: `Bearer ${made.body.key}` };
      const created = await t.client('POST', base(), { headers: key, body: await inputOf(6) });
      assert.equal(created.status, hasRole('admin', SAMPLE_ITEM_WRITE_ROLE) ? 201 : 403, created.text);
      assert.equal((await t.client('GET', base(), { headers: key })).status, 200);
      assert.equal((await t.client('GET', `/api/orgs/${outsiderOrgId}/sample-items`, { headers: key })).status, 404);
    });

    it('acts for an OAuth app with its scopes: sample-items:read reads, sample-items:write writes', async () => {
      const app = await createApp(t, people.owner.token, orgId, {
        confidential: true,
        scopes: ['openid', 'orgs:read', 'sample-items:read', 'sample-items:write'],
      });
      const config = await oauth.discovery(
        new URL(`${t.url}/oauth`),
        app['client-id'],
        { redirect_uris: [REDIRECT] },
        oauth.ClientSecretBasic(app['client-secret']!),
        {
          execute: [oauth.allowInsecureRequests],
        },
      );
      const reader = await authorize(t, config, newBrowser(), people.owner.token, { scope: 'openid sample-items:read' });
      assert.equal(reader.error, undefined, 'the authorization succeeded');
      const read = { authorization: `Bearer ${reader.tokens.access_token}` };
      assert.equal((await t.client('GET', base(), { headers: read })).status, 200);
      const refused = await t.client('POST', base(), { headers: read, body: await inputOf(7) });
      assert.equal(refused.status, 403, refused.text);
      assert.equal(refused.body.type, 'insufficient-scope');
      // the query kind sample-items/list takes the same scope (the query route's scopes are its kinds')
      const query = { 'query/kind': 'sample-items/list', 'org-id': orgId, limit: 3 };
      const listed = await t.client('POST', '/api/cqrs/query', { headers: read, body: query });
      assert.equal(listed.status, 200, listed.text);
      const other = await authorize(t, config, newBrowser(), people.owner.token, { scope: 'openid orgs:read' });
      const without = await t.client('POST', '/api/cqrs/query', { headers: { authorization: `Bearer ${other.tokens.access_token}` }, body: query });
      assert.equal(without.status, 403, without.text);
      assert.equal(without.body.type, 'insufficient-scope');
      const writer = await authorize(t, config, newBrowser(), people.owner.token, { scope: 'openid sample-items:read sample-items:write' });
      const created = await t.client('POST', base(), { headers: { authorization: `Bearer ${writer.tokens.access_token}` }, body: await inputOf(8) });
      assert.equal(created.status, 201, created.text);
    });

    it('refuses bad input with 400 and one error per bad field, storing nothing', async () => {
      const before = (await as(t, people.owner, 'GET', `${base()}?limit=100`)).body['sample-items'].length;
      const body = Object.fromEntries(Object.entries(FIELDS).map(([name, spec]) => [name, badValue(spec)]));
      const res = await as(t, people.owner, 'POST', base(), { ...body, 'no-such-field': 1 });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.type, 'request-coercion');
      assert.equal(res.body.in, 'body');
      const paths = new Set((res.body.errors as Array<{ path: string }>).map((e) => e.path));
      for (const name of Object.keys(FIELDS)) assert.ok(paths.has(`/${name}`), `an error for /${name}: ${res.text}`);
      // every reason in words: no regular expression quoted
      for (const e of res.body.errors as Array<{ message: string }>) assert.doesNotMatch(e.message, /pattern/, res.text);
      const required = Object.entries(FIELDS).filter(([, spec]) => !spec.optional);
      if (required.length > 0) {
        const missing = await as(t, people.owner, 'POST', base(), {});
        assert.equal(missing.status, 400);
      }
      assert.equal((await as(t, people.owner, 'PATCH', `${base()}/${crypto.randomUUID()}`, {})).status, 400, 'an empty change');
      // a string of spaces only, a number past a decimal's 30 digits before the point
      const edges: Record<string, unknown> = {};
      for (const [name, spec] of Object.entries(FIELDS)) {
        if (spec.type === 'string') edges[name] = '   ';
        if (spec.type === 'decimal') edges[name] = 1e40;
      }
      if (Object.keys(edges).length > 0) {
        const refused = await as(t, people.owner, 'POST', base(), { ...validInput(FIELDS, 1), ...edges });
        assert.equal(refused.status, 400, refused.text);
        const at = new Set((refused.body.errors as Array<{ path: string }>).map((e) => e.path));
        for (const name of Object.keys(edges)) assert.ok(at.has(`/${name}`), `an error for /${name}: ${refused.text}`);
      }
      assert.equal((await as(t, people.owner, 'GET', `${base()}?limit=100`)).body['sample-items'].length, before);
    });

    it('pages newest first with no item twice or skipped while items are added; refuses a cursor it did not issue', async () => {
      const own = await createOrg(t, people.owner, 'Paging');
      const path = `/api/orgs/${own}/sample-items`;
      for (let n = 0; n < 5; n++) assert.equal((await as(t, people.owner, 'POST', path, await inputOf(n, own))).status, 201);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { body: { 'sample-items': Array<{ id: string }>; 'next-cursor': string | null } } = await as(
          t,
          people.owner,
          'GET',
          `${path}?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        );
        seen.push(...page.body['sample-items'].map((i) => i.id));
        cursor = page.body['next-cursor'];
        // added while paging: newer than every page, so on none of the next ones
        await as(t, people.owner, 'POST', path, await inputOf(9, own));
      } while (cursor);
      assert.equal(seen.length, 5);
      assert.equal(new Set(seen).size, 5);
      const all = (await as(t, people.owner, 'GET', `${path}?limit=100`)).body['sample-items'] as Array<{ 'created-at': string }>;
      assert.deepEqual(
        all.map((i) => i['created-at']),
        [...all.map((i) => i['created-at'])].sort().reverse(),
      );
      const forged = await as(t, people.owner, 'GET', `${path}?cursor=${Buffer.from('not a cursor').toString('base64url')}`);
      assert.equal(forged.status, 400);
      assert.equal(forged.body.type, 'request-coercion');
      assert.equal((await as(t, people.owner, 'GET', `${path}?limit=101`)).status, 400);
    });

    it('answers the query kind sample-items/list like the list route', async () => {
      const res = await as(t, people.member, 'POST', '/api/cqrs/query', { 'query/kind': 'sample-items/list', 'org-id': orgId, limit: 3 });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, (await as(t, people.member, 'GET', `${base()}?limit=3`)).body);
      assert.equal((await as(t, people.outsider, 'POST', '/api/cqrs/query', { 'query/kind': 'sample-items/list', 'org-id': orgId })).status, 404);
    });

    it('documents its routes and named schemas in a valid OpenAPI 3.0 document, and lists its webhook event types', async () => {
      const doc = (await t.client('GET', '/openapi/openapi.json')).body;
      // the whole document, with this resource's field types in it
      await SwaggerParser.validate(structuredClone(doc));
      for (const name of ['sample-item', 'sample-items', 'create-sample-item', 'update-sample-item']) assert.ok(doc.components.schemas[name], name);
      assert.deepEqual(Object.keys(doc.paths['/api/orgs/{id}/sample-items']).sort(), ['get', 'post']);
      assert.deepEqual(Object.keys(doc.paths['/api/orgs/{id}/sample-items/{itemId}']).sort(), ['delete', 'get', 'patch']);
      const types = (await t.client('GET', '/api/webhooks/event-types')).body['event-types'];
      for (const verb of ['created', 'updated', 'deleted']) assert.ok(types.includes(`sample-item.${verb}`));
    });
  });
}
