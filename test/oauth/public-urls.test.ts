/**
 * The discovery documents name URLs on APP_URL only, whatever Host, X-Forwarded-Host or
 * X-Forwarded-Proto the request carries (docs/oauth.md, "Settings"): a request naming another host
 * must not get (nor leave in a shared cache) endpoints there. Behind a trusted proxy
 * (TRUST_PROXY), so the forwarded headers would count if anything read them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../support/net.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

const DOCUMENTS = [
  '/oauth/.well-known/openid-configuration',
  '/.well-known/oauth-authorization-server',
  '/.well-known/oauth-authorization-server/oauth',
  '/.well-known/oauth-protected-resource/api',
  '/.well-known/oauth-protected-resource',
  '/.well-known/oauth-protected-resource/mcp',
];

const FOREIGN: Record<string, string>[] = [
  { host: 'evil.example' },
  { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' },
  { host: 'localhost', 'x-forwarded-host': 'evil.example:8443' },
];

/** Every string in a JSON document that is an absolute URL. */
function urlsIn(value: unknown): string[] {
  if (typeof value === 'string') return /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? [value] : [];
  if (Array.isArray(value)) return value.flatMap(urlsIn);
  if (value && typeof value === 'object') return Object.values(value).flatMap(urlsIn);
  return [];
}

describe('OAuth URLs under a foreign Host', () => {
  let t: TestSystem;

  before(async () => {
    const port = await freePort();
    t = await startSystem(testDatabases()[0], { PORT: String(port), APP_URL: `http://127.0.0.1:${port}`, TRUST_PROXY: '1' });
  });
  after(() => t?.stop());

  it('publishes every discovery document with URLs on APP_URL only', async () => {
    for (const path of DOCUMENTS)
      for (const headers of FOREIGN) {
        const res = await t.client('GET', path, { headers });
        assert.equal(res.status, 200, `${path} ${res.text}`);
        const urls = urlsIn(res.body);
        assert.ok(urls.length > 0, path);
        for (const url of urls) assert.ok(url.startsWith(`${t.url}/`), `${path} with ${JSON.stringify(headers)} names ${url}`);
      }
  });
});
