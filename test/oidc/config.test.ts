/** OIDC_* configuration: presets, and every bad value refused at start-up naming its variable. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '../../src/config.js';
import { oidcModule } from '../../src/oidc/module.js';
import { loadAll, settingsOf } from '../support/settings.js';
import { safeReturnTo } from '../../src/oidc/routes.js';

const refused = (env: Record<string, string>, variable: string, message: RegExp) =>
  assert.throws(
    () => loadAll(env),
    (err: unknown) => err instanceof ConfigError && err.variable === variable && message.test(err.message),
    `${variable} ${message}`,
  );

const creds = (name: string) => ({ [`OIDC_${name}_CLIENT_ID`]: 'id', [`OIDC_${name}_CLIENT_SECRET`]: 'secret' });

describe('OIDC_PROVIDERS', () => {
  it('is empty when unset', () => {
    assert.deepEqual(settingsOf(oidcModule, {}), []);
  });

  it('presets google (OpenID Connect) and github (OAuth 2), and takes any other issuer', () => {
    const providers = settingsOf(oidcModule, {
      OIDC_PROVIDERS: 'Google, github,my-idp',
      ...creds('GOOGLE'),
      ...creds('GITHUB'),
      ...creds('MY_IDP'),
      OIDC_MY_IDP_ISSUER: 'https://login.example.com/realms/main/',
      OIDC_MY_IDP_LABEL: 'Example SSO',
    });
    assert.deepEqual(
      providers.map((p) => [p.id, p.kind, p.issuer, p.label]),
      [
        ['google', 'oidc', 'https://accounts.google.com', 'Google'],
        ['github', 'github', 'https://github.com', 'GitHub'],
        ['my-idp', 'oidc', 'https://login.example.com/realms/main', 'Example SSO'],
      ],
    );
  });

  it('refuses a provider without its issuer, client id or secret, naming the variable', () => {
    refused({ OIDC_PROVIDERS: 'acme', ...creds('ACME') }, 'OIDC_ACME_ISSUER', /required.*"acme"/);
    refused({ OIDC_PROVIDERS: 'google', OIDC_GOOGLE_CLIENT_SECRET: 's' }, 'OIDC_GOOGLE_CLIENT_ID', /required/);
    refused({ OIDC_PROVIDERS: 'google', OIDC_GOOGLE_CLIENT_ID: 'i' }, 'OIDC_GOOGLE_CLIENT_SECRET', /required/);
  });

  it('refuses bad names and a name twice', () => {
    for (const name of ['1abc', 'a_b', 'a.b', 'x'.repeat(33)]) refused({ OIDC_PROVIDERS: name }, 'OIDC_PROVIDERS', /lower-case letters/);
    refused({ OIDC_PROVIDERS: 'google,google', ...creds('GOOGLE') }, 'OIDC_PROVIDERS', /twice/);
  });

  it('takes an https issuer, or http only on a loopback address', () => {
    const issuer = (value: string) => settingsOf(oidcModule, { OIDC_PROVIDERS: 'acme', ...creds('ACME'), OIDC_ACME_ISSUER: value })[0].issuer;
    assert.equal(issuer('http://127.0.0.1:9000'), 'http://127.0.0.1:9000');
    assert.equal(issuer('http://localhost:9000/op'), 'http://localhost:9000/op');
    for (const bad of ['http://idp.example.com', 'ftp://idp.example.com', 'idp.example.com', 'https://idp.example.com/?x=1', 'https://u:p@idp.example.com']) {
      refused({ OIDC_PROVIDERS: 'acme', ...creds('ACME'), OIDC_ACME_ISSUER: bad }, 'OIDC_ACME_ISSUER', /https|no query/);
    }
  });
});

describe('return-to', () => {
  const app = 'https://app.example.com';
  it('keeps a path of the app, with its query and fragment', () => {
    assert.equal(safeReturnTo('/orgs/1?tab=members#x', app), '/orgs/1?tab=members#x');
    assert.equal(safeReturnTo('/a/../b', app), '/b');
  });
  it('refuses anything that could leave the app', () => {
    for (const bad of ['//evil.example', '/\\evil.example', 'https://evil.example', 'javascript:alert(1)', 'orgs', '/\t/evil.example', `/${'a'.repeat(600)}`]) {
      assert.equal(safeReturnTo(bad, app), undefined, bad);
    }
  });
});
