import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Type } from 'typebox';
import { badRequest } from '../../src/http/errors.js';
import { route, type RouteGroup } from '../../src/http/routes.js';
import { ALL_FORMATS, FORMAT_BY_NAME } from '../support/http.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

const Echo = Type.Object(
  { n: Type.Integer({ minimum: 0 }), name: Type.String({ minLength: 1 }), password: Type.Optional(Type.String()) },
  { additionalProperties: false },
);
const EchoResult = Type.Object({ n: Type.Integer(), name: Type.String(), limit: Type.Integer() }, { additionalProperties: false });

/** Probe routes that exercise the pipeline: "all good", "invalid request", "invalid response", exceptions. */
const probes: RouteGroup = {
  prefix: '/api/probe',
  tags: ['Probe'],
  routes: [
    route({
      method: 'POST',
      path: '/echo/:id',
      summary: 'Echo',
      schemas: {
        params: Type.Object({ id: Type.String({ pattern: '^[a-z]+$' }) }),
        querystring: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 10, default: 5 }) }),
        body: Echo,
        response: { 200: EchoResult },
      },
      async handler({ parameters }) {
        return { n: parameters.body.n, name: parameters.body.name, limit: parameters.query.limit };
      },
    }),
    route({
      method: 'GET',
      path: '/bad-response',
      summary: 'Breaks its own response schema',
      schemas: { response: { 200: EchoResult } },
      async handler() {
        return { n: 'not a number', name: 'x', limit: 1, secret: 'leak-me' } as never;
      },
    }),
    route({
      method: 'GET',
      path: '/throws',
      summary: 'Throws',
      schemas: { response: { 200: EchoResult } },
      async handler() {
        throw new TypeError('internal detail that must not leave');
      },
    }),
    // handlers that answer without a promise take the same pipeline
    route({
      method: 'GET',
      path: '/sync/:case',
      summary: 'Answers synchronously',
      schemas: { params: Type.Object({ case: Type.String() }), response: { 200: EchoResult, 201: EchoResult } },
      handler({ parameters, reply }) {
        if (parameters.path.case === 'throws') throw new TypeError('internal detail that must not leave');
        if (parameters.path.case === 'bad') return { n: 'not a number', name: 'x', limit: 1 } as never;
        if (parameters.path.case === 'created') reply.code(201);
        return { n: 1, name: parameters.path.case, limit: 2 };
      },
    }),
    // JSON Schema 2020's numeric exclusive bounds: the document says them in OpenAPI 3.0's words
    route({
      method: 'GET',
      path: '/bounded',
      summary: 'Bounded',
      schemas: {
        querystring: Type.Object({ ratio: Type.Optional(Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 })) }),
        response: { 200: EchoResult },
      },
      handler: ({ parameters }) => ({ n: 1, name: String(parameters.query.ratio), limit: 1 }),
    }),
    route({
      method: 'GET',
      path: '/early-exit',
      summary: 'Early exit',
      schemas: { response: { 200: EchoResult } },
      async handler() {
        throw badRequest({ type: 'custom-problem', message: 'carried body', detail: 42 });
      },
    }),
  ],
};

