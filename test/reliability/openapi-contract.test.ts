/**
 * The OpenAPI document as a contract: every operation is called with inputs generated from its
 * own request schema, valid and made invalid, and every answer must have a documented status
 * and match the documented schema for it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { logIn, signUp } from '../support/auth.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

type Schema = Record<string, any>;
const SEED = Number(process.env.FC_SEED ?? Date.now() % 1_000_000);

/** Values for the subset of JSON Schema the API uses. */
function arbitraryFor(schema: Schema, components: Record<string, Schema>): fc.Arbitrary<unknown> {
  if (schema.$ref) return arbitraryFor(components[String(schema.$ref).split('/').pop()!], components);
  const base = ((): fc.Arbitrary<unknown> => {
    if (schema.enum) return fc.constantFrom(...schema.enum);
    if (schema.anyOf ?? schema.oneOf) return fc.oneof(...(schema.anyOf ?? schema.oneOf).map((s: Schema) => arbitraryFor(s, components)));
    switch (schema.type) {
      case 'object': {
        const props = Object.entries(schema.properties ?? {}) as Array<[string, Schema]>;
        const required = new Set(schema.required ?? []);
        return fc.record(Object.fromEntries(props.map(([k, s]) => [k, arbitraryFor(s, components)])), {
          requiredKeys: props.map(([k]) => k).filter((k) => required.has(k)),
        });
      }
      case 'array':
        return fc.array(arbitraryFor(schema.items ?? {}, components), { maxLength: 3 });
      case 'integer':
        return fc.integer({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1000 });
      case 'number':
        return fc.double({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1000, noNaN: true });
      case 'boolean':
        return fc.boolean();
      case 'string': {
        if (schema.format === 'email') return fc.emailAddress().filter((e) => e.length <= (schema.maxLength ?? 254));
        if (schema.format === 'uuid') return fc.uuid();
        if (schema.format === 'date-time') return fc.date({ noInvalidDate: true, min: new Date(0) }).map((d) => d.toISOString());
        return fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 40, 40) });
      }
      default:
        return fc.jsonValue();
    }
  })();
  return schema.nullable ? fc.oneof(base, fc.constant(null)) : base;
}

/** Breaks a valid object: drops a required field, or gives a field a value of the wrong type. */
function invalidate(value: unknown, schema: Schema, components: Record<string, Schema>, pick: number): unknown {
  const s = schema.$ref ? components[String(schema.$ref).split('/').pop()!] : schema;
  if (s.type !== 'object' || value === null || typeof value !== 'object') return 42;
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  const required: string[] = s.required ?? [];
  if (required.length && pick % 2 === 0) delete copy[required[pick % required.length]];
  else {
    const keys = Object.keys(s.properties ?? {});
    if (keys.length === 0) return 'not an object';
    const key = keys[pick % keys.length];
    copy[key] = s.properties[key].type === 'string' ? { nested: true } : 'a string where it does not belong';
  }
  return copy;
}

describe(`OpenAPI contract (seed ${SEED})`, () => {
  let t: TestSystem;
  let doc: Schema;
  let token: string;
  let ajv: Ajv;

  before(async () => {
    t = await startSystem(testDatabases()[0], { LOGIN_LIMIT_EMAIL: '0', LOGIN_LIMIT_ADDRESS: '0', STRIPE_WEBHOOK_SECRET: 'whsec_contract' });
    doc = JSON.parse((await t.client('GET', '/openapi/openapi.json')).text);
    const { email } = await signUp(t.client);
    token = (await logIn(t.client, email)).body['access-token'];
    ajv = new Ajv({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ $id: 'openapi', components: doc.components });
  });
  after(async () => t?.stop());

  const responseValidator = (schema: Schema): ValidateFunction =>
    ajv.compile(JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"openapi#/components/')));

  it('every operation answers valid and invalid inputs with documented statuses and bodies', async () => {
    console.log(`openapi contract seed ${SEED}`);
    let calls = 0;
    for (const [path, operations] of Object.entries(doc.paths as Record<string, Record<string, Schema>>)) {
      for (const [method, op] of Object.entries(operations)) {
        const bodySchema: Schema | undefined = op.requestBody?.content?.['application/json']?.schema;
        const pathParams = (op.parameters ?? []).filter((p: Schema) => p.in === 'path');
        const samples = fc.sample(fc.tuple(bodySchema ? arbitraryFor(bodySchema, doc.components.schemas) : fc.constant(undefined), fc.nat()), {
          seed: SEED,
          numRuns: 25,
        });
        for (const [i, [body, pick]] of samples.entries()) {
          const valid = i % 2 === 0;
          const payload = bodySchema && !valid ? invalidate(body, bodySchema, doc.components.schemas, pick) : body;
          const url = path.replace(/\{(\w+)\}/g, () => (pathParams.length ? 'stripe' : ''));
          const headers: Record<string, string> = op.security ? { authorization: `Bearer ${token}` } : {};
          const res = await t.client(method.toUpperCase(), url, { headers, body: method === 'get' ? undefined : payload });
          calls++;
          const documented = op.responses[String(res.status)];
          assert.ok(documented, `${method.toUpperCase()} ${path} answered ${res.status}, which is not documented (${res.text.slice(0, 200)})`);
          const schema = documented.content?.['application/json']?.schema;
          if (schema && res.status !== 204) {
            const validate = responseValidator(schema);
            assert.ok(validate(res.body), `${method.toUpperCase()} ${path} ${res.status}: ${JSON.stringify(validate.errors)} in ${res.text.slice(0, 200)}`);
          }
          if (bodySchema && !valid)
            assert.ok(res.status >= 400 && res.status < 500, `${method.toUpperCase()} ${path} accepted an invalid body: ${JSON.stringify(payload)}`);
        }
      }
    }
    assert.ok(calls > 100);
  });
});
