/**
 * The names new:resource checks against the running system's registries (scripts/resources/
 * registries.ts): each kind of clash refuses in one line naming it, a fresh name passes; and the
 * registries read from a built system hold what its modules registered (its MCP tools included).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkRegistries, readRegistries, type Registries } from '../../scripts/resources/registries.js';
import { names, SpecError } from '../../scripts/resources/spec.js';

const spec = (name: string, plural = `${name}s`) => ({ name: names(name), plural: names(plural) });
const empty: Registries = {
  schemas: new Set(),
  queryKinds: [],
  webhookEventTypes: new Set(),
  auditActions: new Set(),
  oauthScopes: new Set(),
  tools: new Set(),
};

describe("new:resource's names against the registries", () => {
  it('refuses a schema, a webhook event type, an audit action, a query kind group, a scope or an MCP tool that exists; takes a fresh name', () => {
    const clashes: Array<[Partial<Registries>, RegExp]> = [
      [{ schemas: new Set(['gadget']) }, /OpenAPI schema "gadget"/],
      [{ schemas: new Set(['gadgets']) }, /OpenAPI schema "gadgets"/],
      [{ schemas: new Set(['create-gadget']) }, /OpenAPI schema "create-gadget"/],
      [{ schemas: new Set(['update-gadget']) }, /OpenAPI schema "update-gadget"/],
      [{ webhookEventTypes: new Set(['gadget.deleted']) }, /webhook event type "gadget\.deleted"/],
      [{ auditActions: new Set(['gadget.created']) }, /audit action "gadget\.created"/],
      [{ queryKinds: ['gadgets/search'] }, /query kind group "gadgets"/],
      [{ oauthScopes: new Set(['gadgets:write']) }, /OAuth scope "gadgets:write"/],
      [{ tools: new Set(['list-gadgets']) }, /MCP tool "list-gadgets"/],
      [{ tools: new Set(['update-gadget']) }, /MCP tool "update-gadget"/],
    ];
    for (const [taken, why] of clashes) {
      assert.throws(
        () => checkRegistries(spec('gadget'), { ...empty, ...taken }),
        (err: unknown) => err instanceof SpecError && why.test(err.message) && !err.message.includes('\n'),
        String(why),
      );
    }
    assert.doesNotThrow(() =>
      checkRegistries(spec('gadget'), { ...empty, schemas: new Set(['widget']), queryKinds: ['gadget-sets/list'], tools: new Set(['get-gadget-set']) }),
    );
  });

  it("reads the running system's registries: subscription is taken, a fresh name is not", async () => {
    const registries = await readRegistries();
    for (const schema of ['subscription', 'error', 'user-account']) assert.ok(registries.schemas.has(schema), schema);
    assert.ok(registries.webhookEventTypes.has('subscription.updated'));
    assert.ok(registries.auditActions.has('account.signed-up'));
    assert.ok(registries.queryKinds.includes('account/me'));
    assert.ok(registries.oauthScopes.has('orgs:read'));
    for (const tool of ['get-account', 'list-organizations', 'list-members']) assert.ok(registries.tools.has(tool), tool);
    assert.throws(() => checkRegistries(spec('subscription'), registries), /OpenAPI schema "subscription"/);
    assert.doesNotThrow(() => checkRegistries(spec('gadget'), registries));
  });
});
