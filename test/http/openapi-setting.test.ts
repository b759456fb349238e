/** OPENAPI_DOCS: the document and Swagger UI are served by default and can be turned off. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

describe('OPENAPI_DOCS', () => {
  it('is on by default, takes on and off, and refuses anything else naming the variable', () => {
    assert.equal(loadConfig({}).openapiDocs, true);
    assert.equal(loadConfig({ OPENAPI_DOCS: 'off' }).openapiDocs, false);
    assert.throws(
      () => loadConfig({ OPENAPI_DOCS: 'no' }),
      (err: unknown) => err instanceof ConfigError && err.variable === 'OPENAPI_DOCS',
    );
  });

  describe('off', () => {
    let t: TestSystem;
    before(async () => {
      t = await startSystem(testDatabases()[0], { OPENAPI_DOCS: 'off' });
    });
    after(async () => t?.stop());

    it('answers the document and the UI with 404 in the error shape, and the API still works', async () => {
      for (const path of ['/openapi/openapi.json', '/openapi', '/openapi/static/index.html']) {
        const res = await t.client('GET', path);
        assert.equal(res.status, 404, path);
        assert.equal(res.body?.type, 'not-found', path);
      }
      const html = await t.client('GET', '/openapi', { headers: { accept: 'text/html' } });
      assert.equal(html.status, 404, 'not served as a client route either');
      assert.equal((await t.client('GET', '/api/health')).status, 200);
    });
  });
});
