/**
 * Property-based fuzzing of every route in the OpenAPI document, in JSON, EDN, Transit and
 * form encoding, with hostile bodies, headers and query strings. Every answer must be a
 * non-5xx whose error body has the one shape, in the negotiated format; the process stays up.
 * Seeded: the seed is printed, FC_SEED=<seed> replays a run.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { edn, json, transitJson } from '../../src/shared/codecs.js';
import { negotiateResponseFormat } from '../../src/http/formats.js';
import { logIn, signUp } from '../support/auth.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

const SEED = Number(process.env.FC_SEED ?? Date.now() % 1_000_000);
const RUNS = Number(process.env.FUZZ_RUNS ?? 1500);

const hostileStrings = fc.constantFrom(
  '',
  ' ',
  'null',
  '[]',
  '{}',
  '"',
  '{"a":',
  '["^ ","~:a"',
  '{:a',
  '#inst "x"',
  '#uuid 5',
  '##NaN',
  '\\',
  '\u0000',
  '{"__proto__":{"x":1}}',
  '{"constructor":{"prototype":{"x":1}}}',
  '{:__proto__ {:x 1}}',
  '["^ ","~:__proto__",["^ "]]',
  '{"a":1,"a":2}',
  '{"n":1e400}',
  '{"n":-1e400}',
  '{"n":123456789012345678901234567890}',
  '{"email":"a@b.c","password":123}',
  '['.repeat(5000) + ']'.repeat(5000),
  '{"a":'.repeat(3000) + '1' + '}'.repeat(3000),
  '('.repeat(4000),
  '["~#set",[1,2]]',
  '["~#cmap",[["^ "],1]]',
  '["~#unknown-tag","x"]',
  '["^0"]',
  '"~:kw"',
  ':kw',
  'nil',
  'true',
  '12',
  'x'.repeat(200_000),
  'query%2Fkind=account%2Fme',
  'email=a%40b.c&password=',
  'a[b][c]=1&a[b][c]=2',
  '%%%',
  'a=%E0%A4%A',
);

const valueArb = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string(),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(
      fc.oneof(
        fc.string({ maxLength: 8 }),
        fc.constantFrom('email', 'password', 'name', 'query/kind', 'limit', 'cursor', 'refresh-token', 'confirm-password', '__proto__'),
      ),
      tie('value'),
      { maxKeys: 5, noNullPrototype: true },
    ),
  ),
})).value;

const bodyArb = fc.oneof(
  { arbitrary: valueArb.map((v) => ({ kind: 'value' as const, v })), weight: 4 },
  { arbitrary: hostileStrings.map((s) => ({ kind: 'raw' as const, text: s })), weight: 3 },
  { arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => ({ kind: 'bytes' as const, b })), weight: 1 },
  { arbitrary: fc.constant({ kind: 'none' as const }), weight: 1 },
);

const contentTypeArb = fc.constantFrom(
  'application/json',
  'application/edn',
  'application/transit+json',
  'application/x-www-form-urlencoded',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'APPLICATION/JSON',
  'application/json, text/html',
  'text/plain',
  'application/xml',
  'multipart/form-data; boundary=x',
  '',
  'application/edn;q=0',
  'garbage/',
  '*/*',
);

const acceptArb = fc.constantFrom(
  undefined,
  '*/*',
  'application/json',
  'application/edn',
  'application/transit+json',
  'text/html',
  'text/csv',
  'application/edn;q=0.1, application/transit+json;q=0.9',
  'application/json;q=0',
  ';;;',
  'application/*',
  'application/edn;q=x',
);

function encodeBody(
  body: fc.Arbitrary<unknown> extends never ? never : { kind: string; v?: unknown; text?: string; b?: Uint8Array },
  contentType: string,
): Buffer | undefined {
  switch (body.kind) {
    case 'none':
      return undefined;
    case 'raw':
      return Buffer.from(body.text!);
    case 'bytes':
      return Buffer.from(body.b!);
  }
  const mime = contentType.split(/[;,]/)[0].trim().toLowerCase();
  const v = body.v;
  if (mime === 'application/edn') return Buffer.from(edn.encode(v));
  if (mime === 'application/transit+json') return Buffer.from(transitJson.encode(v));
  if (mime === 'application/x-www-form-urlencoded' && v !== null && typeof v === 'object' && !Array.isArray(v)) {
    return Buffer.from(new URLSearchParams(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, String(x)])).toString());
  }
  return Buffer.from(json.encode(v) ?? 'null');
}

