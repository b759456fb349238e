/**
 * The OAuth provider's hardening (docs/security.md, "The OAuth provider"), each finding's
 * reproduction beside its legitimate path: the provider's browser session ends with the product
 * session that made it (log-out, ending it elsewhere, a password change) while a live one still
 * skips remembered consent; a grant adding `offline_access` or a write scope needs the password,
 * ends with the consenting session and is emailed; `prompt=login` and `max_age` get a fresh
 * sign-in; the consent API reads only a signed interaction cookie; registered clients are held to
 * the apps' rules, bounded, rate-limited and expire; no end-session endpoint; the provider's pages
 * carry the security headers; deleting an organization (or the account that alone owned it) ends
 * its apps' grants.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import * as client from 'openid-client';
import { logIn, PASSWORD, signUpVerified } from '../support/auth.js';
import type { TestClient } from '../support/http.js';
import { mailCount } from '../support/mailbox.js';
import { freePort } from '../support/net.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { authorize, bearer, createApp, interactionCookie, newBrowser, REDIRECT, type Browser } from './support.js';

type Session = { token: string; refresh: string; id: string };

/** Milliseconds until `token` is refused (bounded: fails after 3 s). */
async function untilRefused(on: TestClient, token: string): Promise<void> {
  const started = Date.now();
  while ((await on('GET', '/api/account/me', { headers: bearer(token) })).status !== 401) {
    assert.ok(Date.now() - started < 3000, 'refused within 3 s');
    await sleep(20);
  }
}

