/**
 * Sign-in with OpenID Connect / OAuth 2 providers over HTTP, on PGlite and PostgreSQL, against
 * a real OpenID provider (oidc-provider) and a GitHub of its own: accounts made, found by
 * subject, linked by a verified email; the refusals (unverified emails, state, nonce, PKCE,
 * denied consent, unknown and unreachable providers); linking and unlinking; accounts without a
 * password; and no secret of any flow in the log.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { FlowCookies } from '../../src/oidc/flow-cookie.js';
import { claimsOf, cookiesOf, logIn, mintAccessToken, PASSWORD, signUp, signUpVerified, uniqueEmail } from '../support/auth.js';
import { awayFromStepEdge, totpCode } from '../support/totp.js';
import { testDatabases } from '../support/system.js';
import { startTestProvider } from './provider.js';
import {
  auditOf,
  callback,
  flowOf,
  handmadeAuthorization,
  landing,
  openFlow,
  s256,
  sessionOf,
  signInWithAcme,
  signInWithGitHub,
  startFlow,
  startOidcWorld,
  type OidcWorld,
} from './support.js';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

for (const [index, db] of testDatabases().entries()) {
  describe(`provider sign-in (${db.name})`, () => {
    let w: OidcWorld;
    before(async () => {
      w = await startOidcWorld(db);
    });
    after(async () => w?.stop());

    const identitiesOf = async (token: string) => {
      const res = await w.t.client('GET', '/api/account/identities', { headers: bearer(token) });
      assert.equal(res.status, 200, res.text);
      return res.body as { identities: Array<{ id: string; provider: string; email: string | null }>; 'has-password': boolean };
    };
    const person = (email: string, emailVerified = true, name = 'Pat Provider') => ({ email, emailVerified, name });

    it('lists the configured providers for the buttons', async () => {
      const res = await w.t.client('GET', '/api/auth/providers');
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, {
        providers: [
          { id: 'acme', name: 'Acme' },
          { id: 'github', name: 'GitHub' },
          { id: 'down', name: 'Down' },
        ],
      });
    });

    it('starts with state, a PKCE S256 challenge and a nonce, kept in an encrypted HttpOnly cookie for the callback only', async () => {
      const flow = await startFlow(w);
      const q = flow.location.searchParams;
      assert.equal(flow.location.origin + flow.location.pathname, w.op.authorizationEndpoint);
      assert.equal(q.get('redirect_uri'), `${w.appUrl}/api/auth/oauth/acme/callback`);
      assert.equal(q.get('code_challenge_method'), 'S256');
      const secrets = await openFlow(w, flow.cookie);
      assert.equal(q.get('state'), secrets.state);
      assert.equal(q.get('nonce'), secrets.nonce);
      assert.equal(q.get('code_challenge'), s256(secrets.codeVerifier));
      assert.ok(!flow.cookie.includes(secrets.codeVerifier) && !Buffer.from(flow.cookie, 'base64url').toString('latin1').includes(secrets.codeVerifier));
      const attributes = cookiesOf(flow.res)['oauth-flow'].attributes;
      for (const a of ['HttpOnly', 'SameSite=Lax', 'Path=/api/auth/oauth/acme/callback', 'Max-Age=600'])
        assert.ok(attributes.includes(a), `${a} in ${attributes}`);
    });

    it('makes a verified account without a password, with its personal organization, and signs it in', async () => {
      const email = uniqueEmail('ann');
      w.op.accounts.set('ann', person(email, true, 'Ann Oidc'));
      const res = await signInWithAcme(w, 'ann');
      assert.deepEqual(landing(w, res), { path: '/account', query: {} });
      const { token, account } = await sessionOf(w, res);
      assert.equal(account.email, email);
      assert.equal(account.name, 'Ann Oidc');
      assert.equal(account['email-verified'], true);
      const orgs = await w.t.client('GET', '/api/orgs', { headers: bearer(token) });
      assert.equal(orgs.body.organizations.length, 1);
      assert.equal(orgs.body.organizations[0].personal, true);
      assert.equal(orgs.body.organizations[0].role, 'owner');
      const entries = await auditOf(w, account.id);
      assert.deepEqual(
        entries.map((e) => e.action),
        ['account.signed-up', 'account.identity-linked', 'account.logged-in'],
      );
      for (const e of entries) assert.equal(e.organization_id, orgs.body.organizations[0].id);
      assert.deepEqual(entries[0].details, { method: 'oidc', provider: 'acme' });
      assert.deepEqual(entries[2].details, { method: 'oidc', provider: 'acme' });
      assert.equal(entries[2].target_type, 'session');
      const { identities, 'has-password': hasPassword } = await identitiesOf(token);
      assert.equal(hasPassword, false);
      assert.deepEqual(
        identities.map((i) => [i.provider, i.email]),
        [['acme', email]],
      );
      const exported = await w.t.client('GET', '/api/account/export', { headers: bearer(token) });
      assert.deepEqual(
        exported.body.identities.map((i: { id: string }) => i.id),
        [identities[0].id],
      );
    });

    it('finds the account by subject on later sign-ins, even after the email changed at the provider', async () => {
      const email = uniqueEmail('ben');
      w.op.accounts.set('ben', person(email));
      const first = await sessionOf(w, await signInWithAcme(w, 'ben'));
      const changed = uniqueEmail('ben-new');
      w.op.accounts.set('ben', person(changed));
      const again = await sessionOf(w, await signInWithAcme(w, 'ben'));
      assert.equal(again.account.id, first.account.id);
      assert.equal(again.account.email, email, 'the account keeps its own address');
      assert.deepEqual(
        (await identitiesOf(again.token)).identities.map((i) => i.email),
        [changed],
        "the identity shows the provider's",
      );
      assert.deepEqual((await auditOf(w, first.account.id)).map((e) => e.action).filter((a) => a === 'account.logged-in').length, 2);
    });

    it('is a first factor: an account with two-factor on goes to the second step, the mfa-token in the fragment only', async () => {
      const email = uniqueEmail('tess');
      w.op.accounts.set('tess', person(email));
      const first = await sessionOf(w, await signInWithAcme(w, 'tess'));
      // two-factor turned on by an account without a password: its recent sign-in re-authenticates it
      const setup = await w.t.client('POST', '/api/account/2fa/setup', { headers: bearer(first.token), body: {} });
      assert.equal(setup.status, 200, setup.text);
      w.secrets.add(setup.body.secret);
      await awayFromStepEdge();
      const enabled = await w.t.client('POST', '/api/account/2fa/enable', { headers: bearer(first.token), body: { code: totpCode(setup.body.secret, -1) } });
      assert.equal(enabled.status, 200, enabled.text);
      const pending = await signInWithAcme(w, 'tess');
      assert.equal(pending.status, 302);
      const url = new URL(String(pending.headers.location));
      assert.equal(
        `${url.origin}${url.pathname}${url.search}`,
        `${w.appUrl}/log-in/two-factor`,
        'nothing in the query: a fragment never reaches a server or a log',
      );
      const token = new URLSearchParams(url.hash.slice(1)).get('mfa-token');
      assert.ok(token, 'the mfa-token is in the fragment');
      w.secrets.add(token);
      assert.equal(pending.headers['set-cookie']?.toString().includes('refresh-token='), false, 'no session cookie before the second factor');
      const done = await w.t.client('POST', '/api/account/log-in/mfa', { body: { 'mfa-token': token, code: totpCode(setup.body.secret) } });
      assert.equal(done.status, 200, done.text);
      assert.equal(done.body.account.id, first.account.id);
    });

    it('links to an existing account whose address is verified here and at the provider', async () => {
      const { email, id } = await signUpVerified(w.t, uniqueEmail('cat'));
      w.op.accounts.set('cat', person(email));
      const { token, account } = await sessionOf(w, await signInWithAcme(w, 'cat'));
      assert.equal(account.id, id);
      assert.equal((await identitiesOf(token))['has-password'], true);
      const linked = (await auditOf(w, id)).find((e) => e.action === 'account.identity-linked');
      assert.deepEqual(linked?.details, { provider: 'acme', via: 'verified-email' });
      assert.equal((await logIn(w.t.client, email)).status, 200, 'the password still works');
    });

    it('refuses to link to an account whose address is not verified here (it must log in and link)', async () => {
      const { email, id } = await signUp(w.t.client, uniqueEmail('dan'));
      w.op.accounts.set('dan', person(email));
      const res = await signInWithAcme(w, 'dan');
      assert.deepEqual(landing(w, res), { path: '/log-in', query: { error: 'email-in-use', provider: 'acme' } });
      assert.equal(cookiesOf(res)['refresh-token'], undefined);
      const rows = await w.t.system.database.db.selectFrom('account_identity').select('id').where('account_id', '=', id).execute();
      assert.equal(rows.length, 0);
    });

    it('refuses an email the provider does not say is verified, and a missing one', async () => {
      const email = uniqueEmail('eve');
      w.op.accounts.set('eve', person(email, false));
      assert.deepEqual(landing(w, await signInWithAcme(w, 'eve')).query, { error: 'email-not-verified', provider: 'acme' });
      w.op.accounts.set('eve', {});
      assert.deepEqual(landing(w, await signInWithAcme(w, 'eve')).query, { error: 'email-not-verified', provider: 'acme' });
      assert.equal(await w.t.system.database.db.selectFrom('account').select('id').where('email', '=', email).executeTakeFirst(), undefined);
    });

    it('lands on the return-to path of the start, and refuses one outside the app', async () => {
      w.op.accounts.set('fay', person(uniqueEmail('fay')));
      assert.deepEqual(landing(w, await signInWithAcme(w, 'fay', '?return-to=%2Forgs%3Ftab%3D1')), { path: '/orgs', query: { tab: '1' } });
      for (const bad of ['//evil.example/x', 'https://evil.example/', '/\\evil.example', 'account', '/a\nb']) {
        const res = await w.t.client('GET', `/api/auth/oauth/acme/start?return-to=${encodeURIComponent(bad)}`);
        assert.equal(res.status, 400, `${bad}: ${res.text}`);
        assert.equal(res.body.type, 'request-coercion');
      }
    });

    it("refuses a callback without its flow cookie, with another state, an altered or expired cookie, or another provider's", async () => {
      w.op.accounts.set('gus', person(uniqueEmail('gus')));
      const refused = (res: Awaited<ReturnType<typeof callback>>) => {
        assert.deepEqual(landing(w, res), { path: '/log-in', query: { error: 'invalid-state', provider: 'acme' } });
        assert.equal(cookiesOf(res)['refresh-token'], undefined);
        assert.match(cookiesOf(res)['oauth-flow'].attributes, /Max-Age=0/, 'the flow cookie is cleared');
      };
      let flow = await startFlow(w);
      refused(await callback(w, await w.op.authorize(flow.location.href, 'gus'), undefined));

      flow = await startFlow(w);
      const back = await w.op.authorize(flow.location.href, 'gus');
      back.searchParams.set('state', 'another-state');
      refused(await callback(w, back, flow.cookie));
      back.searchParams.delete('state');
      refused(await callback(w, back, flow.cookie));

      flow = await startFlow(w);
      const altered = flow.cookie.slice(0, -3) + (flow.cookie.endsWith('AAA') ? 'BBB' : 'AAA');
      refused(await callback(w, await w.op.authorize(flow.location.href, 'gus'), altered));

      flow = await startFlow(w);
      const secrets = await openFlow(w, flow.cookie);
      const expired = await new FlowCookies(w.t.system.config.sessionSecret, false, -1).seal(secrets);
      refused(await callback(w, await w.op.authorize(flow.location.href, 'gus'), expired));

      flow = await startFlow(w);
      const github = await startFlow(w, 'github');
      refused(await callback(w, await w.op.authorize(flow.location.href, 'gus'), github.cookie));
    });

    it("refuses an ID token with another nonce or none, and a code whose PKCE challenge is not the flow's", async () => {
      w.op.accounts.set('hal', person(uniqueEmail('hal')));
      const failed = async (params: (f: Awaited<ReturnType<typeof openFlow>>) => Record<string, string>, reason: RegExp) => {
        const flow = await startFlow(w);
        const secrets = await openFlow(w, flow.cookie);
        // a code made by hand at the provider, carrying the flow's own state back
        const back = await w.op.authorize(handmadeAuthorization(w, params(secrets)), 'hal');
        const res = await callback(w, back, flow.cookie);
        assert.deepEqual(landing(w, res), { path: '/log-in', query: { error: 'sign-in-failed', provider: 'acme' } });
        const entry = (await w.t.logEntries()).filter((e) => e.id === 'oidc/callback-refused').at(-1);
        assert.match(JSON.stringify(entry?.data), reason);
      };
      const challenge = (f: { codeVerifier: string }) => ({ code_challenge: s256(f.codeVerifier), code_challenge_method: 'S256' });
      await failed((f) => ({ state: f.state, nonce: 'another-nonce', ...challenge(f) }), /nonce/);
      await failed((f) => ({ state: f.state, ...challenge(f) }), /nonce/);
      await failed((f) => ({ state: f.state, nonce: f.nonce, code_challenge: s256('x'.repeat(43)), code_challenge_method: 'S256' }), /invalid_grant/);
    });

    it("shows a denied consent and a provider's error as codes, never as a session", async () => {
      w.op.accounts.set('ida', person(uniqueEmail('ida')));
      let flow = await startFlow(w);
      let res = await callback(w, await w.op.authorize(flow.location.href, 'ida', { deny: true }), flow.cookie);
      assert.deepEqual(landing(w, res), { path: '/log-in', query: { error: 'access-denied', provider: 'acme' } });
      // the provider itself refuses an authorization request without PKCE
      flow = await startFlow(w);
      const secrets = await openFlow(w, flow.cookie);
      res = await callback(w, await w.op.authorize(handmadeAuthorization(w, { state: secrets.state, nonce: secrets.nonce }), 'ida'), flow.cookie);
      assert.deepEqual(landing(w, res), { path: '/log-in', query: { error: 'provider-error', provider: 'acme' } });
    });

    it('answers 404 for a provider that is not configured', async () => {
      const { email } = await signUpVerified(w.t);
      const token = (await logIn(w.t.client, email)).body['access-token'];
      for (const [method, path, headers] of [
        ['GET', '/api/auth/oauth/nope/start', {}],
        ['GET', '/api/auth/oauth/nope/callback?code=x&state=y', {}],
        ['POST', '/api/auth/oauth/nope/link', bearer(token)],
      ] as const) {
        const res = await w.t.client(method, path, { headers, body: method === 'POST' ? { password: PASSWORD } : undefined });
        assert.equal(res.status, 404, `${method} ${path}: ${res.text}`);
        assert.equal(res.body.type, 'not-found');
      }
    });

    it('signs in with GitHub by its numeric id and verified primary address; an unverified one is refused', async () => {
      const email = uniqueEmail('octo');
      w.gh.signedIn = {
        id: 4242 + index,
        login: `octo${index}`,
        name: null,
        emails: [
          { email: 'old@example.com', primary: false, verified: true },
          { email, primary: true, verified: true },
        ],
      };
      const { account } = await sessionOf(w, await signInWithGitHub(w));
      assert.equal(account.email, email);
      assert.equal(account.name, `octo${index}`);
      const request = w.gh.authorizations.at(-1)!;
      assert.equal(request.get('code_challenge_method'), 'S256');
      assert.equal(request.get('scope'), 'read:user user:email');
      w.gh.signedIn = { id: 5151 + index, login: 'unverified', name: 'U', emails: [{ email: uniqueEmail('u'), primary: true, verified: false }] };
      assert.deepEqual(landing(w, await signInWithGitHub(w)).query, { error: 'email-not-verified', provider: 'github' });
    });

    it('links a provider to the signed-in account, whatever its email; refuses one linked elsewhere or after log-out', async () => {
      const { email } = await signUpVerified(w.t, uniqueEmail('joe'));
      const logInRes = await logIn(w.t.client, email);
      const token = logInRes.body['access-token'];
      const startLink = async (accessToken: string) => {
        const res = await w.t.client('POST', '/api/auth/oauth/acme/link', { headers: bearer(accessToken), body: { password: PASSWORD } });
        assert.equal(res.status, 200, res.text);
        return flowOf(w, res, res.body.url);
      };
      w.op.accounts.set('joe-at-acme', person('someone-else@example.com', false));
      let flow = await startLink(token);
      let res = await callback(w, await w.op.authorize(flow.location.href, 'joe-at-acme'), flow.cookie);
      assert.deepEqual(landing(w, res), { path: '/account', query: { linked: 'acme' } });
      assert.equal(cookiesOf(res)['refresh-token'], undefined, 'a link starts no session');
      assert.deepEqual(
        (await identitiesOf(token)).identities.map((i) => [i.provider, i.email]),
        [['acme', null]],
      );
      const notice = (await w.t.system.mail.mailbox.list({ to: email, kind: 'identity-linked-notice' }))[0];
      assert.ok(notice, 'the owner is told of the link');
      assert.match(notice.text ?? '', /a sign-in with acme was linked to your/);

      // the same identity for another account
      const other = await signUpVerified(w.t, uniqueEmail('kim'));
      const otherToken = (await logIn(w.t.client, other.email)).body['access-token'];
      flow = await startLink(otherToken);
      res = await callback(w, await w.op.authorize(flow.location.href, 'joe-at-acme'), flow.cookie);
      assert.deepEqual(landing(w, res), { path: '/account', query: { error: 'identity-in-use', provider: 'acme' } });

      // the session that started the link ended before the provider answered
      w.op.accounts.set('kim-at-acme', person(uniqueEmail('kim2')));
      flow = await startLink(otherToken);
      await w.t.client('POST', '/api/account/log-out', { body: { 'refresh-token': (await logIn(w.t.client, other.email)).body['refresh-token'] } });
      const sessions = await w.t.system.database.db.selectFrom('refresh_family').select('id').where('account_id', '=', other.id).execute();
      await w.t.system.database.db
        .updateTable('refresh_family')
        .set({ revoked_at: new Date() })
        .where(
          'id',
          'in',
          sessions.map((s) => s.id),
        )
        .execute();
      res = await callback(w, await w.op.authorize(flow.location.href, 'kim-at-acme'), flow.cookie);
      assert.deepEqual(landing(w, res), { path: '/account', query: { error: 'session-ended', provider: 'acme' } });

      // signing in at acme as joe-at-acme now signs in to joe's account
      const again = await sessionOf(w, await signInWithAcme(w, 'joe-at-acme'));
      assert.equal(again.account.email, email);
    });

    it('links only after re-authentication: the password, or a recent sign-in for an account without one; never for an unverified account', async () => {
      const link = (token: string, body: Record<string, string> = {}) => w.t.client('POST', '/api/auth/oauth/acme/link', { headers: bearer(token), body });
      // a password account: the password itself, and only it
      const { email, id } = await signUpVerified(w.t, uniqueEmail('reauth'));
      const token = (await logIn(w.t.client, email)).body['access-token'] as string;
      assert.equal(typeof claimsOf(token).auth_time, 'number', 'access tokens say when their sign-in was');
      let res = await link(token);
      assert.deepEqual(
        [res.status, res.body.type, res.body.errors?.[0].path],
        [403, 'reauthentication-required', '/password'],
        'a stolen access token alone links nothing',
      );
      res = await link(token, { password: 'not the password' });
      assert.deepEqual([res.status, res.body.type, res.body.errors?.[0].path], [403, 'forbidden', '/password']);
      assert.equal((await link(token, { password: PASSWORD })).status, 200);
      assert.equal(
        (await w.t.system.database.db.selectFrom('account_identity').select('id').where('account_id', '=', id).execute()).length,
        0,
        'nothing linked before the callback',
      );

      // no password: a sign-in within the last 10 minutes; a refresh keeps the sign-in's time
      w.op.accounts.set('nopass', person(uniqueEmail('nopass')));
      const fresh = await sessionOf(w, await signInWithAcme(w, 'nopass'));
      const refreshed = await w.t.client('POST', '/api/account/refresh', { body: { 'refresh-token': fresh.refreshToken } });
      assert.equal(claimsOf(refreshed.body['access-token']).auth_time, claimsOf(fresh.token).auth_time);
      assert.equal((await w.t.client('POST', '/api/auth/oauth/github/link', { headers: bearer(refreshed.body['access-token']), body: {} })).status, 200);
      const claims = claimsOf(fresh.token);
      const user = { id: fresh.account.id, email: fresh.account.email, sessionId: String(claims.sid) };
      const old = await mintAccessToken(w.t.system, { ...user, authTime: Math.floor(Date.now() / 1000) - 11 * 60 });
      res = await w.t.client('POST', '/api/auth/oauth/github/link', { headers: bearer(old), body: { password: 'anything' } });
      assert.deepEqual([res.status, res.body.type, res.body.method], [403, 'reauthentication-required', 'recent-sign-in']);
      const unknown = await mintAccessToken(w.t.system, user);
      assert.equal(
        (await w.t.client('POST', '/api/auth/oauth/github/link', { headers: bearer(unknown), body: {} })).status,
        403,
        'a token without auth_time is no recent sign-in',
      );
      const recent = await mintAccessToken(w.t.system, { ...user, authTime: Math.floor(Date.now() / 1000) - 9 * 60 });
      assert.equal((await w.t.client('POST', '/api/auth/oauth/github/link', { headers: bearer(recent), body: {} })).status, 200);

      // an unverified account links nothing, password or not
      const squatter = await signUp(w.t.client, uniqueEmail('squat'));
      const squatterToken = (await logIn(w.t.client, squatter.email)).body['access-token'] as string;
      res = await link(squatterToken, { password: PASSWORD });
      assert.deepEqual([res.status, res.body.type], [403, 'email-not-verified']);
      const doc = (await w.t.client('GET', '/openapi/openapi.json')).body;
      assert.deepEqual(doc.paths['/api/auth/oauth/{provider}/link'].post['x-reauthentication'], {
        'password-field': 'password',
        'recent-sign-in-seconds': 600,
      });
    });

    it('unlinks identities, but never the last way to sign in', async () => {
      w.op.accounts.set('liz', person(uniqueEmail('liz')));
      const { token, account } = await sessionOf(w, await signInWithAcme(w, 'liz'));
      const [acme] = (await identitiesOf(token)).identities;
      let res = await w.t.client('DELETE', `/api/account/identities/${acme.id}`, { headers: bearer(token) });
      assert.equal(res.status, 409, res.text);
      assert.equal(res.body.reason, 'last-sign-in-method');

      w.gh.signedIn = { id: 6262 + index, login: `liz${index}`, name: 'Liz', emails: [{ email: uniqueEmail('liz-gh'), primary: true, verified: false }] };
      const linkRes = await w.t.client('POST', '/api/auth/oauth/github/link', { headers: bearer(token), body: {} });
      const flow = flowOf(w, linkRes, linkRes.body.url);
      const approved = await fetch(flow.location, { redirect: 'manual' });
      await approved.arrayBuffer();
      assert.deepEqual(landing(w, await callback(w, new URL(approved.headers.get('location')!), flow.cookie)).query, { linked: 'github' });
      const both = (await identitiesOf(token)).identities;
      assert.deepEqual(
        both.map((i) => i.provider),
        ['acme', 'github'],
      );

      const stranger = await signUp(w.t.client);
      const strangerToken = (await logIn(w.t.client, stranger.email)).body['access-token'];
      res = await w.t.client('DELETE', `/api/account/identities/${acme.id}`, { headers: bearer(strangerToken) });
      assert.deepEqual([res.status, res.body.type], [403, 'reauthentication-required'], 'an unlink asks for the password');
      res = await w.t.client('DELETE', `/api/account/identities/${acme.id}`, { headers: bearer(strangerToken), body: { password: PASSWORD } });
      assert.equal(res.status, 404, "another account's identity is not found");

      res = await w.t.client('DELETE', `/api/account/identities/${acme.id}`, { headers: bearer(token) });
      assert.equal(res.status, 204, res.text);
      res = await w.t.client('DELETE', `/api/account/identities/${both[1].id}`, { headers: bearer(token) });
      assert.equal(res.status, 409);
      const unlinked = (await auditOf(w, account.id)).filter((e) => e.action === 'account.identity-unlinked');
      assert.deepEqual(
        unlinked.map((e) => [e.target_id, e.details]),
        [[acme.id, { provider: 'acme' }]],
      );
      const [notice] = await w.t.system.mail.mailbox.list({ to: account.email, kind: 'security-notice', limit: 1 });
      assert.match(notice?.subject ?? '', /acme was unlinked/, 'the unlink is told to the address');
      assert.equal((await w.t.client('DELETE', `/api/account/identities/not-a-uuid`, { headers: bearer(token) })).status, 400);
    });

    it('an account without a password refuses password log-in; a sensitive change needs a recent sign-in; its first password is set by change-password', async () => {
      const email = uniqueEmail('max');
      w.op.accounts.set('max', person(email));
      const { token, account } = await sessionOf(w, await signInWithAcme(w, 'max'));
      assert.equal((await logIn(w.t.client, email, 'any password at all')).status, 401);
      const old = await mintAccessToken(w.t.system, {
        id: account.id,
        email,
        sessionId: claimsOf(token).sid as string,
        authTime: Math.floor(Date.now() / 1000) - 11 * 60,
      });
      const del = await w.t.client('POST', '/api/account/delete', { headers: bearer(old), body: { password: 'any password at all' } });
      assert.deepEqual(
        [del.status, del.body.type, del.body.method],
        [403, 'reauthentication-required', 'recent-sign-in'],
        'a password it does not have proves nothing',
      );
      const stale = await w.t.client('POST', '/api/account/change-password', { headers: bearer(old), body: { password: PASSWORD } });
      assert.deepEqual([stale.status, stale.body.type], [403, 'reauthentication-required']);
      const set = await w.t.client('POST', '/api/account/change-password', { headers: bearer(token), body: { password: PASSWORD } });
      assert.equal(set.status, 204, set.text);
      const session = await logIn(w.t.client, email);
      assert.equal(session.status, 200);
      assert.equal((await identitiesOf(session.body['access-token']))['has-password'], true);
    });

    it('starts although a provider is down: its start answers 503 (a browser: the log-in page with a code)', async () => {
      const res = await w.t.client('GET', '/api/auth/oauth/down/start');
      assert.equal(res.status, 503, res.text);
      assert.equal(res.body.type, 'service-unavailable');
      assert.ok(res.headers['retry-after']);
      const browser = await w.t.client('GET', '/api/auth/oauth/down/start', { headers: { accept: 'text/html' } });
      assert.equal(browser.status, 302);
      assert.deepEqual(landing(w, browser), { path: '/log-in', query: { error: 'provider-unavailable', provider: 'down' } });
      assert.ok((await w.t.logEntries()).some((e) => e.id === 'oidc/discovery-failed' && (e.data as { provider?: string }).provider === 'down'));
    });

    if (index === 0) {
      it('discovers a provider that comes up later, after its back-off', async () => {
        const op = await startTestProvider({ redirectUris: [`${w.appUrl}/api/auth/oauth/down/callback`], port: w.downPort });
        try {
          let res = await w.t.client('GET', '/api/auth/oauth/down/start');
          for (let i = 0; i < 100 && res.status === 503; i++) {
            await sleep(200);
            res = await w.t.client('GET', '/api/auth/oauth/down/start');
          }
          assert.equal(res.status, 302, res.text);
          assert.equal(new URL(String(res.headers.location)).origin, op.issuer);
        } finally {
          await op.stop();
        }
      });
    }

    it('logs no secret of any flow: client secrets, codes, flow cookies, PKCE verifiers, tokens', async () => {
      const text = await w.t.logText();
      assert.ok(w.secrets.size > 20, `the flows saw their secrets (${w.secrets.size})`);
      for (const secret of w.secrets) assert.ok(!text.includes(secret), `a secret is in the log: ${secret.slice(0, 8)}…`);
      assert.match(text, /"code":"\[REDACTED\]"/, "the callback's code is redacted in the request's params");
    });
  });
}
