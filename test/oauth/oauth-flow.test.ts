/**
 * The OAuth 2.1 / OpenID Connect provider against the running server, with `openid-client` as the
 * relying party (docs/oauth.md): discovery, an app of an organization, code + PKCE through the
 * consent page's API, the ID token verified against the JWKS, the API with the token (scoped,
 * unscoped, re-authentication routes), UserInfo for a request of OpenID scopes only, refresh
 * rotation and reuse, the protocol's errors, consent remembered, connected apps revoked, two-factor
 * before consent, nothing secret in the log; and the signing keys: the JWKS, EdDSA access tokens,
 * an HS256 token from before the upgrade, rotation while tokens are alive. One system on PGlite
 * (storage behaviour is the adapter's and is the same SQL on PostgreSQL: the two-instance test is
 * in connected-apps.test.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomUUID } from 'node:crypto';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import { sql } from 'kysely';
import { authModule, signingKeyBox, type AuthServices } from '../../src/auth/module.js';
import { rotateIfDue } from '../../src/auth/signing-key-rotation.js';
import * as client from 'openid-client';
import { logIn, PASSWORD, signUp, signUpVerified } from '../support/auth.js';
import { awayFromStepEdge, totpCode } from '../support/totp.js';
import { freePort } from '../support/net.js';
import { startSystem, TEST_JWT_SECRET, testDatabases, type TestSystem } from '../support/system.js';
import { authorize, bearer, createApp, interactionCookie, newBrowser, REDIRECT } from './support.js';

describe('OAuth provider on pglite', () => {
  let t: TestSystem;
  let issuer: URL;
  let owner: { id: string; email: string; token: string; orgId: string };
  let app: { 'client-id': string; 'client-secret'?: string; id: string };
  let config: client.Configuration;
  /** every secret the tests saw: none may be in the log */
  const secrets: string[] = [];
  /** the JWKS's algorithms before the provider's first request (its ID-token keys are made then) */
  let algsBeforeProvider: string[] = [];

  before(async () => {
    const port = await freePort();
    t = await startSystem(testDatabases()[0], { PORT: String(port), APP_URL: `http://127.0.0.1:${port}` });
    issuer = new URL(`${t.url}/oauth`);
    const account = await signUpVerified(t);
    const token = (await logIn(t.client, account.email)).body['access-token'] as string;
    const org = await t.client('POST', '/api/orgs', { headers: bearer(token), body: { name: 'Acme' } });
    assert.equal(org.status, 201, org.text);
    owner = { id: account.id, email: account.email, token, orgId: org.body.id };
    app = await createApp(t, owner.token, owner.orgId, {
      confidential: true,
      scopes: ['openid', 'email', 'profile', 'offline_access', 'account:read', 'orgs:read'],
    });
    algsBeforeProvider = (await t.client('GET', '/.well-known/jwks.json')).body.keys.map((k: { alg: string }) => k.alg);
    config = await client.discovery(issuer, app['client-id'], { redirect_uris: [REDIRECT] }, client.ClientSecretBasic(app['client-secret']), {
      execute: [client.allowInsecureRequests],
    });
  });
  after(() => t?.stop());

  it('serves its metadata: discovery, RFC 8414 and RFC 9728, with code, S256 and the JWKS', async () => {
    const meta = config.serverMetadata();
    assert.equal(meta.issuer, issuer.href);
    assert.deepEqual(meta.response_types_supported, ['code']);
    assert.deepEqual(meta.code_challenge_methods_supported, ['S256']);
    assert.equal(meta.registration_endpoint, undefined, 'no dynamic registration by default');
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/oauth-authorization-server/oauth']) {
      const res = await t.client('GET', path);
      assert.equal(res.status, 200, path);
      assert.equal(res.body.issuer, issuer.href);
      assert.equal(res.body.token_endpoint, meta.token_endpoint);
    }
    const resource = await t.client('GET', '/.well-known/oauth-protected-resource/api');
    assert.equal(resource.status, 200);
    assert.equal(resource.body.resource, `${t.url}/api`);
    assert.deepEqual(resource.body.authorization_servers, [issuer.href.replace(/\/$/, '')]);
    const jwks = (await t.client('GET', new URL(meta.jwks_uri!).pathname)).body.keys.map((k: { kid: string }) => k.kid).sort();
    const ours = (await t.client('GET', '/.well-known/jwks.json')).body.keys.map((k: { kid: string }) => k.kid).sort();
    assert.deepEqual(jwks, ours);
  });

  it('code + PKCE with consent: ID token verified by the JWKS, access token on scoped routes only, refresh rotation and reuse', async () => {
    const browser = newBrowser();
    const result = await authorize(t, config, browser, owner.token, { scope: 'openid email profile offline_access account:read', prompt: 'consent' });
    assert.equal(result.interaction.client.organization.name, 'Acme');
    assert.equal(result.interaction['consent-required'], true);
    const tokens = result.tokens;
    secrets.push(result.code, result.verifier, tokens.access_token, tokens.refresh_token!, tokens.id_token!, app['client-secret']!);
    // the ID token, verified as a third party does
    const jwks = createRemoteJWKSet(new URL(`${t.url}/.well-known/jwks.json`));
    const { payload: id } = await jwtVerify(tokens.id_token!, jwks, { issuer: issuer.href.replace(/\/$/, ''), audience: app['client-id'] });
    assert.equal(id.sub, owner.id);
    assert.equal(id.email, owner.email);
    assert.equal(id.nonce, result.nonce);
    assert.equal(decodeProtectedHeader(tokens.id_token!).alg, 'RS256');
    // the access token: RFC 9068, EdDSA, our API as audience
    const header = decodeProtectedHeader(tokens.access_token);
    assert.equal(header.typ, 'at+jwt');
    assert.equal(header.alg, 'EdDSA');
    const { payload: at } = await jwtVerify(tokens.access_token, jwks, { audience: `${t.url}/api` });
    assert.equal(at.client_id, app['client-id']);
    assert.equal(at.scope, 'account:read');

    const me = await t.client('GET', '/api/account/me', { headers: bearer(tokens.access_token) });
    assert.equal(me.status, 200, me.text);
    const query = (kind: string) => t.client('POST', '/api/cqrs/query', { headers: bearer(tokens.access_token), body: { 'query/kind': kind } });
    assert.equal((await query('account/me')).status, 200);
    assert.equal((await query('orgs/list')).body.type, 'insufficient-scope');
    const unscoped = await t.client('GET', '/api/orgs', { headers: bearer(tokens.access_token) });
    assert.equal(unscoped.status, 403);
    assert.equal(unscoped.body.type, 'insufficient-scope');
    assert.deepEqual(unscoped.body.scopes, ['orgs:read']);
    assert.match(String(unscoped.headers['www-authenticate']), /insufficient_scope/);
    const elsewhere = await t.client('GET', '/api/account/sessions', { headers: bearer(tokens.access_token) });
    assert.equal(elsewhere.status, 403);
    assert.equal(elsewhere.body.type, 'insufficient-scope');
    const reauth = await t.client('POST', '/api/account/change-password', {
      headers: bearer(tokens.access_token),
      body: { password: 'x', 'new-password': 'y' },
    });
    assert.equal(reauth.status, 403);
    assert.equal(reauth.body.type, 'insufficient-scope');
    const consentApi = await t.client('GET', `/api/oauth/interactions/${result.uid}`, { headers: bearer(tokens.access_token) });
    assert.equal(consentApi.status, 403, 'an OAuth token never reaches the consent API');

    // refresh rotates; presenting the used one again revokes the grant
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    secrets.push(refreshed.refresh_token!, refreshed.access_token);
    assert.notEqual(refreshed.refresh_token, tokens.refresh_token);
    assert.equal((await t.client('GET', '/api/account/me', { headers: bearer(refreshed.access_token) })).status, 200);
    await assert.rejects(client.refreshTokenGrant(config, tokens.refresh_token!), (err: Error & { error?: string }) => err.error === 'invalid_grant');
    await assert.rejects(client.refreshTokenGrant(config, refreshed.refresh_token!), (err: Error & { error?: string }) => err.error === 'invalid_grant');
    const afterReuse = await t.client('GET', '/api/account/me', { headers: bearer(refreshed.access_token) });
    assert.equal(afterReuse.status, 401, 'the grant is revoked: its access tokens are refused');
    const audit = await t.system.database.db.selectFrom('audit_entry').select(['action', 'details']).where('account_id', '=', owner.id).execute();
    assert.ok(audit.some((e) => e.action === 'oauth-grant.created'));
    assert.ok(audit.some((e) => e.action === 'oauth-grant.revoked' && (e.details as { reason?: string }).reason === 'refresh-token-reuse'));
  });

  it("serves a plain OAuth request (an MCP client's: API scopes only, no openid, no nonce): an access token for the scoped routes, no ID token", async () => {
    const result = await authorize(t, config, newBrowser(), owner.token, { scope: 'orgs:read' });
    assert.equal(result.error, undefined);
    assert.deepEqual(result.interaction.scopes, ['orgs:read']);
    const tokens = result.tokens;
    secrets.push(result.code, result.verifier, tokens.access_token);
    assert.equal(tokens.id_token, undefined, 'no ID token without openid');
    assert.equal(tokens.refresh_token, undefined, 'no refresh token without offline_access');
    const orgs = await t.client('GET', '/api/orgs', { headers: bearer(tokens.access_token) });
    assert.equal(orgs.status, 200, orgs.text);
    const outside = await t.client('GET', '/api/account/me', { headers: bearer(tokens.access_token) });
    assert.equal(outside.status, 403);
    assert.deepEqual(outside.body.scopes, ['account:read']);
  });

  it("serves UserInfo to a request of OpenID scopes only (its refreshed token too); a token with API scopes is the API's, refused there", async () => {
    const userinfo = new URL(config.serverMetadata().userinfo_endpoint!).pathname;
    const openid = await authorize(t, config, newBrowser(), owner.token, { scope: 'openid email profile offline_access', prompt: 'consent' });
    const tokens = openid.tokens;
    secrets.push(openid.code, openid.verifier, tokens.access_token, tokens.refresh_token!);
    const me = await t.client('GET', userinfo, { headers: bearer(tokens.access_token) });
    assert.equal(me.status, 200, me.text);
    assert.equal(me.body.sub, owner.id);
    assert.equal(me.body.email, owner.email);
    assert.equal((await t.client('GET', '/api/account/me', { headers: bearer(tokens.access_token) })).status, 401, "not the API's token");
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    secrets.push(refreshed.access_token, refreshed.refresh_token!);
    const again = await t.client('GET', userinfo, { headers: bearer(refreshed.access_token) });
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.sub, owner.id);

    const api = await authorize(t, config, newBrowser(), owner.token, { scope: 'openid email profile account:read' });
    secrets.push(api.code, api.verifier, api.tokens.access_token, api.tokens.id_token!);
    assert.equal(api.tokens.claims()?.email, owner.email, 'the ID token carries the claims');
    assert.equal((await t.client('GET', '/api/account/me', { headers: bearer(api.tokens.access_token) })).status, 200);
    assert.equal((await t.client('GET', userinfo, { headers: bearer(api.tokens.access_token) })).status, 401);
  });

  it('answers bad requests in the protocol: no PKCE, plain, unknown redirect, scope beyond the app, another resource, a code used twice', async () => {
    const base = { client_id: app['client-id'], response_type: 'code', redirect_uri: REDIRECT, scope: 'openid', state: 's' };
    const ask = async (params: Record<string, string>) => {
      const res = await fetch(`${issuer.href}/auth?${new URLSearchParams(params)}`, { redirect: 'manual' });
      return { status: res.status, location: res.headers.get('location') ?? '', text: await res.text() };
    };
    const noPkce = await ask(base);
    assert.equal(noPkce.status, 303);
    assert.match(noPkce.location, /^http:\/\/127\.0\.0\.1:8765\/callback\?error=invalid_request/);
    assert.match(noPkce.location, /iss=/);
    const plain = await ask({ ...base, code_challenge: 'x'.repeat(43), code_challenge_method: 'plain' });
    assert.match(plain.location, /error=invalid_request/);
    const challenge = await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier());
    const pkce = { code_challenge: challenge, code_challenge_method: 'S256' };
    const wrongRedirect = await ask({ ...base, ...pkce, redirect_uri: 'http://127.0.0.1:8765/other' });
    assert.equal(wrongRedirect.status, 400);
    assert.equal(wrongRedirect.location, '', 'never a redirect to an unregistered URI');
    assert.match(wrongRedirect.text, /redirect_uri/);
    const beyond = await ask({ ...base, ...pkce, scope: 'openid orgs:write' });
    assert.match(beyond.location, /error=invalid_scope/);
    const target = await ask({ ...base, ...pkce, resource: 'https://elsewhere.example/api' });
    assert.match(target.location, /error=invalid_target/);

    const browser = newBrowser();
    const result = await authorize(t, config, browser, owner.token, { scope: 'openid account:read' });
    const again = await fetch(config.serverMetadata().token_endpoint!, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${app['client-id']}:${app['client-secret']}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: result.code, redirect_uri: REDIRECT, code_verifier: result.verifier }),
    });
    assert.equal(again.status, 400);
    assert.equal(((await again.json()) as { error: string }).error, 'invalid_grant');
    assert.equal((await t.client('GET', '/api/account/me', { headers: bearer(result.tokens.access_token) })).status, 401, 'what the code issued is revoked');
  });

  it('remembers consent: the same scopes need no Allow; connected apps list and revoke the grant; deny answers access_denied', async () => {
    const first = await authorize(t, config, newBrowser(), owner.token, { scope: 'openid orgs:read' });
    const second = await authorize(t, config, newBrowser(), owner.token, { scope: 'openid orgs:read' });
    assert.equal(second.interaction['consent-required'], false);
    const more = await authorize(t, config, newBrowser(), owner.token, { scope: 'openid orgs:read email', allow: false });
    assert.equal(more.interaction['consent-required'], true);
    assert.equal(more.error, 'access_denied');

    const list = await t.client('GET', '/api/account/connected-apps', { headers: bearer(owner.token) });
    assert.equal(list.status, 200);
    const connected = list.body['connected-apps'].find((c: { 'client-id': string }) => c['client-id'] === app['client-id']);
    assert.ok(connected);
    assert.equal(connected.organization.name, 'Acme');
    assert.equal((await t.client('GET', '/api/orgs', { headers: bearer(second.tokens.access_token) })).status, 200);
    const revoke = await t.client('DELETE', `/api/account/connected-apps/${connected.id}`, { headers: bearer(owner.token) });
    assert.equal(revoke.status, 204);
    for (const tokens of [first.tokens, second.tokens])
      assert.equal((await t.client('GET', '/api/orgs', { headers: bearer(tokens.access_token) })).status, 401);
    const again = await authorize(t, config, newBrowser(), owner.token, { scope: 'openid orgs:read', allow: false });
    assert.equal(again.interaction['consent-required'], true, 'the consent is forgotten');
    const other = await t.client('DELETE', `/api/account/connected-apps/${connected.id}`, { headers: bearer(owner.token) });
    assert.equal(other.status, 404);
  });

  it("manages an organization's apps: admins only, the secret shown once and rotated, bad redirect URIs refused", async () => {
    const path = `/api/orgs/${owner.orgId}/oauth-apps`;
    const list = await t.client('GET', path, { headers: bearer(owner.token) });
    assert.equal(list.status, 200);
    assert.ok(list.body['oauth-apps'].every((a: Record<string, unknown>) => a['client-secret'] === undefined));
    const bad = await t.client('POST', path, {
      headers: bearer(owner.token),
      body: { name: 'Bad', 'redirect-uris': ['http://example.com/cb', 'https://ok.example/cb#frag'], confidential: false, scopes: ['openid'] },
    });
    assert.equal(bad.status, 400);
    assert.deepEqual(
      bad.body.errors.map((e: { path: string }) => e.path),
      ['/redirect-uris/0', '/redirect-uris/1'],
    );
    const stranger = await signUpVerified(t);
    const strangerToken = (await logIn(t.client, stranger.email)).body['access-token'] as string;
    assert.equal((await t.client('GET', path, { headers: bearer(strangerToken) })).status, 404);
    const patched = await t.client('PATCH', `${path}/${app.id}`, { headers: bearer(owner.token), body: { name: 'Renamed' } });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.name, 'Renamed');
    const rotated = await t.client('POST', `${path}/${app.id}/rotate-secret`, { headers: bearer(owner.token) });
    assert.equal(rotated.status, 200);
    const token = (secret: string) =>
      fetch(config.serverMetadata().token_endpoint!, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'nothing', client_id: app['client-id'], client_secret: secret }),
      }).then(async (res) => ((await res.json()) as { error: string }).error);
    assert.equal(await token(app['client-secret']!), 'invalid_client', 'the previous secret stopped');
    assert.equal(await token(rotated.body['client-secret']), 'invalid_grant', 'the new one authenticates (client_secret_post)');
    app['client-secret'] = rotated.body['client-secret'];
    config = await client.discovery(issuer, app['client-id'], { redirect_uris: [REDIRECT] }, client.ClientSecretBasic(app['client-secret']), {
      execute: [client.allowInsecureRequests],
    });
    assert.equal((await fetch(`${issuer.href}/reg`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })).status, 404);
    const audit = await t.system.database.db.selectFrom('audit_entry').select('action').where('organization_id', '=', owner.orgId).execute();
    for (const action of ['oauth-app.created', 'oauth-app.updated', 'oauth-app.secret-rotated'])
      assert.ok(
        audit.some((e) => e.action === action),
        action,
      );
  });

  it('signs in with two-factor before consent: the consent API needs the session the second factor gives', async () => {
    const account = await signUpVerified(t);
    const access = (await logIn(t.client, account.email)).body['access-token'] as string;
    const setup = await t.client('POST', '/api/account/2fa/setup', { headers: bearer(access), body: {} });
    await awayFromStepEdge();
    assert.equal(
      (await t.client('POST', '/api/account/2fa/enable', { headers: bearer(access), body: { code: totpCode(setup.body.secret, -1), password: PASSWORD } }))
        .status,
      200,
    );
    const browser = newBrowser();
    const verifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const uid = /\/authorize\/([^/?#]+)$/.exec((await browser.visit(url.href)).location)![1];
    const cookie = interactionCookie(browser);
    const first = await logIn(t.client, account.email);
    assert.equal(first.body['mfa-required'], true);
    assert.equal(first.body['access-token'], undefined, 'no session before the second factor');
    assert.equal((await t.client('GET', `/api/oauth/interactions/${uid}`, { headers: { cookie } })).status, 401);
    await awayFromStepEdge();
    const second = await t.client('POST', '/api/account/log-in/mfa', { body: { 'mfa-token': first.body['mfa-token'], code: totpCode(setup.body.secret) } });
    assert.equal(second.status, 200, second.text);
    const details = await t.client('GET', `/api/oauth/interactions/${uid}`, { headers: { ...bearer(second.body['access-token']), cookie } });
    assert.equal(details.status, 200);
    // asked from another browser (a link to the page sent to someone else): as unknown
    const elsewhere = await t.client('GET', `/api/oauth/interactions/${uid}`, { headers: bearer(second.body['access-token']) });
    assert.equal(elsewhere.status, 404);
    assert.equal(details.body['consent-required'], true);
  });

  it('keeps secrets out of the log', async () => {
    const text = await t.logText();
    assert.ok(secrets.length >= 8);
    for (const secret of [...secrets, app['client-secret']!]) assert.ok(!text.includes(secret), 'a secret is in the log');
    assert.doesNotMatch(text, /"code":"[A-Za-z0-9_-]{20,}"/);
    assert.doesNotMatch(text, /eyJ[A-Za-z0-9_-]{10,}\.eyJ/);
  });

  // signing keys (src/auth/signing-keys.ts): on this system, to start one less
  const keysOf = () => t.system.services<AuthServices>(authModule).signingKeys;

  it('publishes the public keys of every algorithm, never a private member, cached at most 5 minutes', async () => {
    // the ID-token keys are made when the provider is first needed (here, discovery): until then EdDSA alone signs
    assert.deepEqual(algsBeforeProvider, ['EdDSA']);
    const res = await t.client('GET', '/.well-known/jwks.json');
    assert.equal(res.status, 200);
    assert.match(String(res.headers['cache-control']), /public, max-age=(\d+)/);
    assert.ok(Number(/max-age=(\d+)/.exec(String(res.headers['cache-control']))![1]) <= 300);
    assert.deepEqual(new Set(res.body.keys.map((k: { alg: string }) => k.alg)), new Set(['EdDSA', 'RS256', 'ES256']));
    for (const key of res.body.keys) {
      assert.equal(key.use, 'sig');
      for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi']) assert.equal(key[member], undefined, `no private ${member}`);
    }
    const rows = await t.system.database.db.selectFrom('signing_key').select(['private_sealed', 'public_jwk']).execute();
    for (const row of rows) assert.doesNotMatch(row.private_sealed, /"d"/, 'the private part is sealed');
  });

  it('signs access tokens with EdDSA and a kid that third parties verify with the JWKS; an HS256 token from before still works', async () => {
    const { email, id } = await signUp(t.client);
    const token = (await logIn(t.client, email)).body['access-token'] as string;
    const header = decodeProtectedHeader(token);
    assert.equal(header.alg, 'EdDSA');
    const jwks = createRemoteJWKSet(new URL(`${t.url}/.well-known/jwks.json`));
    const { payload } = await jwtVerify(token, jwks, { algorithms: ['EdDSA'] });
    assert.equal(payload.sub, id);

    // a token the server signed with JWT_SECRET before the upgrade: its session is a real one
    const sid = (payload as { sid: string }).sid;
    const now = Math.floor(Date.now() / 1000);
    const legacy = await new SignJWT({ email, sid, auth_time: now })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(id)
      .setIssuedAt(now)
      .setExpirationTime(now + 600)
      .setIssuer('saas-app')
      .setAudience('saas-app')
      .setJti(randomUUID())
      .sign(new TextEncoder().encode(TEST_JWT_SECRET));
    assert.equal((await t.client('GET', '/api/account/me', { headers: { authorization: `Bearer ${legacy}` } })).status, 200);
    // one signed with another secret, or with alg none, is refused
    const forged = await new SignJWT({ email, sid })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(id)
      .setIssuedAt(now)
      .setExpirationTime(now + 600)
      .setIssuer('saas-app')
      .setAudience('saas-app')
      .setJti(randomUUID())
      .sign(new TextEncoder().encode('another-secret-0123456789abcdefghijklmnop'));
    const refused = await t.client('GET', '/api/account/me', { headers: { authorization: `Bearer ${forged}` } });
    assert.equal(refused.status, 401);
    assert.match(String(refused.headers['www-authenticate']), /resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource\/api"/);

    // once one access-token lifetime has passed since the first signing key was made, no JWT_SECRET token is accepted, whatever its claims
    const { db } = t.system.database;
    const made = await db.selectFrom('signing_key').select(['kid', 'created_at']).execute();
    const ttl = t.system.config.vars.ACCESS_TOKEN_TTL ? Number(t.system.config.vars.ACCESS_TOKEN_TTL) : 900;
    await sql`update signing_key set created_at = now() - ${`${ttl + 5} seconds`}::interval`.execute(db);
    await keysOf().catchUp();
    try {
      const minted = await new SignJWT({ email, sid, auth_time: Math.floor(Date.now() / 1000) })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(id)
        .setIssuedAt()
        .setExpirationTime('10m')
        .setIssuer('saas-app')
        .setAudience('saas-app')
        .setJti(randomUUID())
        .sign(new TextEncoder().encode(TEST_JWT_SECRET));
      const late = await t.client('GET', '/api/account/me', { headers: { authorization: `Bearer ${minted}` } });
      assert.equal(late.status, 401, 'a JWT_SECRET token minted past the window');
      assert.equal((await t.client('GET', '/api/account/me', { headers: { authorization: `Bearer ${token}` } })).status, 200, 'EdDSA tokens still work');
    } finally {
      for (const row of made) await db.updateTable('signing_key').set({ created_at: row.created_at }).where('kid', '=', row.kid).execute();
      await keysOf().catchUp();
    }
  });

  it('401s name the failure: error="invalid_token" for a token that fails, none without a token (RFC 6750 §3.1)', async () => {
    const metadata = `resource_metadata="${t.url}/.well-known/oauth-protected-resource/api"`;
    const none = await t.client('GET', '/api/account/me');
    assert.equal(none.status, 401);
    assert.equal(none.headers['www-authenticate'], `Bearer ${metadata}`);
    // another scheme is no token at all (RFC 6750 §3.1)
    const basic = await t.client('GET', '/api/account/me', { headers: { authorization: 'Basic dXNlcjpwYXNz' } });
    assert.equal(basic.status, 401);
    assert.equal(basic.headers['www-authenticate'], `Bearer ${metadata}`);
    const { email } = await signUp(t.client);
    const login = await logIn(t.client, email);
    const live = login.body['access-token'] as string;
    const expired = await new SignJWT({ email, sid: randomUUID() })
      .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid: decodeProtectedHeader(live).kid })
      .setSubject(randomUUID())
      .setIssuedAt(Math.floor(Date.now() / 1000) - 3600)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 1800)
      .setIssuer('saas-app')
      .setAudience('saas-app')
      .setJti(randomUUID())
      .sign(keysOf().current('EdDSA')!.privateKey!);
    // a revoked one: its session logged out
    const loggedOut = await t.client('POST', '/api/account/log-out', { headers: bearer(live), body: { 'refresh-token': login.body['refresh-token'] } });
    assert.equal(loggedOut.status, 204, loggedOut.text);
    for (const [what, token] of [
      ['garbage', 'not-a-token'],
      ['expired', expired],
      ['revoked', live],
    ] as const) {
      const res = await t.client('GET', '/api/account/me', { headers: bearer(token) });
      assert.equal(res.status, 401, what);
      assert.equal(res.headers['www-authenticate'], `Bearer error="invalid_token", ${metadata}`, what);
    }
  });

  it('rotates: the new key is published at once and signs later; tokens of the previous key stay valid', async () => {
    const { email } = await signUp(t.client);
    const before = (await logIn(t.client, email)).body['access-token'] as string;
    const oldKid = decodeProtectedHeader(before).kid;
    const kids = await keysOf().rotate();
    assert.equal(kids.length, 4, 'one of each kind: the access tokens EdDSA, the ID tokens RS256, ES256 and EdDSA');
    const published = (await t.client('GET', '/.well-known/jwks.json')).body.keys.map((k: { kid: string }) => k.kid);
    for (const kid of [...kids, oldKid]) assert.ok(published.includes(kid), `${kid} is published`);
    // the new key waits (5 minutes, or the access-token lifetime): the same key signs meanwhile
    const after = (await logIn(t.client, email)).body['access-token'] as string;
    assert.equal(decodeProtectedHeader(after).kid, oldKid);
    assert.equal((await t.client('GET', '/api/account/me', { headers: { authorization: `Bearer ${before}` } })).status, 200);
    // once its time comes, every instance signs with it
    const newEdDsa = kids.find((kid) => keysOf().find(kid)?.kind === 'EdDSA')!;
    assert.equal(keysOf().current('EdDSA', Date.now() + 301_000)?.kid, newEdDsa);
  });

  it('rotates on schedule each algorithm whose newest key is SIGNING_KEY_ROTATION_DAYS old, not the others', async () => {
    const { db } = t.system.database;
    const box = signingKeyBox(t.system.config.encryptionKey);
    assert.deepEqual(await rotateIfDue(db, box, 90, 300), [], 'nothing due');
    // the RS256 keys as if made 100 days ago
    await sql`update signing_key set created_at = now() - interval '100 days' where alg = 'RS256'`.execute(db);
    const kids = await rotateIfDue(db, box, 90, 300);
    assert.equal(kids.length, 1);
    const rows = await db.selectFrom('signing_key').select(['kid', 'alg']).where('kid', 'in', kids).execute();
    assert.deepEqual(
      rows.map((r) => r.alg),
      ['RS256'],
    );
    assert.deepEqual(await rotateIfDue(db, box, 90, 300), [], 'due no more');
  });
});
