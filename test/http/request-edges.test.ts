/**
 * What a property-based run against the OpenAPI document found at the edges of the request
 * pipeline (issue 25, items 7-12), each answered in the error shape: the NUL character in any
 * decoded string, the caller checked before the input, types coerced only where input is text,
 * 405 with `Allow`, over-long URLs and headers, API keys on public routes, and a 503 the code
 * chose logged as a warning.
 */
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Type } from 'typebox';
import { route, type RouteGroup } from '../../src/http/routes.js';
import { logIn, signUp, uniqueEmail } from '../support/auth.js';
import { ALL_FORMATS, FORMAT_BY_NAME } from '../support/http.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

const Typed = Type.Object({ n: Type.Integer(), on: Type.Boolean(), name: Type.String() }, { additionalProperties: false });

/** A route whose body has a number and a boolean: what coercion would change. */
const probes: RouteGroup = {
  prefix: '/api/probe-types',
  routes: [
    route({
      method: 'POST',
      path: '/',
      summary: 'Echo typed fields',
      schemas: {
        body: Typed,
        querystring: Type.Object({ limit: Type.Optional(Type.Integer()) }),
        response: { 200: Type.Object({ n: Type.Integer(), on: Type.Boolean(), name: Type.String(), limit: Type.Union([Type.Integer(), Type.Null()]) }) },
      },
      handler: ({ parameters }) => ({ ...parameters.body, limit: parameters.query.limit ?? null }),
    }),
  ],
};

/** Sends `text` on a socket of its own and answers what came back before the server closed it. */
function rawRequest(url: string, text: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    let out = '';
    const socket = connect(Number(port), hostname, () => socket.write(text));
    socket.on('data', (chunk) => {
      out += chunk.toString('latin1');
    });
    socket.on('close', () => resolve(out));
    socket.on('error', () => resolve(out));
  });
}

const bodyOf = (response: string) => JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as { type: string; message: string };

