/**
 * Every organization route for every kind of caller: owner, admin, member, non-member (and no
 * token), each against a fresh organization, so destructive cases do not affect the others.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify from 'fastify';
import { Type } from 'typebox';
import { registerRouteGroup, route } from '../../src/http/routes.js';
import { uniqueEmail } from '../support/auth.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { account, addMember, as, createOrg, type TestAccount } from './support.js';

type Caller = 'owner' | 'admin' | 'member' | 'non-member' | 'anonymous';

interface Fixture {
  org: string;
  /** a member every caller may act on */
  victim: TestAccount;
  invitation: string;
  actors: Record<Exclude<Caller, 'anonymous'>, TestAccount>;
}

interface Case {
  name: string;
  method: string;
  path: (f: Fixture, caller: TestAccount | undefined) => string;
  body?: () => unknown;
  expect: Record<Caller, number>;
}

const org = (f: Fixture) => `/api/orgs/${f.org}`;

const CASES: Case[] = [
  { name: 'read the organization', method: 'GET', path: org, expect: { owner: 200, admin: 200, member: 200, 'non-member': 404, anonymous: 401 } },
  {
    name: 'rename it',
    method: 'PATCH',
    path: org,
    body: () => ({ name: 'Renamed' }),
    expect: { owner: 200, admin: 200, member: 403, 'non-member': 404, anonymous: 401 },
  },
  { name: 'delete it', method: 'DELETE', path: org, expect: { owner: 204, admin: 403, member: 403, 'non-member': 404, anonymous: 401 } },
  { name: 'list members', method: 'GET', path: (f) => `${org(f)}/members`, expect: { owner: 200, admin: 200, member: 200, 'non-member': 404, anonymous: 401 } },
  {
    name: 'make a member admin',
    method: 'PATCH',
    path: (f) => `${org(f)}/members/${f.victim.id}`,
    body: () => ({ role: 'admin' }),
    expect: { owner: 200, admin: 200, member: 403, 'non-member': 404, anonymous: 401 },
  },
  {
    name: 'make a member owner',
    method: 'PATCH',
    path: (f) => `${org(f)}/members/${f.victim.id}`,
    body: () => ({ role: 'owner' }),
    expect: { owner: 200, admin: 403, member: 403, 'non-member': 404, anonymous: 401 },
  },
  {
    name: 'demote the owner',
    method: 'PATCH',
    path: (f) => `${org(f)}/members/${f.actors.owner.id}`,
    body: () => ({ role: 'member' }),
    // the owner is the only one: 409 for the owner itself, 403 below
    expect: { owner: 409, admin: 409, member: 403, 'non-member': 404, anonymous: 401 },
  },
  {
    name: 'remove a member',
    method: 'DELETE',
    path: (f) => `${org(f)}/members/${f.victim.id}`,
    expect: { owner: 204, admin: 204, member: 403, 'non-member': 404, anonymous: 401 },
  },
  {
    name: 'leave',
    method: 'DELETE',
    path: (f, caller) => `${org(f)}/members/${caller?.id ?? f.victim.id}`,
    expect: { owner: 409, admin: 204, member: 204, 'non-member': 404, anonymous: 401 },
  },
  {
    name: 'invite a member',
    method: 'POST',
    path: (f) => `${org(f)}/invitations`,
    body: () => ({ email: uniqueEmail('invitee') }),
    expect: { owner: 201, admin: 201, member: 403, 'non-member': 404, anonymous: 401 },
  },
  {
    name: 'invite an owner',
    method: 'POST',
    path: (f) => `${org(f)}/invitations`,
    body: () => ({ email: uniqueEmail('invitee'), role: 'owner' }),
    expect: { owner: 201, admin: 403, member: 403, 'non-member': 404, anonymous: 401 },
  },
  {
    name: 'list invitations',
    method: 'GET',
    path: (f) => `${org(f)}/invitations`,
    expect: { owner: 200, admin: 200, member: 403, 'non-member': 404, anonymous: 401 },
  },
  {
    name: 'revoke an invitation',
    method: 'DELETE',
    path: (f) => `${org(f)}/invitations/${f.invitation}`,
    expect: { owner: 204, admin: 204, member: 403, 'non-member': 404, anonymous: 401 },
  },
];

