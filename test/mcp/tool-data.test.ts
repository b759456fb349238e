/**
 * Tools from route data, without a server (src/mcp/tools.ts): the input schema merges path
 * parameters (an organization's `:id` as `organization-id`), query and body; schemas are
 * self-contained (references inlined, no `$id`); a call's arguments become the route's request;
 * two tools of one name, an argument named twice, a recursive schema: refused at start-up.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Type, type TSchema } from 'typebox';
import { ref, route, type Route, type RouteGroup } from '../../src/http/routes.js';
import { toolsOf, toRequest } from '../../src/mcp/tools.js';

const Thing = Type.Object({ id: Type.String(), label: Type.String() }, { $id: 'thing', additionalProperties: false });
const Things = Type.Object({ things: Type.Array(ref(Thing)) }, { $id: 'things', additionalProperties: false });
const NewThing = Type.Object({ label: Type.String(), colour: Type.Optional(Type.String()) }, { $id: 'new-thing', additionalProperties: false });

const memberships = async () => undefined;

function group(routes: Route[]): RouteGroup {
  return { prefix: '/api/orgs', auth: 'required', memberships, routes };
}

const listThings = route({
  method: 'GET',
  path: '/:id/things',
  summary: 'Things',
  orgRole: 'member',
  scopes: ['things:read'],
  tool: { name: 'list-things', title: 'List things', description: 'The things.' },
  schemas: { params: Type.Object({ id: Type.String() }), querystring: Type.Object({ limit: Type.Optional(Type.Integer()) }), response: { 200: ref(Things) } },
  handler: () => ({ things: [] }),
});

const addThing = route({
  method: 'POST',
  path: '/:id/things/:shelf',
  summary: 'Add a thing',
  orgRole: 'admin',
  scopes: ['things:write'],
  tool: { name: 'add-thing', title: 'Add a thing', description: 'Adds one.' },
  schemas: { params: Type.Object({ id: Type.String(), shelf: Type.String() }), body: ref(NewThing), response: { 201: ref(Thing) } },
  handler: () => ({ id: '1', label: 'x' }),
});

const schemas: TSchema[] = [Thing, Things, NewThing];

describe('tools from route data', () => {
  it('merges path, query and body into one input schema and inlines the answer’s', () => {
    const tools = toolsOf([group([listThings, addThing])], schemas);
    const list = tools.get('list-things')!.listing;
    assert.deepEqual(list.inputSchema.required, ['organization-id']);
    assert.deepEqual(Object.keys(list.inputSchema.properties as object), ['organization-id', 'limit']);
    assert.deepEqual(list.outputSchema, {
      type: 'object',
      required: ['things'],
      properties: {
        things: {
          type: 'array',
          items: { type: 'object', required: ['id', 'label'], properties: { id: { type: 'string' }, label: { type: 'string' } }, additionalProperties: false },
        },
      },
      additionalProperties: false,
    });
    assert.deepEqual(list.annotations, { title: 'List things', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
    const add = tools.get('add-thing')!.listing;
    assert.deepEqual(add.inputSchema.required, ['organization-id', 'shelf', 'label']);
    assert.equal(add.inputSchema.additionalProperties, false);
    assert.equal(add.annotations.readOnlyHint, false);
    assert.equal(add.annotations.idempotentHint, false);
    assert.ok(!JSON.stringify([list, add]).includes('$id'));
  });

  it('makes the route’s request from the arguments, or the API’s 400 naming each bad one', () => {
    const tools = toolsOf([group([listThings, addThing])], schemas);
    assert.deepEqual(toRequest(tools.get('list-things')!, { 'organization-id': 'a/b', limit: 5 }), {
      method: 'GET',
      url: '/api/orgs/a%2Fb/things?limit=5',
      body: undefined,
    });
    assert.deepEqual(toRequest(tools.get('add-thing')!, { 'organization-id': 'o', shelf: 's', label: 'L', extra: 1 }), {
      method: 'POST',
      url: '/api/orgs/o/things/s',
      body: { label: 'L', extra: 1 },
    });
    assert.deepEqual(toRequest(tools.get('list-things')!, { limit: { a: 1 }, other: true }), {
      refused: {
        type: 'request-coercion',
        message: 'Invalid arguments',
        in: 'body',
        errors: [
          { path: '/organization-id', message: 'is required' },
          { path: '/limit', message: 'must be a string, a number, a boolean or a list of them' },
          { path: '/other', message: 'is not an argument of this tool' },
        ],
      },
    });
  });

  it('refuses at start-up two tools of one name, an argument named twice, a recursive schema', () => {
    const again = { ...addThing, tool: { ...addThing.tool!, name: 'list-things' } } as Route;
    assert.throws(() => toolsOf([group([listThings, again])], schemas), /another route is the tool list-things already/);
    const clash = {
      ...addThing,
      schemas: { ...addThing.schemas, params: Type.Object({ id: Type.String(), shelf: Type.String() }), body: Type.Object({ shelf: Type.String() }) },
    } as Route;
    assert.throws(() => toolsOf([group([clash])], schemas), /tool argument shelf is both/);
    const Loop = Type.Object({ next: Type.Unsafe({ $ref: 'loop#' }) }, { $id: 'loop' });
    const loop = { ...listThings, schemas: { ...listThings.schemas, response: { 200: ref(Loop) } } } as Route;
    assert.throws(() => toolsOf([group([loop])], [Loop]), /schema loop refers to itself/);
  });
});
