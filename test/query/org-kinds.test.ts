/** Query kinds on an organization: their declaration is checked when it is made, like a route's; the query route takes the scopes its kinds declare. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Type, type TObject } from 'typebox';
import { ResponseCoercionError } from '../../src/http/errors.js';
import { QueryRegistry, queryKind } from '../../src/http/queries.js';
import { queryRoutes } from '../../src/query/routes.js';

const result = Type.Object({ ok: Type.Boolean() }, { $id: 'test-ok' });
const kind = (extra: Record<string, unknown>, params: TObject = Type.Object({ 'org-id': Type.String({ format: 'uuid' }) })) =>
  queryKind({ kind: 'test/org', summary: 'test', auth: 'required', params, result, run: async () => ({ ok: true }), ...extra });

describe('query kinds with orgRole', () => {
  it("needs a UUID parameter naming the organization, orgRole for apiKeys, and the registry's memberships", () => {
    assert.throws(() => kind({ orgRole: 'member' }, Type.Object({})), /orgRole needs the parameter org-id/);
    assert.throws(() => kind({ orgRole: 'member' }, Type.Object({ 'org-id': Type.String() })), /format uuid/);
    assert.throws(() => kind({ orgRole: 'member', orgParam: 'org' }), /orgRole needs the parameter org/);
    assert.throws(() => kind({ apiKeys: true }), /apiKeys needs orgRole/);
    assert.throws(() => new QueryRegistry([kind({ orgRole: 'admin', apiKeys: true })], []), /memberships resolver/);
    const registry = new QueryRegistry([kind({ orgRole: 'admin', apiKeys: true })], [], { memberships: async () => undefined });
    assert.deepEqual(registry.names, ['test/org']);
  });
});

describe("a kind's result", () => {
  it('is checked against its own schema: another shape is a response-coercion error, never sent', async () => {
    const wrong = queryKind({ kind: 'test/wrong', summary: 'test', auth: 'none', params: Type.Object({}), result, run: async () => ({ ok: 'yes' }) as never });
    const right = queryKind({ kind: 'test/right', summary: 'test', auth: 'none', params: Type.Object({}), result, run: async () => ({ ok: true }) });
    const registry = new QueryRegistry([wrong, right], []);
    await assert.rejects(registry.run({ 'query/kind': 'test/wrong' }, { user: undefined, apiKey: undefined }), (err: unknown) => {
      assert.ok(err instanceof ResponseCoercionError);
      assert.equal(err.errors[0]?.path, '/ok');
      return true;
    });
    assert.deepEqual(await registry.run({ 'query/kind': 'test/right' }, { user: undefined, apiKey: undefined }), { ok: true });
  });
});

describe('the query route', () => {
  it("takes an OAuth token with a scope of one of its kinds (route data from the kinds' own), none without one", () => {
    const params = Type.Object({});
    const run = async () => ({ ok: true });
    const kinds = [
      queryKind({ kind: 'gadgets/list', summary: 'test', auth: 'required', scopes: ['gadgets:read'], params, result, run }),
      queryKind({ kind: 'account/me', summary: 'test', auth: 'required', scopes: ['account:read'], params, result, run }),
      queryKind({ kind: 'public/ping', summary: 'test', auth: 'none', params, result, run }),
    ];
    const [query] = queryRoutes(new QueryRegistry(kinds, [])).routes;
    assert.deepEqual(query.scopes, ['account:read', 'gadgets:read']);
    const [unscoped] = queryRoutes(new QueryRegistry([kinds[2]], [])).routes;
    assert.equal(unscoped.scopes, undefined, 'no kind takes a token: neither does the route');
  });
});