for (const db of testDatabases()) {
  describe(`HTTP pipeline on ${db.name}`, () => {
    let t: TestSystem;
    let publicDir: string;
    before(async () => {
      // the public directory is the client's build output, listed when the server starts
      publicDir = await mkdtemp(join(tmpdir(), 'saas-public-'));
      await writeFile(join(publicDir, 'hello.txt'), 'static hello');
      t = await startSystem(db, { BODY_LIMIT: '4096', PUBLIC_DIR: publicDir }, { extraRouteGroups: [probes] });
    });
    after(async () => {
      await t?.stop();
      await rm(publicDir, { recursive: true, force: true });
    });

    for (const format of ALL_FORMATS) {
      it(`answers /api/health in ${format.name}`, async () => {
        const res = await t.client('GET', '/api/health', { format });
        assert.equal(res.status, 200);
        assert.equal(res.headers['content-type'], format.mime);
        assert.equal(res.body.status, 'ok');
        assert.equal(res.body.db, 'ok');
        assert.equal(typeof res.body['uptime-s'], 'number');
        assert.equal(res.body.version, t.system.config.version);
      });

      it(`decodes, coerces and encodes a body in ${format.name}`, async () => {
        const res = await t.client('POST', '/api/probe/echo/abc?limit=3', { format, body: { n: 7, name: 'seven' } });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body, { n: 7, name: 'seven', limit: 3 });
      });

      it(`answers a malformed ${format.name} body with 400 malformed-body`, async () => {
        const broken = { json: '{"n": 1,', edn: '{:n 1', transit: '["^ ","~:n"' }[format.name];
        const res = await t.client('POST', '/api/probe/echo/abc', { format, body: broken });
        assert.equal(res.status, 400);
        assert.equal(res.headers['content-type'], format.mime);
        assert.equal(res.body.type, 'malformed-body');
      });

      it(`reports request coercion failures in ${format.name}`, async () => {
        const res = await t.client('POST', '/api/probe/echo/abc', { format, body: { n: -1, extra: true } });
        assert.equal(res.status, 400);
        assert.equal(res.body.type, 'request-coercion');
        assert.equal(res.body.in, 'body');
        const paths = res.body.errors.map((e: { path: string }) => e.path).sort();
        assert.deepEqual(paths, ['/extra', '/n', '/name']);
      });

      it(`answers 404 in ${format.name}`, async () => {
        const res = await t.client('GET', '/api/nothing-here', { format });
        assert.equal(res.status, 404);
        assert.equal(res.headers['content-type'], format.mime);
        assert.equal(res.body.type, 'not-found');
      });
    }

    it('answers router errors (an over-long path parameter) in the error shape and the negotiated format', async () => {
      const res = await t.client('POST', `/api/webhooks/${'x'.repeat(300)}`, { format: FORMAT_BY_NAME.edn });
      assert.equal(res.status, 414);
      assert.equal(res.headers['content-type'], 'application/edn');
      assert.deepEqual(res.body, { type: 'uri-too-long', message: 'A path segment is too long' });
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
    });

    it('refuses prototype-pollution keys in every format', async () => {
      const bodies = [
        ['json', '{"n":1,"name":"x","__proto__":{"polluted":true}}'],
        ['edn', '{:n 1 :name "x" :__proto__ {:polluted true}}'],
        ['transit', '["^ ","~:n",1,"~:name","x","~:__proto__",["^ ","~:polluted",true]]'],
      ] as const;
      for (const [name, body] of bodies) {
        const res = await t.client('POST', '/api/probe/echo/abc', { format: FORMAT_BY_NAME[name], body });
        assert.equal(res.status, 400, `${name}: ${res.text}`);
        assert.equal(({} as Record<string, unknown>).polluted, undefined);
      }
    });

    it('refuses the prototype keys after decoding: escaped spellings, EDN and Transit keywords, forms, query strings', async () => {
      const bodies = [
        ['json', '{"n":1,"name":"x","\\u005f_proto__":{"polluted":true}}'],
        ['json', '{"n":1,"name":"x","constructo\\u0072":{"prototype":{"polluted":true}}}'],
        ['json', '{"n":1,"name":"x","nested":[{"prot\\u006ftype":1}]}'],
        ['json', '{"n":1,"name":"x","constructor":1}'],
        ['edn', '{:n 1 :name "x" "\\u005f_proto__" {:polluted true}}'],
        ['edn', '{:n 1 :name "x" :constructor {:prototype {:polluted true}}}'],
        ['edn', '{:n 1 :name "x" :nested [{:prototype 1}]}'],
        ['transit', '["^ ","~:n",1,"~:name","x","~:\\u005f_proto__",["^ ","~:polluted",true]]'],
        ['transit', '["^ ","~:n",1,"~:name","x","~:constructor",1]'],
        ['transit', '{"n":1,"name":"x","__proto__":{"polluted":true}}'],
        ['transit', '["~#cmap",["prototype",1]]'],
      ] as const;
      for (const [name, body] of bodies) {
        const res = await t.client('POST', '/api/probe/echo/abc', { format: FORMAT_BY_NAME[name], body });
        assert.equal(res.status, 400, `${name}: ${body}: ${res.text}`);
        assert.equal(res.body.type, 'malformed-body', `${name}: ${body}: ${res.text}`);
        assert.match(res.body.message, /Forbidden key|forbidden key/);
      }
      for (const form of ['n=1&name=x&__proto__=1', 'n=1&name=x&constructor=1', 'n=1&name=x&%5f%5fproto%5f%5f=1', 'n=1&name=x&prototype=1']) {
        const res = await t.client('POST', '/api/probe/echo/abc', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form });
        assert.equal(res.status, 400, `${form}: ${res.text}`);
        assert.equal(res.body.type, 'malformed-body', `${form}: ${res.text}`);
      }
      for (const query of ['__proto__=1', 'constructor=1', '%5F%5Fproto%5F%5F=1', 'prototype=2']) {
        const res = await t.client('POST', `/api/probe/echo/abc?limit=3&${query}`, { body: { n: 1, name: 'x' } });
        assert.equal(res.status, 400, `${query}: ${res.text}`);
        assert.equal(res.body.type, 'request-coercion');
        assert.equal(res.body.in, 'query');
      }
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
    });

    it('reports query and path coercion failures with where they happened', async () => {
      const q = await t.client('POST', '/api/probe/echo/abc?limit=lots', { body: { n: 1, name: 'x' } });
      assert.equal(q.status, 400);
      assert.equal(q.body.in, 'query');
      assert.equal(q.body.errors[0].path, '/limit');
      const p = await t.client('POST', '/api/probe/echo/ABC1', { body: { n: 1, name: 'x' } });
      assert.equal(p.status, 400);
      assert.equal(p.body.in, 'path');
    });

    it('accepts form-encoded bodies and coerces them', async () => {
      const res = await t.client('POST', '/api/probe/echo/abc', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'n=5&name=form',
      });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, { n: 5, name: 'form', limit: 5 });
    });

    it('answers an unknown Content-Type with 415', async () => {
      const res = await t.client('POST', '/api/probe/echo/abc', { headers: { 'content-type': 'text/csv' }, body: 'n,name' });
      assert.equal(res.status, 415);
      assert.equal(res.body.type, 'unsupported-media-type');
      // it says what is supported, not that no Content-Type was sent (nor the one sent: never quoted)
      assert.doesNotMatch(res.body.message, /\(none\)|text\/csv/);
      assert.match(res.body.message, /application\/json/);
    });

    it('never quotes an unknown field that is not a field name: a form body sent without = is one key holding the text', async () => {
      const res = await t.client('POST', '/api/probe/echo/abc', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: '{"name":"x","password":"hunter2 is my secret"}',
      });
      assert.equal(res.status, 400, res.text);
      assert.ok(!res.text.includes('hunter2'), res.text);
      assert.ok(
        res.body.errors.some((e: { path: string; message: string }) => e.path === '/' && e.message === 'has a field that is not allowed'),
        res.text,
      );
      // a field-like unknown name is still named
      const named = await t.client('POST', '/api/probe/echo/abc', { body: { n: 1, name: 'x', colour: 'red' } });
      assert.equal(named.status, 400);
      assert.ok(
        named.body.errors.some((e: { path: string }) => e.path === '/colour'),
        named.text,
      );
    });

    it('answers a body over the limit with 413', async () => {
      const res = await t.client('POST', '/api/probe/echo/abc', { body: { n: 1, name: 'x'.repeat(10_000) } });
      assert.equal(res.status, 413);
      assert.equal(res.body.type, 'payload-too-large');
    });

    it('falls back to JSON for an Accept it cannot serve, and honours q-values', async () => {
      const csv = await t.client('GET', '/api/health', { headers: { accept: 'text/csv' } });
      assert.equal(csv.headers['content-type'], 'application/json');
      const q = await t.client('GET', '/api/health', { headers: { accept: 'application/json;q=0.2, application/edn;q=0.9, application/transit+json;q=0.5' } });
      assert.equal(q.headers['content-type'], 'application/edn');
      const zero = await t.client('GET', '/api/health', { headers: { accept: 'application/transit+json;q=0, */*;q=0.1' } });
      assert.equal(zero.headers['content-type'], 'application/json');
    });

    it('validates response bodies: a body that breaks its schema is a 500 that leaks nothing, and is logged', async () => {
      const res = await t.client('GET', '/api/probe/bad-response');
      assert.equal(res.status, 500);
      assert.equal(res.body.type, 'response-coercion');
      assert.ok(!res.text.includes('leak-me'));
      const entries = await t.logEntries();
      const logged = entries.find((e) => e.id === 'http/response-coercion');
      assert.ok(logged, 'the offending body is logged');
      assert.equal(logged.ctx.uri, '/api/probe/bad-response');
      // the offending body is logged, with secrets redacted like everything else
      assert.equal((logged.data.body as Record<string, unknown>).secret, '[REDACTED]');
    });

    it('turns exceptions into 500 with the class name and no internals', async () => {
      for (const format of ALL_FORMATS) {
        const res = await t.client('GET', '/api/probe/throws', { format });
        assert.equal(res.status, 500);
        assert.equal(res.headers['content-type'], format.mime);
        assert.deepEqual(res.body, { type: 'exception', message: 'Internal server error', class: 'TypeError' });
        assert.ok(!res.text.includes('internal detail'));
      }
    });

    it('takes handlers that answer synchronously through the same pipeline: body, status, schema check, exceptions', async () => {
      for (const format of ALL_FORMATS) {
        const ok = await t.client('GET', '/api/probe/sync/fine', { format });
        assert.equal(ok.status, 200);
        assert.equal(ok.headers['content-type'], format.mime);
        assert.deepEqual(ok.body, { n: 1, name: 'fine', limit: 2 });
        assert.equal((await t.client('GET', '/api/probe/sync/created', { format })).status, 201);
        const bad = await t.client('GET', '/api/probe/sync/bad', { format });
        assert.equal(bad.status, 500);
        assert.equal(bad.body.type, 'response-coercion');
        const thrown = await t.client('GET', '/api/probe/sync/throws', { format });
        assert.equal(thrown.status, 500);
        assert.deepEqual(thrown.body, { type: 'exception', message: 'Internal server error', class: 'TypeError' });
        assert.ok(!thrown.text.includes('internal detail'));
      }
    });

    it('answers early exits with the body they carry', async () => {
      const res = await t.client('GET', '/api/probe/early-exit', { format: FORMAT_BY_NAME.edn });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, { type: 'custom-problem', message: 'carried body', detail: 42 });
    });

    it('compresses when the client accepts it (gzip, br, deflate round trips)', async () => {
      for (const encoding of ['gzip', 'br', 'deflate']) {
        const res = await t.client('GET', '/openapi/openapi.json', { headers: { 'accept-encoding': encoding } });
        assert.equal(res.status, 200);
        assert.equal(res.headers['content-encoding'], encoding);
        assert.ok(res.raw.length < Buffer.byteLength(res.text));
        assert.equal(JSON.parse(res.text).openapi, '3.0.3');
      }
      const plain = await t.client('GET', '/openapi/openapi.json', { headers: { 'accept-encoding': 'identity' } });
      assert.equal(plain.headers['content-encoding'], undefined);
    });

    it("compresses an API answer of 1 KiB or more in the client's preferred encoding, with Vary; smaller ones and identity go as they are", async () => {
      const echo = (name: string, acceptEncoding: string) =>
        t.client('POST', '/api/probe/echo/abc', { body: { n: 1, name }, headers: { 'accept-encoding': acceptEncoding } });
      const long = 'x'.repeat(3000);
      for (const [accept, expected] of [
        ['gzip;q=0.5, br', 'br'],
        ['gzip', 'gzip'],
        ['x-gzip', 'gzip'],
        ['deflate', 'deflate'],
        ['*', 'br'],
      ]) {
        const res = await echo(long, accept);
        assert.equal(res.status, 200);
        assert.equal(res.headers['content-encoding'], expected, accept);
        assert.match(String(res.headers.vary), /accept-encoding/);
        assert.equal(Number(res.headers['content-length']), res.raw.length);
        assert.ok(res.raw.length < 200, `${accept}: ${res.raw.length} bytes`);
        assert.deepEqual(res.body, { n: 1, name: long, limit: 5 });
        assert.equal(res.headers['cache-control'], 'no-store', 'the API headers stay');
      }
      for (const accept of ['identity', 'br;q=0, gzip;q=0, deflate;q=0', '']) {
        const plain = await echo(long, accept);
        assert.equal(plain.headers['content-encoding'], undefined, accept);
        assert.equal(plain.raw.length, Buffer.byteLength(plain.text));
      }
      const small = await echo('short', 'br');
      assert.equal(small.headers['content-encoding'], undefined);
      assert.deepEqual(small.body, { n: 1, name: 'short', limit: 5 });
      // a compressed request body is still read (POST routes keep @fastify/compress's decompression)
      const { gzipSync } = await import('node:zlib');
      const zipped = await t.client('POST', '/api/probe/echo/abc', {
        body: gzipSync(JSON.stringify({ n: 2, name: 'zipped' })),
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      });
      assert.equal(zipped.status, 200, zipped.text);
      assert.deepEqual(zipped.body, { n: 2, name: 'zipped', limit: 5 });
    });

    it('serves an OpenAPI 3.0 document that passes validation, with named schemas', async () => {
      const res = await t.client('GET', '/openapi/openapi.json');
      const doc = JSON.parse(res.text);
      assert.match(doc.openapi, /^3\.0\./);
      await SwaggerParser.validate(structuredClone(doc));
      const ratio = doc.paths['/api/probe/bounded'].get.parameters.find((p: { name: string }) => p.name === 'ratio');
      const { minimum, exclusiveMinimum, maximum, exclusiveMaximum } = ratio.schema;
      assert.deepEqual(
        { minimum, exclusiveMinimum, maximum, exclusiveMaximum },
        { minimum: 0, exclusiveMinimum: true, maximum: 1, exclusiveMaximum: true },
        'OpenAPI 3.0: a bound and a boolean',
      );
      assert.ok(doc.components.schemas.health);
      assert.ok(doc.components.schemas.error);
      const echo = doc.paths['/api/probe/echo/{id}'].post;
      assert.equal(echo.summary, 'Echo');
      assert.deepEqual(echo.tags, ['Probe']);
      assert.ok(echo.requestBody.content['application/edn']);
      assert.ok(echo.responses['400']);
      const ui = await t.client('GET', '/openapi', { headers: { accept: 'text/html' } });
      assert.equal(ui.status, 200);
      assert.match(ui.text, /swagger-ui/i);
      assert.doesNotMatch(ui.text, /https?:\/\/(?!127\.0\.0\.1)[a-z0-9.-]+\.(com|net|org)/i, 'no CDN');
    });

    it('serves static files, index.html with the CSRF field, and client routes', async () => {
      const file = await t.client('GET', '/hello.txt');
      assert.equal(file.text, 'static hello');
      const index = await t.client('GET', '/', { headers: { accept: 'text/html' } });
      assert.equal(index.status, 200);
      assert.match(index.text, /<input type="hidden" id="__anti-forgery-token" value="[A-Za-z0-9_-]{20,}">/);
      assert.match(String(index.headers['set-cookie']), /session=.*HttpOnly.*SameSite=Lax/i);
      const clientRoute = await t.client('GET', '/account', { headers: { accept: 'text/html' } });
      assert.equal(clientRoute.status, 200);
      assert.match(clientRoute.text, /__anti-forgery-token/);
      const missingAsset = await t.client('GET', '/missing.js', { headers: { accept: 'text/html' } });
      assert.equal(missingAsset.status, 404);
    });

    it('logs one api-call/response entry per response with the request context and redacted params', async () => {
      const res = await t.client('POST', '/api/probe/echo/abc?limit=2', { body: { n: 3, name: 'ctx', password: 'hunter2-secret' } });
      assert.equal(res.status, 200);
      const entries = await t.logEntries();
      const response = entries.filter((e) => e.id === 'api-call/response' && e.ctx.uri === '/api/probe/echo/abc').at(-1);
      assert.ok(response);
      assert.equal(response.msg, 'POST /api/probe/echo/abc => 200');
      assert.equal(response.level, 'info');
      assert.equal(response.ns, 'saas.http');
      assert.equal(response.data.status, 200);
      assert.equal(typeof response.data['saas.logging/ms'], 'number');
      assert.match(String(response.ctx['req-id']), /^[0-9a-f-]{36}$/);
      assert.equal(response.ctx['request-method'], 'post');
      assert.equal(response.ctx['server-name'], '127.0.0.1');
      assert.deepEqual(response.ctx.params, { id: 'abc', limit: '2', n: 3, name: 'ctx', password: '[REDACTED]' });
      assert.ok(!(await t.logText()).includes('hunter2-secret'));
    });
  });
}
