import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Stripe from 'stripe';
import { logIn, signUp } from '../support/auth.js';
import { ALL_FORMATS, FORMAT_BY_NAME } from '../support/http.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

const stripe = new Stripe('sk_test_not_used');
const SECRET = 'whsec_query_tests_0123';

for (const db of testDatabases()) {
  describe(`Query endpoint on ${db.name}`, () => {
    let t: TestSystem;
    let token: string;
    let accountId: string;
    const auth = () => ({ authorization: `Bearer ${token}` });

    before(async () => {
      t = await startSystem(db, { STRIPE_WEBHOOK_SECRET: SECRET });
      const { email, id } = await signUp(t.client);
      accountId = id;
      token = (await logIn(t.client, email)).body['access-token'];
      const base = Math.floor(Date.now() / 1000) - 100;
      const deliver = (e: object) => {
        const payload = JSON.stringify(e);
        return t.client('POST', '/api/webhooks/stripe', {
          headers: { 'content-type': 'application/json', 'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET }) },
          body: payload,
        });
      };
      await deliver({ id: 'evt_q0', type: 'checkout.session.completed', created: base, data: { object: { client_reference_id: id, customer: 'cus_q' } } });
      for (let i = 1; i <= 4; i++) await deliver({ id: `evt_q${i}`, type: 'invoice.paid', created: base + i, data: { object: { customer: 'cus_q' } } });
    });
    after(async () => t?.stop());

    for (const format of ALL_FORMATS) {
      it(`runs account/me in ${format.name}`, async () => {
        const res = await t.client('POST', '/api/cqrs/query', { format, headers: auth(), body: { 'query/kind': 'account/me' } });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.headers['content-type'], format.mime);
        assert.equal(res.body.id, accountId);
        assert.equal(res.body.subscription.status, 'none');
      });

      it(`pages payments/events newest first in ${format.name}`, async () => {
        const first = await t.client('POST', '/api/cqrs/query', { format, headers: auth(), body: { 'query/kind': 'payments/events', limit: 2 } });
        assert.equal(first.status, 200, first.text);
        assert.deepEqual(
          first.body.events.map((e: { id: string }) => e.id),
          ['evt_q4', 'evt_q3'],
        );
        assert.equal(first.body.events[0].type, 'invoice.paid');
        const second = await t.client('POST', '/api/cqrs/query', {
          format,
          headers: auth(),
          body: { 'query/kind': 'payments/events', limit: 2, cursor: first.body['next-cursor'] },
        });
        assert.deepEqual(
          second.body.events.map((e: { id: string }) => e.id),
          ['evt_q2', 'evt_q1'],
        );
        const last = await t.client('POST', '/api/cqrs/query', {
          format,
          headers: auth(),
          body: { 'query/kind': 'payments/events', limit: 2, cursor: second.body['next-cursor'] },
        });
        assert.deepEqual(
          last.body.events.map((e: { id: string }) => e.id),
          ['evt_q0'],
        );
        assert.equal(last.body['next-cursor'], null);
      });
    }

    it("coerces a form's text to the kind's parameter types, as every form is; refuses what is not of the type", async () => {
      const form = (body: string) => t.client('POST', '/api/cqrs/query', { headers: { ...auth(), 'content-type': 'application/x-www-form-urlencoded' }, body });
      const first = await form('query/kind=payments/events&limit=2');
      assert.equal(first.status, 200, first.text);
      assert.deepEqual(
        first.body.events.map((e: { id: string }) => e.id),
        ['evt_q4', 'evt_q3'],
      );
      const next = await form(`query%2Fkind=payments%2Fevents&limit=20&cursor=${encodeURIComponent(first.body['next-cursor'])}`);
      assert.equal(next.status, 200, next.text);
      assert.deepEqual(
        next.body.events.map((e: { id: string }) => e.id),
        ['evt_q2', 'evt_q1', 'evt_q0'],
      );
      assert.equal((await form('query/kind=account/me')).body.id, accountId);
      for (const bad of ['limit=ten', 'limit=2.5', 'limit=0', 'limit=1&limit=2', 'surprise=1']) {
        const res = await form(`query/kind=payments/events&${bad}`);
        assert.equal(res.status, 400, `${bad}: ${res.text}`);
        assert.equal(res.body.type, 'request-coercion');
      }
      // a typed body is still taken as typed: a string is not an integer there
      const typed = await t.client('POST', '/api/cqrs/query', { headers: auth(), body: { 'query/kind': 'payments/events', limit: '2' } });
      assert.equal(typed.status, 400, typed.text);
    });

    it('takes query/kind as a keyword (EDN, Transit) or a string with or without the colon', async () => {
      const edn = await t.client('POST', '/api/cqrs/query', { format: FORMAT_BY_NAME.edn, headers: auth(), body: '{:query/kind :account/me}' });
      assert.equal(edn.status, 200, edn.text);
      const transit = await t.client('POST', '/api/cqrs/query', {
        format: FORMAT_BY_NAME.transit,
        headers: auth(),
        body: '["^ ","~:query/kind","~:account/me"]',
      });
      assert.equal(transit.status, 200, transit.text);
      const colon = await t.client('POST', '/api/cqrs/query', { headers: auth(), body: { 'query/kind': ':account/me' } });
      assert.equal(colon.status, 200);
    });

    it('answers an unknown kind with 400 listing the known ones', async () => {
      const res = await t.client('POST', '/api/cqrs/query', { headers: auth(), body: { 'query/kind': 'billing/nothing' } });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, {
        type: 'unknown-query-kind',
        message: 'Unknown query kind "billing/nothing"',
        kind: 'billing/nothing',
        known: ['account/me', 'orgs/audit-log', 'orgs/list', 'orgs/members', 'payments/events'],
      });
      const missing = await t.client('POST', '/api/cqrs/query', { headers: auth(), body: {} });
      assert.equal(missing.status, 400);
      assert.equal(missing.body.type, 'request-coercion');
    });

    it('validates parameters and requires authentication where the kind says so', async () => {
      for (const bad of [{ limit: 0 }, { limit: 101 }, { limit: 'ten' }, { surprise: true }, { cursor: 'not-a-cursor' }]) {
        const res = await t.client('POST', '/api/cqrs/query', { headers: auth(), body: { 'query/kind': 'payments/events', ...bad } });
        assert.equal(res.status, 400, JSON.stringify(bad));
        assert.equal(res.body.type, 'request-coercion');
      }
      // cursors shaped like ours but out of range answer 400, never a 500 from PostgreSQL
      const cursor = (text: string) => Buffer.from(text).toString('base64url');
      for (const text of ['0000000000000.9999999999999999999', '0000000000000.9223372036854775808', '9999999999999.1']) {
        const res = await t.client('POST', '/api/cqrs/query', { headers: auth(), body: { 'query/kind': 'payments/events', cursor: cursor(text) } });
        if (text.startsWith('9999999999999')) {
          assert.equal(res.status, 200, `${text}: ${res.text}`);
          continue;
        }
        assert.equal(res.status, 400, `${text}: ${res.text}`);
        assert.equal(res.body.type, 'request-coercion');
        assert.equal(res.body.errors[0].path, '/cursor');
      }
      const largest = await t.client('POST', '/api/cqrs/query', {
        headers: auth(),
        body: { 'query/kind': 'payments/events', limit: 1, cursor: cursor('9999999999999.9223372036854775807') },
      });
      assert.equal(largest.status, 200, largest.text);
      assert.equal(largest.body.events[0].id, 'evt_q4');
      const anonymous = await t.client('POST', '/api/cqrs/query', { body: { 'query/kind': 'payments/events' } });
      assert.equal(anonymous.status, 401);
    });

    it('documents every kind in the OpenAPI document', async () => {
      const doc = JSON.parse((await t.client('GET', '/openapi/openapi.json')).text);
      const body = doc.paths['/api/cqrs/query'].post.requestBody.content['application/json'].schema;
      const kinds = body.anyOf.map((s: { properties: Record<string, { enum: string[] }> }) => s.properties['query/kind'].enum[0]);
      assert.deepEqual(kinds.sort(), ['account/me', 'orgs/audit-log', 'orgs/list', 'orgs/members', 'payments/events']);
      assert.ok(doc.components.schemas['payment-events-page']);
      assert.ok(doc.components.schemas['user-account']);
      // the answer is documented as one of the kinds' results (the pipeline checks it as the registry left it)
      const ok = doc.paths['/api/cqrs/query'].post.responses['200'].content['application/json'].schema;
      assert.ok(
        ok.anyOf.some((s: { $ref?: string }) => s.$ref === '#/components/schemas/user-account'),
        JSON.stringify(ok),
      );
      assert.ok(
        ok.anyOf.some((s: { $ref?: string }) => s.$ref === '#/components/schemas/payment-events-page'),
        JSON.stringify(ok),
      );
    });
  });
}
