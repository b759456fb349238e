/**
 * Passkey cases over HTTP, run by sign-in-methods.test.ts on its system (APP_URL
 * https://app.example.com): registration and sign-in verified against real WebAuthn structures
 * from a software authenticator, spent and expired challenges, wrong origin, unknown
 * credentials, counter regression, another account's passkey, EDN and Transit bodies, the export
 * and the audit entries.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { cookiesOf, logIn, PASSWORD, signUpVerified } from '../support/auth.js';
import { FORMAT_BY_NAME, type TestResponse } from '../support/http.js';
import type { TestSystem } from '../support/system.js';
import { SoftwareAuthenticator } from '../support/webauthn.js';

export const APP_URL = 'https://app.example.com';
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
type Format = (typeof FORMAT_BY_NAME)[keyof typeof FORMAT_BY_NAME];

export function passkeyCases(system: () => TestSystem): void {
  const client = () => system().client;
  const db = () => system().system.database.db;

  const account = async () => {
    const a = await signUpVerified(system());
    return { ...a, access: (await logIn(client(), a.email)).body['access-token'] as string };
  };
  const registerOptions = async (access: string, format: Format = FORMAT_BY_NAME.json) => {
    const res = await client()('POST', '/api/account/passkeys/register/options', { headers: bearer(access), body: { password: PASSWORD }, format });
    assert.equal(res.status, 200, res.text);
    return res.body;
  };
  const register = async (access: string, authenticator: SoftwareAuthenticator, name?: string, format: Format = FORMAT_BY_NAME.json) => {
    const options = await registerOptions(access, format);
    return client()('POST', '/api/account/passkeys/register/verify', {
      headers: bearer(access),
      format,
      body: { response: authenticator.register(options), ...(name ? { name } : {}) },
    });
  };
  const signInOptions = async (format: Format = FORMAT_BY_NAME.json) => {
    const res = await client()('POST', '/api/auth/passkey/options', { body: {}, format });
    assert.equal(res.status, 200, res.text);
    return res.body as { 'challenge-id': string; options: { challenge: string; rpId: string; allowCredentials?: unknown[]; userVerification: string } };
  };
  const signIn = (challengeId: string, response: unknown, format: Format = FORMAT_BY_NAME.json): Promise<TestResponse> =>
    client()('POST', '/api/auth/passkey/verify', { body: { 'challenge-id': challengeId, response }, format });

  it('registers a passkey and signs in with it, no email asked', async () => {
    const a = await account();
    const authenticator = new SoftwareAuthenticator({ origin: APP_URL });
    const noPassword = await client()('POST', '/api/account/passkeys/register/options', { headers: bearer(a.access), body: { password: 'not it' } });
    assert.deepEqual([noPassword.status, noPassword.body.errors?.[0]?.path], [403, '/password'], 'a stolen access token alone adds no passkey');
    const options = await registerOptions(a.access);
    assert.equal(options.rp.id, 'app.example.com', "the RP id is APP_URL's host");
    assert.equal(options.user.name, a.email);
    assert.equal(options.authenticatorSelection.residentKey, 'required');
    assert.equal(options.authenticatorSelection.userVerification, 'required');
    assert.equal(options.attestation, 'none');
    const created = await client()('POST', '/api/account/passkeys/register/verify', {
      headers: bearer(a.access),
      body: { response: authenticator.register(options), name: 'Laptop' },
    });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(Object.keys(created.body).sort(), ['created-at', 'id', 'last-used-at', 'name']);
    assert.equal(created.body.name, 'Laptop');
    assert.equal(created.body['last-used-at'], null);

    // the registration's challenge is spent: the same response again is refused
    const again = await client()('POST', '/api/account/passkeys/register/verify', {
      headers: bearer(a.access),
      body: { response: authenticator.register(options) },
    });
    assert.deepEqual([again.status, again.body.type], [400, 'invalid-challenge']);

    const second = await register(a.access, authenticator);
    assert.deepEqual([second.status, second.body.type], [409, 'conflict'], 'one credential, registered once');
    const excluded = await registerOptions(a.access);
    assert.deepEqual(
      excluded.excludeCredentials.map((c: { id: string }) => c.id),
      [authenticator.id],
    );

    const { 'challenge-id': challengeId, options: request } = await signInOptions();
    assert.equal(request.rpId, 'app.example.com');
    assert.equal(request.userVerification, 'required');
    assert.ok(!request.allowCredentials || request.allowCredentials.length === 0, 'discoverable: no credential list');
    const res = await signIn(challengeId, authenticator.assert(request));
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.account.id, a.id);
    assert.equal(res.body['token-type'], 'Bearer');
    assert.ok(cookiesOf(res)['refresh-token']?.value, 'the refresh cookie, as log-in sets it');
    assert.equal((await client()('GET', '/api/account/me', { headers: bearer(res.body['access-token']) })).status, 200);

    const listed = await client()('GET', '/api/account/passkeys', { headers: bearer(a.access) });
    assert.equal(listed.status, 200);
    assert.equal(listed.body.passkeys.length, 1);
    assert.ok(listed.body.passkeys[0]['last-used-at'], 'last use recorded');

    const replay = await signIn(challengeId, authenticator.assert(request));
    assert.deepEqual([replay.status, replay.body.type], [400, 'invalid-challenge'], 'a sign-in challenge is single-use');

    const audit = await db().selectFrom('audit_entry').select(['action', 'details', 'target_type']).where('account_id', '=', a.id).orderBy('id').execute();
    assert.ok(audit.some((e) => e.action === 'account.passkey-added' && e.target_type === 'passkey'));
    assert.ok(audit.some((e) => e.action === 'account.logged-in' && e.details.method === 'passkey'));

    const exported = await client()('GET', '/api/account/export', { headers: bearer(a.access) });
    assert.equal(exported.status, 200, exported.text);
    assert.deepEqual(
      exported.body.passkeys.map((p: { id: string }) => p.id),
      [created.body.id],
    );
    assert.equal(exported.body.account['two-factor-enabled'], false);
    assert.ok(!exported.text.includes('public'), 'no key material in the export');
  });

  it('refuses expired challenges, a wrong origin, unknown passkeys and a counter that went back', async () => {
    const a = await account();
    const authenticator = new SoftwareAuthenticator({ origin: APP_URL });

    const wrongOrigin = await registerOptions(a.access);
    const foreign = await client()('POST', '/api/account/passkeys/register/verify', {
      headers: bearer(a.access),
      body: { response: authenticator.register(wrongOrigin, { origin: 'https://evil.example.net' }) },
    });
    assert.deepEqual([foreign.status, foreign.body.type], [400, 'invalid-passkey-response']);

    const expiring = await registerOptions(a.access);
    await db()
      .updateTable('webauthn_challenge')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('account_id', '=', a.id)
      .execute();
    const late = await client()('POST', '/api/account/passkeys/register/verify', {
      headers: bearer(a.access),
      body: { response: authenticator.register(expiring) },
    });
    assert.deepEqual([late.status, late.body.type], [400, 'invalid-challenge']);

    const forged = await client()('POST', '/api/account/passkeys/register/verify', {
      headers: bearer(a.access),
      body: { response: authenticator.register(await registerOptions(a.access), { challenge: 'bm90LXRoZS1jaGFsbGVuZ2U' }) },
    });
    assert.deepEqual([forged.status, forged.body.type], [400, 'invalid-challenge'], 'a challenge the server never gave');

    assert.equal((await register(a.access, authenticator)).status, 201);

    const stranger = new SoftwareAuthenticator({ origin: APP_URL });
    stranger.rpId = 'app.example.com';
    const unknownRequest = await signInOptions();
    const unknown = await signIn(unknownRequest['challenge-id'], stranger.assert(unknownRequest.options));
    assert.deepEqual([unknown.status, unknown.body.type], [401, 'unauthorized'], 'a passkey registered nowhere');

    const expiredRequest = await signInOptions();
    await db()
      .updateTable('webauthn_challenge')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', expiredRequest['challenge-id'])
      .execute();
    const expired = await signIn(expiredRequest['challenge-id'], authenticator.assert(expiredRequest.options));
    assert.deepEqual([expired.status, expired.body.type], [400, 'invalid-challenge']);

    const first = await signInOptions();
    assert.equal((await signIn(first['challenge-id'], authenticator.assert(first.options, { counter: 10 }))).status, 200);
    const cloned = await signInOptions();
    const back = await signIn(cloned['challenge-id'], authenticator.assert(cloned.options, { counter: 10 }));
    assert.deepEqual([back.status, back.body.type], [401, 'unauthorized'], 'a counter that did not grow');
    // one answer for every failure: nothing tells whether a credential id is registered here
    assert.deepEqual(back.body, unknown.body);
    assert.equal(unknown.body.reason, undefined);
    const reasons = (await system().logEntries()).filter((e) => e.id === 'account/passkey-sign-in-failed').map((e) => e.data.reason);
    assert.ok(reasons.includes('unknown-credential') && reasons.includes('verification-failed'), 'the reason is in the log only');
    const stored = await db().selectFrom('passkey').select('counter').where('account_id', '=', a.id).executeTakeFirstOrThrow();
    assert.equal(Number(stored.counter), 10);

    const unverified = new SoftwareAuthenticator({ origin: APP_URL, userVerified: false });
    const noUv = await register(a.access, unverified);
    assert.deepEqual([noUv.status, noUv.body.type], [400, 'invalid-passkey-response'], 'user verification is required');

    const malformed = await client()('POST', '/api/auth/passkey/verify', { body: { 'challenge-id': 'nope', response: { id: 'x' } } });
    assert.deepEqual([malformed.status, malformed.body.type], [400, 'request-coercion']);
  });

  it("renames and removes only the caller's passkeys; another account's id is 404", async () => {
    const a = await account();
    const b = await account();
    const authenticator = new SoftwareAuthenticator({ origin: APP_URL });
    const created = await register(a.access, authenticator, 'Phone');
    assert.equal(created.status, 201, created.text);
    const id = created.body.id as string;

    for (const [method, body] of [
      ['PATCH', { name: 'Mine now' }],
      ['DELETE', { password: PASSWORD }],
    ] as const) {
      const res = await client()(method, `/api/account/passkeys/${id}`, { headers: bearer(b.access), body });
      assert.deepEqual([res.status, res.body.type], [404, 'not-found'], `${method} of another account's passkey`);
    }
    assert.equal((await client()('GET', '/api/account/passkeys', { headers: bearer(b.access) })).body.passkeys.length, 0);

    const renamed = await client()('PATCH', `/api/account/passkeys/${id}`, { headers: bearer(a.access), body: { name: 'Work phone' } });
    assert.deepEqual([renamed.status, renamed.body.name], [200, 'Work phone']);
    const empty = await client()('PATCH', `/api/account/passkeys/${id}`, { headers: bearer(a.access), body: { name: '' } });
    assert.equal(empty.status, 400);
    const spaces = await client()('PATCH', `/api/account/passkeys/${id}`, { headers: bearer(a.access), body: { name: ' \t ' } });
    assert.deepEqual([spaces.status, spaces.body.type, spaces.body.errors?.[0].path], [400, 'request-coercion', '/name'], 'spaces alone are no name');
    const padded = await client()('PATCH', `/api/account/passkeys/${id}`, { headers: bearer(a.access), body: { name: '  Work phone 2 ' } });
    assert.equal(padded.body.name, 'Work phone 2');

    const unconfirmed = await client()('DELETE', `/api/account/passkeys/${id}`, { headers: bearer(a.access) });
    assert.deepEqual(
      [unconfirmed.status, unconfirmed.body.type, unconfirmed.body.method],
      [403, 'reauthentication-required', 'password'],
      'a removal asks for the password',
    );
    const removed = await client()('DELETE', `/api/account/passkeys/${id}`, { headers: bearer(a.access), body: { password: PASSWORD } });
    assert.equal(removed.status, 204);
    const gone = await client()('DELETE', `/api/account/passkeys/${id}`, { headers: bearer(a.access), body: { password: PASSWORD } });
    assert.equal(gone.status, 404);
    const request = await signInOptions();
    assert.equal((await signIn(request['challenge-id'], authenticator.assert(request.options))).status, 401, 'a removed passkey signs nobody in');

    const actions = (await db().selectFrom('audit_entry').select('action').where('account_id', '=', a.id).execute()).map((e) => e.action);
    for (const action of ['account.passkey-added', 'account.passkey-renamed', 'account.passkey-removed']) assert.ok(actions.includes(action), action);
    assert.equal((await client()('GET', '/api/account/passkeys')).status, 401, 'authentication required');
  });

  it('works in EDN and Transit; account deletion takes the passkeys along', async () => {
    const a = await account();
    const authenticator = new SoftwareAuthenticator({ origin: APP_URL });
    const created = await register(a.access, authenticator, 'EDN key', FORMAT_BY_NAME.edn);
    assert.equal(created.status, 201, created.text);
    assert.equal(created.headers['content-type'], 'application/edn');

    const request = await signInOptions(FORMAT_BY_NAME.transit);
    const res = await signIn(request['challenge-id'], authenticator.assert(request.options), FORMAT_BY_NAME.transit);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers['content-type'], 'application/transit+json');
    assert.equal(res.body.account.id, a.id);

    assert.equal((await client()('POST', '/api/account/delete', { headers: bearer(a.access), body: { password: PASSWORD } })).status, 204);
    assert.equal((await db().selectFrom('passkey').select('id').where('account_id', '=', a.id).execute()).length, 0);
    const after = await signInOptions();
    assert.equal((await signIn(after['challenge-id'], authenticator.assert(after.options))).status, 401);
  });
}