describe('OAuth provider hardening', () => {
  let t: TestSystem;
  let orgId: string;
  let ownerToken: string;
  let config: client.Configuration;
  let appClientId: string;

  const session = async (email: string): Promise<Session> => {
    const res = await logIn(t.client, email);
    assert.equal(res.status, 200, res.text);
    const token = res.body['access-token'] as string;
    return { token, refresh: res.body['refresh-token'] as string, id: decodeJwt(token).sid as string };
  };

  /** Starts an authorization in `browser`: where the provider sends it, a code at the app or the consent page. */
  const start = async (browser: Browser, scope: string, extra: Record<string, string> = {}) => {
    const verifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      ...(scope.includes('openid') ? { nonce: client.randomNonce() } : {}),
      ...extra,
    });
    let step = await browser.visit(url.href);
    for (let hops = 0; step.status === 303 && !step.location.startsWith(REDIRECT); hops++) {
      assert.ok(hops < 6);
      step = await browser.visit(step.location);
    }
    const uid = /\/authorize\/([^/?#]+)$/.exec(step.location)?.[1];
    return { uid, code: step.location.startsWith(REDIRECT) ? new URL(step.location).searchParams.get('code') : null };
  };

  /** The reasons of the `oauth-grant.revoked` entries of the account's own log. */
  const revokedReasons = async (accountId: string) =>
    (
      await t.system.database.db
        .selectFrom('audit_entry')
        .select('details')
        .where('account_id', '=', accountId)
        .where('action', '=', 'oauth-grant.revoked')
        .execute()
    ).map((row) => (row.details as { reason?: string }).reason);

  const consent = (s: Session, browser: Browser, uid: string, body: Record<string, unknown>) =>
    t.client('POST', `/api/oauth/interactions/${uid}/consent`, { headers: { ...bearer(s.token), cookie: interactionCookie(browser) }, body });

  before(async () => {
    const port = await freePort();
    t = await startSystem(testDatabases()[0], {
      PORT: String(port),
      APP_URL: `http://127.0.0.1:${port}`,
      OAUTH_DYNAMIC_REGISTRATION: 'on',
      OAUTH_REGISTRATION_LIMIT_ADDRESS: '8/3600',
    });
    const owner = await signUpVerified(t);
    ownerToken = (await session(owner.email)).token;
    const org = await t.client('POST', '/api/orgs', { headers: bearer(ownerToken), body: { name: 'Acme' } });
    orgId = org.body.id;
    const app = await createApp(t, ownerToken, orgId, { confidential: false, scopes: ['openid', 'email', 'offline_access', 'account:read', 'orgs:write'] });
    appClientId = app['client-id'];
    config = await client.discovery(new URL(`${t.url}/oauth`), appClientId, { redirect_uris: [REDIRECT] }, client.None(), {
      execute: [client.allowInsecureRequests],
    });
  });
  after(() => t?.stop());

  it('log-out ends the provider session: that browser signs in again; a live session still skips remembered consent', async () => {
    const person = await signUpVerified(t);
    const s = await session(person.email);
    const browser = newBrowser();
    await authorize(t, config, browser, s.token, { scope: 'openid account:read' });
    // legitimate: the product session is live, the consent remembered: a code at once
    assert.ok((await start(browser, 'openid account:read')).code, 'a live session skips the screen');
    const out = await t.client('POST', '/api/account/log-out', { body: { 'refresh-token': s.refresh } });
    assert.equal(out.status, 204);
    const cleared = String(out.headers['set-cookie'] ?? '');
    assert.match(cleared, /oauth_session=;/, "log-out clears the provider's cookies");
    const bound = await t.system.database.db.selectFrom('oauth_model').select('id').where('model', '=', 'Session').where('session_id', '=', s.id).execute();
    assert.equal(bound.length, 0, "the provider's session is gone with the product's");
    const again = await start(browser, 'openid account:read');
    assert.equal(again.code, null, 'no code without a sign-in');
    assert.ok(again.uid, 'the consent page asks');
  });

  it('ending the session from another device, or a password change, signs the provider session out and ends its grants', async () => {
    const person = await signUpVerified(t);
    const a = await session(person.email);
    const b = await session(person.email);
    const browserA = newBrowser();
    await authorize(t, config, browserA, a.token, { scope: 'openid account:read' });
    assert.equal((await t.client('DELETE', `/api/account/sessions/${a.id}`, { headers: bearer(b.token) })).status, 204);
    assert.equal((await start(browserA, 'openid account:read')).code, null, 'ended elsewhere: signed out here too');

    const c = await session(person.email);
    const browserC = newBrowser();
    const granted = await authorize(t, config, browserC, c.token, { scope: 'openid offline_access account:read', prompt: 'consent' });
    assert.ok(granted.tokens.refresh_token);
    // and one the changing session made itself
    await authorize(t, config, newBrowser(), b.token, { scope: 'openid account:read' });
    const changed = await t.client('POST', '/api/account/change-password', {
      headers: bearer(b.token),
      body: { 'current-password': PASSWORD, password: 'a new password for this test 42' },
    });
    assert.equal(changed.status, 204, changed.text);
    assert.equal((await start(browserC, 'openid account:read')).code, null);
    await untilRefused(t.client, granted.tokens.access_token);
    await assert.rejects(client.refreshTokenGrant(config, granted.tokens.refresh_token!), 'its refresh token is dead');
    const apps = await t.client('GET', '/api/account/connected-apps', { headers: bearer(b.token) });
    assert.deepEqual(apps.body['connected-apps'], [], 'a new password disconnects every app');
    const reasons = await revokedReasons(person.id);
    assert.ok(reasons.includes('session-ended') && reasons.includes('password-changed'), reasons.join(', '));
  });

  it('an Allow adding offline_access or a write scope needs the password; the grant ends with its session; the person is emailed', async () => {
    const person = await signUpVerified(t);
    const s = await session(person.email);
    const browser = newBrowser();
    const pending = await start(browser, 'openid offline_access orgs:write');
    const refused = await consent(s, browser, pending.uid!, { allow: true });
    assert.equal(refused.status, 403, 'a stolen access token alone makes no lasting grant');
    assert.equal(refused.body.type, 'reauthentication-required');
    const wrong = await consent(s, browser, pending.uid!, { allow: true, password: 'not the password' });
    assert.equal(wrong.status, 403);
    assert.equal(await mailCount(t.system, person.email, 'app-connected-notice'), 0);

    // legitimate: with the password, then a remembered consent asks nothing more
    const granted = await authorize(t, config, browser, s.token, { scope: 'openid offline_access orgs:write', prompt: 'consent' });
    assert.ok(granted.tokens.refresh_token);
    assert.equal(await mailCount(t.system, person.email, 'app-connected-notice'), 1, 'told by email');
    const remembered = await authorize(t, config, newBrowser(), s.token, { scope: 'openid offline_access orgs:write', password: null });
    assert.equal(remembered.error, undefined, 'nothing added: no password asked');
    assert.equal(await mailCount(t.system, person.email, 'app-connected-notice'), 1);
    // a read scope alone needs none
    const other = await session(person.email);
    assert.equal((await authorize(t, config, newBrowser(), other.token, { scope: 'openid account:read', password: null })).error, undefined);

    // ending the consenting session ends the grant
    assert.equal((await t.client('POST', '/api/account/log-out', { body: { 'refresh-token': s.refresh } })).status, 204);
    await untilRefused(t.client, granted.tokens.access_token);
    await assert.rejects(client.refreshTokenGrant(config, granted.tokens.refresh_token!));
    assert.ok((await revokedReasons(person.id)).includes('session-ended'), "the person's own log says why");
  });

  it("a stolen session's token gets no lasting grant through the owner's grant of another session", async () => {
    const person = await signUpVerified(t);
    const owner = await session(person.email);
    await authorize(t, config, newBrowser(), owner.token, { scope: 'openid offline_access orgs:write', prompt: 'consent' });
    // the attacker holds only another session's access token, in a browser of their own
    const stolen = await session(person.email);
    const attacker = newBrowser();
    const pending = await start(attacker, 'openid offline_access orgs:write', { prompt: 'consent' });
    const refused = await consent(stolen, attacker, pending.uid!, { allow: true });
    assert.equal(refused.status, 403, "the owner's grant lends nothing to another session");
    assert.equal(refused.body.type, 'reauthentication-required');
    // with the password it is that session's own grant, which ends with it
    const own = await authorize(t, config, newBrowser(), stolen.token, { scope: 'openid offline_access orgs:write', prompt: 'consent' });
    assert.equal((await t.client('DELETE', `/api/account/sessions/${stolen.id}`, { headers: bearer(owner.token) })).status, 204);
    await untilRefused(t.client, own.tokens.access_token);
    await assert.rejects(client.refreshTokenGrant(config, own.tokens.refresh_token!));
  });

  it('an account without a password shows a fresh sign-in by signing in again, never by a password field', async () => {
    const person = await signUpVerified(t);
    const s = await session(person.email);
    await t.system.database.db.updateTable('account').set({ password_hash: null }).where('id', '=', person.id).execute();
    await sleep(1100);
    const browser = newBrowser();
    const pending = await start(browser, 'openid account:read', { prompt: 'login' });
    for (const body of [{ allow: true }, { allow: true, password: 'anything' }]) {
      const refused = await consent(s, browser, pending.uid!, body);
      assert.equal(refused.status, 403, JSON.stringify(body));
      assert.equal(refused.body.type, 'reauthentication-required');
      assert.equal(refused.body.method, 'recent-sign-in');
    }
  });

  it('prompt=login and max_age get a fresh sign-in: the password again, never the old session alone', async () => {
    const person = await signUpVerified(t);
    const s = await session(person.email);
    const browser = newBrowser();
    const started = Math.floor(Date.now() / 1000);
    const pending = await start(browser, 'openid account:read', { prompt: 'login' });
    const details = await t.client('GET', `/api/oauth/interactions/${pending.uid}`, { headers: { ...bearer(s.token), cookie: interactionCookie(browser) } });
    assert.equal(details.body['login-required'], true);
    assert.equal(details.body['consent-required'], true, 'never allowed at once');
    const refused = await consent(s, browser, pending.uid!, { allow: true });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.type, 'reauthentication-required');
    const fresh = await authorize(t, config, browser, s.token, { scope: 'openid account:read', prompt: 'login' });
    assert.ok((decodeJwt(fresh.tokens.id_token!).auth_time as number) >= started, 'auth_time is the fresh sign-in');

    await sleep(2100);
    const aged = await start(newBrowser(), 'openid account:read', { max_age: '1' });
    const agedBrowser = newBrowser();
    const agedPending = await start(agedBrowser, 'openid account:read', { max_age: '1' });
    assert.ok(aged.uid && agedPending.uid);
    const agedDetails = await t.client('GET', `/api/oauth/interactions/${agedPending.uid}`, {
      headers: { ...bearer(s.token), cookie: interactionCookie(agedBrowser) },
    });
    assert.equal(agedDetails.body['login-required'], true);
    // legitimate: a max_age the session is within asks nothing more
    const within = await authorize(t, config, newBrowser(), s.token, { scope: 'openid account:read', maxAge: 3600, password: null });
    assert.equal(within.error, undefined);
  });

  it('the consent API reads only a signed interaction cookie', async () => {
    const person = await signUpVerified(t);
    const s = await session(person.email);
    const browser = newBrowser();
    const { uid } = await start(browser, 'openid account:read');
    const get = (cookie: string) => t.client('GET', `/api/oauth/interactions/${uid}`, { headers: { ...bearer(s.token), cookie } });
    assert.equal((await get(`oauth_interaction=${uid}`)).status, 404, 'no signature');
    assert.equal((await get(`oauth_interaction=${uid}; oauth_interaction.sig=AAAAAAAAAAAAAAAAAAAAAAAAAAA`)).status, 404, 'a forged one');
    assert.equal((await get(interactionCookie(browser))).status, 200);
  });

  it("holds registered clients to the apps' rules: https or loopback redirects, at most 10, a short name, no logout redirect, bounded size, an expiry", async () => {
    const register = (metadata: Record<string, unknown>) =>
      t.client('POST', '/oauth/reg', { body: { token_endpoint_auth_method: 'none', redirect_uris: ['https://app.example.com/cb'], ...metadata } });
    for (const [why, metadata] of [
      ['http off loopback', { redirect_uris: ['http://evil.example/cb'] }],
      ['eleven redirect URIs', { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://app.example.com/cb${i}`) }],
      ['a long name', { client_name: 'x'.repeat(101) }],
      ['a large document', { contacts: Array.from({ length: 200 }, (_, i) => `person${i}@example.com`.padEnd(60, 'x')) }],
    ] as const) {
      const res = await register(metadata);
      assert.equal(res.status, 400, `${why}: ${res.text}`);
      assert.match(res.body.error, /invalid_(client_metadata|redirect_uri)/, why);
    }
    // the tools' scopes may be registered (consent bounds them); a scope no tool has may not
    const tools = await register({ scope: 'openid offline_access account:read orgs:read orgs:write' });
    assert.equal(tools.status, 201, tools.text);
    assert.equal((await register({ scope: 'openid billing:write' })).status, 400);
    const ok = await register({
      client_name: 'Claude',
      redirect_uris: ['https://app.example.com/cb', 'http://127.0.0.1:33418/cb'],
      post_logout_redirect_uris: ['https://evil.example/'],
    });
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.body.post_logout_redirect_uris, undefined, 'no logout redirect is kept: there is no end-session endpoint to use one');
    const row = await t.system.database.db
      .selectFrom('oauth_model')
      .select('expires_at')
      .where('model', '=', 'Client')
      .where('id', '=', ok.body.client_id)
      .executeTakeFirstOrThrow();
    assert.ok(row.expires_at && row.expires_at.getTime() < Date.now() + 8 * 86_400_000, 'an unused registered client expires');
  });

  it("signs EdDSA ID tokens with a key of their own, never the sessions' access-token key", async () => {
    const registered = await t.client('POST', '/oauth/reg', {
      body: { token_endpoint_auth_method: 'none', redirect_uris: [REDIRECT], id_token_signed_response_alg: 'EdDSA', scope: 'openid account:read' },
    });
    assert.equal(registered.status, 201, registered.text);
    const edConfig = await client.discovery(
      new URL(`${t.url}/oauth`),
      registered.body.client_id,
      { redirect_uris: [REDIRECT], id_token_signed_response_alg: 'EdDSA' },
      client.None(),
      {
        execute: [client.allowInsecureRequests],
      },
    );
    const person = await signUpVerified(t);
    const s = await session(person.email);
    const granted = await authorize(t, edConfig, newBrowser(), s.token, { scope: 'openid account:read' });
    const idHeader = decodeProtectedHeader(granted.tokens.id_token!);
    assert.equal(idHeader.alg, 'EdDSA');
    const sessionKid = decodeProtectedHeader(s.token).kid;
    assert.notEqual(idHeader.kid, sessionKid, "not the product's session key");
    assert.notEqual(idHeader.kid, decodeProtectedHeader(granted.tokens.access_token).kid);
    const row = await t.system.database.db.selectFrom('signing_key').select('purpose').where('kid', '=', idHeader.kid!).executeTakeFirstOrThrow();
    assert.equal(row.purpose, 'id-token');
  });

  it('has no end-session endpoint; its pages carry the security headers', async () => {
    const meta = await t.client('GET', '/oauth/.well-known/openid-configuration');
    assert.equal(meta.body.end_session_endpoint, undefined);
    assert.equal((await t.client('GET', '/oauth/session/end')).status, 404);
    const page = await fetch(`${t.url}/oauth/auth?client_id=nobody&response_type=code`);
    assert.equal(page.headers.get('x-frame-options'), 'DENY');
    assert.match(page.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
    assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
  });

  it('rate-limits registrations per address', async () => {
    let status = 0;
    for (let i = 0; i < 10 && status !== 429; i++)
      status = (await t.client('POST', '/oauth/reg', { body: { token_endpoint_auth_method: 'none', redirect_uris: ['https://app.example.com/cb'] } })).status;
    assert.equal(status, 429, 'past OAUTH_REGISTRATION_LIMIT_ADDRESS');
    const refused = await t.client('POST', '/oauth/reg', { body: { token_endpoint_auth_method: 'none', redirect_uris: ['https://app.example.com/cb'] } });
    assert.equal(refused.body.type, 'rate-limited');
    assert.ok(Number(refused.headers['retry-after']) > 0);
    // the provider's router takes other spellings of the path: so does the count
    for (const path of ['/oauth/reg/', '/oauth/REG', '/oauth/Reg/'])
      assert.equal(
        (await t.client('POST', path, { body: { token_endpoint_auth_method: 'none', redirect_uris: ['https://app.example.com/cb'] } })).status,
        429,
        path,
      );
    // the rest of the provider still answers
    assert.equal((await t.client('GET', '/oauth/.well-known/openid-configuration')).status, 200);
  });

  it("deleting an organization, or the account that alone owned it, ends its apps' grants", async () => {
    for (const how of ['organization', 'account'] as const) {
      const owner = await signUpVerified(t);
      const ownerSession = await session(owner.email);
      const org = await t.client('POST', '/api/orgs', { headers: bearer(ownerSession.token), body: { name: `Doomed ${how}` } });
      const app = await createApp(t, ownerSession.token, org.body.id, { confidential: false, scopes: ['openid', 'account:read'] });
      const appConfig = await client.discovery(new URL(`${t.url}/oauth`), app['client-id'], { redirect_uris: [REDIRECT] }, client.None(), {
        execute: [client.allowInsecureRequests],
      });
      const person = await signUpVerified(t);
      const s = await session(person.email);
      const granted = await authorize(t, appConfig, newBrowser(), s.token, { scope: 'openid account:read' });
      assert.equal((await t.client('GET', '/api/account/me', { headers: bearer(granted.tokens.access_token) })).status, 200);
      const deleted =
        how === 'organization'
          ? await t.client('DELETE', `/api/orgs/${org.body.id}`, { headers: bearer(ownerSession.token) })
          : await t.client('POST', '/api/account/delete', { headers: bearer(ownerSession.token), body: { password: PASSWORD } });
      assert.equal(deleted.status, 204, deleted.text);
      await untilRefused(t.client, granted.tokens.access_token);
      const apps = await t.client('GET', '/api/account/connected-apps', { headers: bearer(s.token) });
      assert.deepEqual(apps.body['connected-apps'], [], how);
      assert.deepEqual(await revokedReasons(person.id), ['organization-deleted'], `${how}: the person's own log says why`);
    }
    // the organization of this suite keeps its app's grants
    assert.ok(appClientId && orgId);
  });
});

describe('OAuth request rate limit', () => {
  let t: TestSystem;
  before(async () => {
    t = await startSystem(testDatabases()[0], { OAUTH_LIMIT_ADDRESS: '5/60' });
  });
  after(() => t?.stop());

  it('answers 429 past OAUTH_LIMIT_ADDRESS, in the product error shape', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await t.client('GET', '/oauth/.well-known/openid-configuration')).status);
    assert.deepEqual(statuses.slice(0, 5), [200, 200, 200, 200, 200]);
    assert.equal(statuses[6], 429);
    const refused = await t.client('GET', '/oauth/jwks');
    assert.equal(refused.body.type, 'rate-limited');
    // the product's own API is not counted here
    assert.equal((await t.client('GET', '/api/health/live')).status, 200);
  });
});