for (const db of testDatabases()) {
  describe(`Request edges on ${db.name}`, () => {
    let t: TestSystem;
    let access: string;
    let orgId: string;
    before(async () => {
      t = await startSystem(db, {}, { extraRouteGroups: [probes] });
      // a public directory: the static files' catch-all must not answer API paths
      await mkdir(t.system.config.publicDir, { recursive: true });
      await writeFile(join(t.system.config.publicDir, 'index.html'), '<!doctype html><html><body>app</body></html>');
      const account = await signUp(t.client);
      access = (await logIn(t.client, account.email)).body['access-token'];
      const org = await t.client('POST', '/api/orgs', { headers: { authorization: `Bearer ${access}` }, body: { name: 'Edges' } });
      orgId = org.body.id;
    });
    after(async () => t?.stop());
    const auth = () => ({ authorization: `Bearer ${access}` });

    it('refuses U+0000 in any decoded string, in every format and in forms, with 400 request-coercion naming the field', async () => {
      for (const format of ALL_FORMATS) {
        const logIn = await t.client('POST', '/api/account/log-in', { format, body: { email: 'a\u0000b@example.com', password: 'long enough' } });
        assert.deepEqual(
          [logIn.status, logIn.body.type, logIn.body.in, logIn.body.errors[0].path],
          [400, 'request-coercion', 'body', '/email'],
          `${format.name}: ${logIn.text}`,
        );
        const org = await t.client('PATCH', `/api/orgs/${orgId}`, { format, headers: auth(), body: { name: 'a\u0000b' } });
        assert.deepEqual([org.status, org.body.errors?.[0].path], [400, '/name'], `${format.name}: ${org.text}`);
        const me = await t.client('PATCH', '/api/account/me', { format, headers: auth(), body: { name: 'x\u0000' } });
        assert.deepEqual([me.status, me.body.errors?.[0].path], [400, '/name'], `${format.name}: ${me.text}`);
        // in a key too
        const key = await t.client('POST', '/api/account/log-in', { format, body: { email: 'a@example.com', password: 'long enough', 'x\u0000': 1 } });
        assert.equal(key.status, 400, key.text);
      }
      const form = await t.client('POST', '/api/account/log-in', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'email=a%00b%40example.com&password=long+enough',
      });
      assert.deepEqual([form.status, form.body.type, form.body.errors[0].path], [400, 'request-coercion', '/email'], form.text);
      const query = await t.client('GET', `/api/orgs/${orgId}/audit-log?cursor=a%00`, { headers: auth() });
      assert.deepEqual([query.status, query.body.in, query.body.errors[0].path], [400, 'query', '/cursor'], query.text);
      // an escaped backslash followed by "u0000" is no NUL
      const text = await t.client('PATCH', '/api/account/me', { headers: { ...auth(), 'content-type': 'application/json' }, body: '{"name":"a\\\\u0000b"}' });
      assert.deepEqual([text.status, text.body.name], [200, 'a\\u0000b'], text.text);
    });

    it('answers forgot-password with a NUL 400, and logs no error', async () => {
      const before = (await t.logEntries()).length;
      const res = await t.client('POST', '/api/account/forgot-password', { body: { email: `x\u0000${uniqueEmail()}` } });
      assert.equal(res.status, 400, res.text);
      await t.system.database.db.selectFrom('account').select('id').limit(1).execute();
      const errors = (await t.logEntries()).slice(before).filter((e) => e.level === 'error' || e.level === 'fatal');
      assert.deepEqual(errors, []);
    });

    it('checks the caller before the input: 401 for a request without a token, whatever its body', async () => {
      const routes: Array<[string, string, unknown]> = [
        ['POST', '/api/account/change-email', { 'new-email': 42 }],
        ['POST', `/api/orgs/${orgId}/invitations`, { email: 'not an address', role: 'king' }],
        ['DELETE', '/api/account/sessions/not-a-uuid', undefined],
        ['POST', '/api/account/change-password', '{{{'],
      ];
      for (const [method, path, body] of routes) {
        const res = await t.client(method, path, { body });
        assert.deepEqual([res.status, res.body.type], [401, 'unauthorized'], `${method} ${path}: ${res.text}`);
      }
    });

    it('takes JSON, EDN and Transit bodies as typed and coerces only forms and query strings', async () => {
      for (const format of ALL_FORMATS) {
        const slug = await t.client('PATCH', `/api/orgs/${orgId}`, { format, headers: auth(), body: { slug: false } });
        assert.deepEqual([slug.status, slug.body.errors?.[0].path], [400, '/slug'], `${format.name}: ${slug.text}`);
        const typed = await t.client('POST', '/api/probe-types?limit=7', { format, body: { n: '5', on: 'true', name: 1 } });
        assert.deepEqual([typed.status, typed.body.errors?.map((e: { path: string }) => e.path).sort()], [400, ['/n', '/name', '/on']], typed.text);
        const ok = await t.client('POST', '/api/probe-types?limit=7', { format, body: { n: 5, on: true, name: 'x' } });
        assert.deepEqual(ok.body, { n: 5, on: true, name: 'x', limit: 7 });
      }
      const form = await t.client('POST', '/api/probe-types?limit=7', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'n=5&on=true&name=x',
      });
      assert.deepEqual([form.status, form.body], [200, { n: 5, on: true, name: 'x', limit: 7 }], form.text);
      const name = await t.client('GET', `/api/orgs/${orgId}`, { headers: auth() });
      assert.match(name.body.slug, /^edges/, 'nothing stored "false"');
    });

    it('answers a path a route has under other methods with 405 and Allow, in the error shape, in every format', async () => {
      for (const format of ALL_FORMATS) {
        for (const [method, path, allow] of [
          ['PUT', '/api/account/me', 'GET, HEAD, PATCH'],
          ['PUT', '/api/account/me/', 'GET, HEAD, PATCH'],
          ['POST', '/api/health', 'GET, HEAD'],
          ['TRACE', '/api/account/me', 'GET, HEAD, PATCH'],
          ['GET', '/api/account/log-in', 'POST'],
          ['DELETE', '/%61pi/account/log-in', 'POST'],
          ['POST', `/api/orgs/${orgId}/members/${orgId}`, 'DELETE, PATCH'],
        ]) {
          const res = await t.client(method, path, { format });
          assert.deepEqual(
            [res.status, res.headers.allow, res.body?.type],
            [405, allow, 'method-not-allowed'],
            `${method} ${path} ${format.name}: ${res.text}`,
          );
          assert.deepEqual(res.body.allow, allow.split(', '));
          assert.equal(res.headers['cache-control'], 'no-store');
        }
      }
      // QUERY (RFC 10008) without a Content-Type is refused by the framework before any route: the 405 comes first
      const query = await rawRequest(t.url, 'QUERY /api/account/me HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      assert.match(query, /^HTTP\/1\.1 405 /);
      assert.match(query, /\r\nallow: GET, HEAD, PATCH\r\n/i);
      assert.equal(bodyOf(query).type, 'method-not-allowed');
      // the method a route has is no 405, even when the segment is too long for any route: 404
      const long = await t.client('GET', `/api/orgs/${'a'.repeat(300)}`);
      assert.deepEqual([long.status, long.body.type], [404, 'not-found']);
    });

    it("never lets the static files answer an API or docs path: a %00 is the API's 404", async () => {
      for (const path of ['/api/abc%00def', '/%61pi/x%00', '/openapi/x%00y', `/api/${'a'.repeat(300)}`]) {
        for (const accept of ['application/json', 'text/html']) {
          const res = await t.client('GET', path, { headers: { accept } });
          assert.deepEqual([res.status, res.body?.type], [404, 'not-found'], `${path} (${accept}): ${res.text}`);
          assert.equal(res.headers['cache-control'], 'no-store');
        }
      }
      assert.equal((await t.client('GET', '/index.html', { headers: { accept: 'text/html' } })).status, 200, 'files are still served');
    });

    it('answers over-long URLs 414 and over-long headers 431 in the error shape, and logs them', async () => {
      const long = await t.client('GET', `/api/health?pad=${'a'.repeat(9000)}`, { format: FORMAT_BY_NAME.edn });
      assert.deepEqual([long.status, long.body.type], [414, 'uri-too-long']);
      const line = await rawRequest(t.url, `GET /api/health?${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
      assert.match(line, /^HTTP\/1\.1 414 /);
      assert.equal(bodyOf(line).type, 'uri-too-long');
      assert.match(line, /\r\ncache-control: no-store\r\n/);
      const headers = await rawRequest(t.url, `GET /api/health HTTP/1.1\r\nHost: x\r\nX-Pad: ${'a'.repeat(20_000)}\r\n\r\n`);
      assert.match(headers, /^HTTP\/1\.1 431 /);
      assert.equal(bodyOf(headers).type, 'headers-too-large');
      const logged = (await t.logEntries()).filter((e) => e.id === 'api-call/response' && (e.data.status === 431 || e.data.status === 414));
      assert.ok(
        logged.some((e) => e.data.status === 431 && e.msg === 'GET /api/health => 431'),
        'the 431 is logged with its method and path',
      );
      assert.ok(logged.filter((e) => e.data.status === 414).length >= 2, 'both 414s are logged');
      assert.ok(
        logged.every((e) => e.msg.length < 300),
        'no over-long URL in the log',
      );
    });

    it('lets public routes ignore an API key; a route that needs a person refuses it', async () => {
      const key = { authorization: 'Bearer sk_abcdefgh_notakeyatall0000000000000000' };
      assert.equal((await t.client('GET', '/api/health', { headers: key })).status, 200);
      assert.equal((await t.client('GET', '/api/billing/plans', { headers: key })).status, 200);
      const signed = await t.client('POST', '/api/account/sign-up', { headers: key, body: { email: uniqueEmail(), password: 'long enough password' } });
      assert.equal(signed.status, 201, signed.text);
      const me = await t.client('GET', '/api/account/me', { headers: key });
      assert.deepEqual([me.status, me.body.type], [401, 'unauthorized']);
      assert.match(me.body.message, /API keys only work on organization routes/);
    });

    it('documents what the pipeline answers: shared 403, 414 and 431, oneOf second factors, the email rule, forms for flat bodies only', async () => {
      const doc = (await t.client('GET', '/openapi/openapi.json')).body;
      const op = (path: string, method: string) => doc.paths[path][method];
      for (const [path, method] of [
        ['/api/account/log-in', 'post'],
        ['/api/orgs/{id}', 'get'],
        ['/api/health', 'get'],
      ]) {
        assert.ok(op(path, method).responses['414'] && op(path, method).responses['431'], `${method} ${path}: 414 and 431`);
      }
      assert.match(op('/api/account/log-in', 'post').responses['403'].description, /reason: origin.*csrf/);
      assert.match(op('/api/orgs/{id}', 'patch').responses['403'].description, /role .* below.*; or `forbidden` with `reason: origin`/);
      assert.equal(
        op('/api/orgs/{id}', 'get').responses['403'].description,
        "The caller's role in the organization is below the one the route needs; or `insufficient-scope` (with `scopes`): an OAuth access token without one of the route's scopes",
        'a GET has no CSRF check',
      );
      assert.equal(op('/api/webhooks/{provider}', 'post').responses['403'], undefined, 'the webhook has no CSRF check');
      for (const path of ['/api/account/2fa/disable', '/api/account/log-in/mfa']) {
        const schema = op(path, 'post').requestBody.content['application/json'].schema;
        assert.equal(schema.oneOf?.length, 2, `${path}: oneOf`);
        assert.deepEqual(
          schema.oneOf.map((s: { required: string[] }) => s.required.filter((f) => f === 'code' || f === 'backup-code')),
          [['code'], ['backup-code']],
        );
      }
      const neither = await t.client('POST', '/api/account/log-in/mfa', { body: { 'mfa-token': 'x' } });
      assert.deepEqual([neither.status, neither.body.message], [400, 'Give one of code or backup-code']);
      const email = doc.components.schemas['create-account'].properties.email;
      assert.ok(
        email.pattern && new RegExp(email.pattern, 'u').test('Ann@Example.com') && !new RegExp(email.pattern, 'u').test('ann@'),
        'the email rule is stated',
      );
      assert.equal(doc.components.schemas['update-account'].properties.name.minLength, undefined, 'an empty name clears it, as its description says');
      assert.ok(op('/api/account/log-in', 'post').requestBody.content['application/x-www-form-urlencoded'], 'a flat body: a form too');
      assert.equal(
        op('/api/account/passkeys/register/verify', 'post').requestBody.content['application/x-www-form-urlencoded'],
        undefined,
        'a nested one: no form',
      );
      assert.deepEqual(op('/api/cqrs/query', 'post').security, [{}, { bearerAuth: [] }, { apiKeyAuth: [] }]);
      const callback = op('/api/auth/oauth/{provider}/callback', 'get').parameters as Array<{ name: string; schema: { maxLength?: number } }>;
      const declared = callback.filter((p) => p.schema.maxLength).reduce((sum, p) => sum + p.schema.maxLength!, 0);
      assert.ok(declared < 8192, `the callback's parameters fit in the URL limit (${declared})`);
    });

    it('logs a 503 the code chose (billing without Stripe) as a warning without a stack', async () => {
      const before = (await t.logEntries()).length;
      const res = await t.client('POST', `/api/orgs/${orgId}/billing/portal`, { headers: auth(), body: {} });
      assert.deepEqual([res.status, res.body.type], [503, 'billing-not-configured']);
      const entries = (await t.logEntries()).slice(before);
      assert.deepEqual(
        entries.filter((e) => e.level === 'error'),
        [],
      );
      const warning = entries.find((e) => e.id === 'http/unavailable');
      assert.ok(warning, 'a warning');
      assert.equal(warning.level, 'warn');
      assert.equal(warning.data.stack, undefined);
    });
  });
}