for (const db of testDatabases()) {
  describe(`Organization roles on ${db.name}`, () => {
    let t: TestSystem;
    let actors: Fixture['actors'];
    let victim: TestAccount;
    before(async () => {
      t = await startSystem(db);
      const [owner, admin, member, nonMember, v] = await Promise.all([account(t), account(t), account(t), account(t), account(t)]);
      actors = { owner, admin, member, 'non-member': nonMember };
      victim = v;
    });
    after(async () => t?.stop());

    const fixture = async (): Promise<Fixture> => {
      const id = await createOrg(t, actors.owner);
      await addMember(t, id, actors.owner, actors.admin, 'admin');
      await addMember(t, id, actors.owner, actors.member, 'member');
      await addMember(t, id, actors.owner, victim, 'member');
      const invited = await as(t, actors.owner, 'POST', `/api/orgs/${id}/invitations`, { email: uniqueEmail('pending') });
      assert.equal(invited.status, 201, invited.text);
      return { org: id, victim, invitation: invited.body.id, actors };
    };

    for (const c of CASES) {
      it(`${c.name}: ${Object.entries(c.expect)
        .map(([who, status]) => `${who} ${status}`)
        .join(', ')}`, async () => {
        for (const caller of Object.keys(c.expect) as Caller[]) {
          const f = await fixture();
          const who = caller === 'anonymous' ? undefined : f.actors[caller];
          const res = await as(t, who, c.method, c.path(f, who), c.body?.());
          assert.equal(res.status, c.expect[caller], `${caller} ${c.method} ${c.name}: ${res.text}`);
          if (res.status >= 400) {
            const type = { 401: 'unauthorized', 403: 'forbidden', 404: 'not-found', 409: 'conflict' }[res.status as 401 | 403 | 404 | 409];
            assert.equal(res.body.type, type, res.text);
          }
        }
      });
    }

    it('answers 404 alike for an organization that does not exist and one the caller is not in', async () => {
      const missing = await as(t, actors.owner, 'GET', '/api/orgs/00000000-0000-4000-8000-000000000000');
      const foreign = await as(t, actors['non-member'], 'GET', `/api/orgs/${(await fixture()).org}`);
      assert.equal(missing.status, 404);
      assert.deepEqual(missing.body, foreign.body);
    });

    it('answers 400 for an organization id that is not a UUID, before any lookup', async () => {
      const res = await as(t, actors.owner, 'GET', '/api/orgs/not-a-uuid/members');
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.type, 'request-coercion');
      assert.equal(res.body.in, 'path');
    });

    it('documents the role of each organization route in the OpenAPI document', async () => {
      const doc = (await t.client('GET', '/openapi/openapi.json')).body;
      assert.equal(doc.paths['/api/orgs/{id}'].get['x-org-role'], 'member');
      assert.equal(doc.paths['/api/orgs/{id}'].patch['x-org-role'], 'admin');
      assert.equal(doc.paths['/api/orgs/{id}'].delete['x-org-role'], 'owner');
      assert.equal(doc.paths['/api/orgs/{id}/invitations'].post['x-org-role'], 'admin');
      assert.match(doc.paths['/api/orgs/{id}'].delete.description, /Needs the role `owner`/);
      assert.ok(doc.paths['/api/orgs/{id}'].get.responses['404']);
      assert.ok(doc.paths['/api/orgs/{id}'].patch.responses['403']);
      assert.equal(doc.paths['/api/orgs'].post['x-org-role'], undefined);
    });
  });
}

describe('orgRole route data', () => {
  const definition = (path: string, auth?: 'none' | 'required') =>
    route({
      method: 'GET',
      path,
      summary: 'probe',
      orgRole: 'admin',
      ...(auth ? { auth } : {}),
      schemas: { params: Type.Object({ id: Type.String(), org: Type.String() }), response: { 200: Type.Object({}) } },
      handler: () => ({}),
    });
  const resolver = async () => undefined;

  it('refuses at start-up a route without the organization parameter, without a resolver, or not requiring auth', () => {
    assert.throws(
      () => registerRouteGroup(Fastify(), { prefix: '/api', memberships: resolver, routes: [definition('/things')] }),
      /needs the path parameter :id/,
    );
    assert.throws(() => registerRouteGroup(Fastify(), { prefix: '/api', routes: [definition('/orgs/:id')] }), /memberships resolver/);
    assert.throws(
      () => registerRouteGroup(Fastify(), { prefix: '/api', memberships: resolver, routes: [definition('/orgs/:id', 'none')] }),
      /requires authentication/,
    );
    assert.doesNotThrow(() =>
      registerRouteGroup(Fastify(), {
        prefix: '/api',
        memberships: resolver,
        routes: [{ ...definition('/x/:org'), orgParam: 'org' }],
      }),
    );
  });
});
