/**
 * The pages the server renders carry a Content Security Policy without 'unsafe-inline' for
 * scripts and styles (issue 31): the client's page, the dev mailbox, the API docs (Swagger UI);
 * the client's built page holds no inline script or style for such a policy to refuse (the
 * browser tests fail on any console error, which is where a refused one would show).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PUBLIC_DIR } from '../support/browser.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

/** `directive -> sources` of a policy; a missing directive falls back to default-src. */
function sources(policy: string, directive: string): string[] {
  const parts = new Map(
    policy
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter((d) => d[0])
      .map(([name, ...rest]) => [name, rest]),
  );
  return parts.get(directive) ?? parts.get('default-src') ?? [];
}

describe('Content Security Policy of the rendered pages', () => {
  let t: TestSystem;
  before(async () => {
    // dev: the mailbox is served only there
    t = await startSystem(testDatabases()[0], { APP_ENV: 'dev', LOG_CONSOLE: 'off', PUBLIC_DIR });
  });
  after(() => t?.stop());

  const html = { accept: 'text/html' };

  // the docs page's policy is @fastify/swagger-ui's (staticCSP: hashes of its inline parts; it also allows https: stylesheets)
  for (const [name, path, ours] of [
    ["the client's page", '/', true],
    ['a client route', '/orgs', true],
    ['the dev mailbox', '/dev/mailbox', true],
    ['the API docs', '/openapi', false],
  ] as const) {
    it(`${name} (${path}): scripts and styles without 'unsafe-inline'`, async () => {
      const res = await t.client('GET', path, { headers: html });
      assert.equal(res.status, 200, res.text.slice(0, 200));
      const policy = String(res.headers['content-security-policy'] ?? '');
      assert.ok(policy, 'a policy is sent');
      for (const directive of ['script-src', 'style-src']) {
        const list = sources(policy, directive);
        assert.ok(list.length > 0, `${directive} is restricted`);
        assert.ok(!list.includes("'unsafe-inline'"), `${directive} of ${path}: ${list.join(' ')}`);
        assert.ok(!list.includes('*'), `${directive} of ${path}: ${list.join(' ')}`);
        // ours: this server's files, nothing, or an inline block named by its hash
        if (ours)
          assert.ok(
            list.every((s) => s === "'self'" || s === "'none'" || /^'sha256-[A-Za-z0-9+/=]+'$/.test(s)),
            `${directive} of ${path}: ${list.join(' ')}`,
          );
      }
    });
  }

  it('the built client page has no inline script, style element or style attribute', {
    skip: !existsSync(join(PUBLIC_DIR, 'index.html')) && 'the client is not built',
  }, () => {
    const page = readFileSync(join(PUBLIC_DIR, 'index.html'), 'utf8');
    assert.doesNotMatch(page, /<script(?![^>]*\bsrc=)[^>]*>/i, 'every script has a src');
    assert.doesNotMatch(page, /<style\b/i);
    assert.doesNotMatch(page, /\sstyle=/i);
  });
});