describe(`fuzzing every route (seed ${SEED}, ${RUNS} runs)`, () => {
  let t: TestSystem;
  let routes: Array<{ method: string; path: string }>;
  let token: string;
  before(async () => {
    t = await startSystem(testDatabases()[0], {
      STRIPE_WEBHOOK_SECRET: 'whsec_fuzz',
      LOGIN_LIMIT_EMAIL: '0',
      LOGIN_LIMIT_ADDRESS: '0',
      BODY_LIMIT: String(256 * 1024),
    });
    const doc = JSON.parse((await t.client('GET', '/openapi/openapi.json')).text) as { paths: Record<string, Record<string, unknown>> };
    routes = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => ({ method: method.toUpperCase(), path })));
    const { email } = await signUp(t.client);
    token = (await logIn(t.client, email)).body['access-token'];
  });
  after(async () => t?.stop());

  it('answers every hostile request with a well-formed non-5xx', async () => {
    console.log(`fuzz seed ${SEED} (replay with FC_SEED=${SEED})`);
    const pathSegment = fc.oneof(
      fc.constantFrom('stripe', 'paypal', '..', '%2e%2e', '%00', 'x'.repeat(300)),
      fc.string({ maxLength: 10 }).map(encodeURIComponent),
    );
    const queryArb = fc.oneof(
      fc.constant(''),
      fc.dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 10 }), { maxKeys: 3 }).map((q) => `?${new URLSearchParams(q)}`),
      fc.constantFrom('?a=1&a=2', '?%zz', '?limit=-1', '?__proto__[x]=1'),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 1000 }),
        bodyArb,
        contentTypeArb,
        acceptArb,
        pathSegment,
        queryArb,
        fc.constantFrom('none', 'valid', 'garbage'),
        async (routeIndex, body, contentType, accept, segment, query, auth) => {
          try {
            await checkOne(routeIndex, body, contentType, accept, segment, query, auth);
          } catch (err) {
            // the runner shows only the counterexample: say what went wrong too
            console.log(`fuzz failure: ${(err as Error).message.slice(0, 500)}`);
            throw err;
          }
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
    assert.equal((await t.client('GET', '/api/health')).status, 200, 'the process is still up');
  });

  async function checkOne(
    routeIndex: number,
    body: Parameters<typeof encodeBody>[0],
    contentType: string,
    accept: string | undefined,
    segment: string,
    query: string,
    auth: string,
  ): Promise<void> {
    {
      const route = routes[routeIndex % routes.length];
      const path = route.path.replace(/\{[^}]+\}/g, segment) + query;
      const headers: Record<string, string> = {};
      if (accept !== undefined) headers.accept = accept;
      if (auth === 'valid') headers.authorization = `Bearer ${token}`;
      if (auth === 'garbage') headers.authorization = 'Bearer x.y.z';
      const payload = route.method === 'GET' ? undefined : encodeBody(body, contentType);
      if (payload !== undefined && contentType) headers['content-type'] = contentType;
      const res = await t.client(route.method, path, { headers, body: payload }).catch((err: Error) => {
        throw new Error(`${route.method} ${path.slice(0, 80)}: no answer (${err.message})`);
      });
      assert.ok(res.status < 500, `${route.method} ${path} -> ${res.status} ${res.text.slice(0, 300)}`);
      if (res.status >= 400 && path.startsWith('/scim/') && String(res.headers['content-type']).startsWith('application/scim+json')) {
        // SCIM's own error document (RFC 7644 §3.12), JSON whatever was asked: its answers are the directory's protocol
        const decoded = JSON.parse(res.text) as { schemas?: unknown; status?: unknown; detail?: unknown };
        assert.deepEqual(decoded.schemas, ['urn:ietf:params:scim:api:messages:2.0:Error'], `${route.method} ${path}: ${res.text.slice(0, 200)}`);
        assert.equal(decoded.status, String(res.status));
        assert.equal(typeof decoded.detail, 'string');
      } else if (res.status >= 400) {
        const expected = negotiateResponseFormat(accept);
        assert.equal(res.headers['content-type'], expected.mime, `${route.method} ${path}: error in ${res.headers['content-type']}`);
        let decoded: { type?: unknown; message?: unknown };
        try {
          decoded = expected.decode(res.text) as typeof decoded;
        } catch (err) {
          throw new Error(`${route.method} ${path.slice(0, 80)} -> ${res.status}: undecodable ${res.text.slice(0, 300)} (${(err as Error).message})`);
        }
        assert.equal(typeof decoded.type, 'string');
        assert.equal(typeof decoded.message, 'string');
      }
    }
  }
});
