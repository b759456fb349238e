/**
 * Issue 14, item 7: no secret reaches the log or an error body, whatever the key is called and
 * however broken the body is. Redaction is by pattern over the normalised key; decoder errors
 * say where the input failed, never what it was.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRedactor, REDACTED } from '../../src/logging/redact.js';
import { edn, json, transitJson } from '../../src/http/formats.js';
import { probeRoutes } from '../support/probes.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

describe('redaction by pattern', () => {
  const redact = createRedactor(['internal-ref']);

  it('redacts every key that contains a sensitive word, in any spelling', () => {
    const keys = [
      'password',
      'pass word',
      'new-password',
      'current-password',
      'confirm_password',
      'passwd',
      'user[password]',
      ':user/password',
      'PassPhrase',
      'client_secret',
      'x-api-key',
      'apiKey',
      'private_key',
      'privateKey',
      'access-token',
      'refreshToken',
      'Authorization',
      'proxy-authorization',
      'cookie',
      'set-cookie',
      'stripe-signature',
      'x-csrf-token',
      'csrf',
      'ｐａｓｓｗｏｒｄ',
      'user[internal_ref]',
      // two-factor: codes, backup codes, the otpauth:// URI (it carries the secret), the mfa-token
      'code',
      'Code',
      ':code',
      'otp',
      'backup-code',
      'backup-codes',
      'backupCode',
      'otpauth-url',
      'totp-secret',
      'mfa-token',
    ];
    const out = redact(Object.fromEntries(keys.map((k) => [k, `value of ${k}`]))) as Record<string, unknown>;
    for (const key of keys) assert.equal(out[key], REDACTED, key);
  });

  it('keeps harmless keys, and extra keys (LOG_REDACT_KEYS) match as substrings too', () => {
    const out = redact({
      email: 'a@example.com',
      name: 'n',
      id: 1,
      'query/kind': 'account/me',
      'my-internal-ref-2': 'x',
      'status-code': 200,
      footprint: 'f',
    }) as Record<string, unknown>;
    assert.deepEqual(out, {
      email: 'a@example.com',
      name: 'n',
      id: 1,
      'query/kind': 'account/me',
      'my-internal-ref-2': REDACTED,
      'status-code': 200,
      footprint: 'f',
    });
    // an extra that normalises to nothing must not redact everything
    assert.deepEqual(createRedactor(['--'])({ email: 'e' }), { email: 'e' });
  });

  it('keeps cookie names and replaces every cookie value', () => {
    const out = redact({ cookies: { session: 's3cret', 'refresh-token': 'r3fresh' }, headers: { cookie: 'session=s3cret' } });
    assert.deepEqual(out, { cookies: { session: REDACTED, 'refresh-token': REDACTED }, headers: { cookie: REDACTED } });
  });
});

const db = testDatabases()[0];
for (const [profile, env] of [
  ['dev at debug', { APP_ENV: 'dev', LOG_LEVELS: 'saas.*=debug', LOG_CONSOLE: 'off' }],
  ['prod', { APP_ENV: 'prod', LOG_CONSOLE: 'off', MAIL_URL: 'smtp://127.0.0.1:9' }],
] as const) {
  describe(`no secret in the log or an error body (${profile})`, () => {
    let t: TestSystem;
    before(async () => {
      t = await startSystem(db, env, { extraRouteGroups: [probeRoutes()] });
    });
    after(async () => t?.stop());

    it('malformed bodies in every format are refused without quoting them', async () => {
      const secret = (n: number) => `Hunter2Zq${n}x`;
      const broken: [string, string][] = [
        [json.mime, `password=${secret(1)}`],
        [json.mime, `{"password": ${secret(2)}}`],
        [json.mime, `{"password": "${secret(3)}", ${secret(3)}`],
        [edn.mime, `{:password 1${secret(4)}}`],
        [edn.mime, `{:password \\${secret(5)}}`],
        [edn.mime, `{:password ##${secret(6)}}`],
        [transitJson.mime, `["^ ","~:password",${secret(7)}]`],
        [transitJson.mime, `["^ ","~:password","~z${secret(8)}"]`],
        [transitJson.mime, `["^ ","~:password","^${secret(9).slice(0, 2)}"]`],
      ];
      for (const [contentType, body] of broken) {
        const res = await t.client('POST', '/api/probe/anything', { headers: { 'content-type': contentType }, body });
        assert.equal(res.status, 400, res.text);
        assert.equal(res.body.type, 'malformed-body');
        assert.match(res.body.message, /^Malformed (JSON|EDN|Transit)( at line \d+, column \d+)?: [a-z]/);
        assert.ok(!res.text.includes('Hunter2') && !res.text.includes('Zq'), `${body} -> ${res.text}`);
      }
      const log = await t.logText();
      assert.ok(!log.includes('Hunter2') && !log.includes('Zq'), 'a malformed body was quoted in the log');
      if (profile === 'dev at debug') assert.ok(log.includes('http/client-error'), 'the debug entry for the 400s was written');
    });

    it('secrets under near-names, in forms, headers and cookies are redacted', async () => {
      const secrets: string[] = [];
      const s = (where: string) => {
        const v = `S3CRET-${where}-${secrets.length}`;
        secrets.push(v);
        return v;
      };
      const body = {
        'pass word': s('a'),
        'new-password': s('b'),
        'current-password': s('c'),
        passwd: s('d'),
        'api-key': s('e'),
        nested: { 'private-key': s('f') },
      };
      for (const format of [json, edn, transitJson]) {
        const res = await t.client('POST', '/api/probe/anything', { format, body });
        assert.equal(res.status, 200, res.text);
      }
      const form = `user[password]=${s('form')}&user[new_password]=${s('form')}&csrf_token=${s('form')}&name=visible`;
      const res = await t.client('POST', `/api/probe/anything?access_token=${s('query')}`, {
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': s('header'), 'proxy-authorization': `Basic ${s('header')}` },
        body: form,
      });
      assert.equal(res.status, 200, res.text);
      // cookies on a safe request (an unsafe one would stop at the CSRF check)
      const withCookies = await t.client('GET', `/api/probe/anything?user[password]=${s('query')}`, {
        headers: { cookie: `session=${s('cookie')}; refresh-token=${s('cookie')}` },
      });
      assert.equal(withCookies.status, 200, withCookies.text);
      const log = await t.logText();
      for (const secret of secrets) assert.ok(!log.includes(secret), `found ${secret}`);
      assert.ok(log.includes('visible'), 'harmless form fields are still logged');
      if (profile === 'dev at debug') {
        const request = (await t.logEntries()).filter((e) => e.id === 'api-call/request').at(-1)!;
        assert.deepEqual(request.data.cookies, { session: REDACTED, 'refresh-token': REDACTED });
      }
    });
  });
}
