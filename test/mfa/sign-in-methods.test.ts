/**
 * Two-factor and passkeys over HTTP (docs/sign-in.md), one system per database. TOTP: set-up,
 * turning it on with backup codes, the two-step log-in, replayed and wrong codes, backup codes used
 * once, the mfa-token's expiry, single use and wrong-code budget, the per-account limit, turning it
 * off, the audit entries, and no secret in the log. Passkeys: passkey-cases.ts; a passkey sign-in
 * of a two-factor account asks for no code.
 */
import assert from 'node:assert/strict';
import { generate } from 'lean-qr';
import { after, before, describe, it } from 'node:test';
import { cookiesOf, logIn, PASSWORD, signUpVerified } from '../support/auth.js';
import { FORMAT_BY_NAME, type TestResponse } from '../support/http.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { awayFromStepEdge, totpCode } from '../support/totp.js';
import { SoftwareAuthenticator } from '../support/webauthn.js';
import { APP_URL, passkeyCases } from './passkey-cases.js';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

for (const db of testDatabases()) {
  describe(`Two-factor and passkeys on ${db.name}`, () => {
    let t: TestSystem;
    // secrets seen during the run: none may reach the log
    const secrets: string[] = [];
    before(async () => {
      t = await startSystem(db, { MFA_LIMIT_ACCOUNT: '8/900', MAIL_FROM: 'Acme Cloud <no-reply@acme.test>', APP_URL });
    });
    after(async () => t?.stop());

    describe('passkeys', () => passkeyCases(() => t));

    /** A new account with two-factor on: its secret, backup codes and a live access token. */
    const withTwoFactor = async () => {
      const account = await signUpVerified(t);
      const access = (await logIn(t.client, account.email)).body['access-token'] as string;
      const setup = await t.client('POST', '/api/account/2fa/setup', { headers: bearer(access), body: {} });
      assert.equal(setup.status, 200, setup.text);
      const secret = setup.body.secret as string;
      secrets.push(secret);
      await awayFromStepEdge();
      const enabled = await t.client('POST', '/api/account/2fa/enable', { headers: bearer(access), body: { code: totpCode(secret, -1), password: PASSWORD } });
      assert.equal(enabled.status, 200, enabled.text);
      const backupCodes = enabled.body['backup-codes'] as string[];
      secrets.push(...backupCodes);
      return { ...account, access, secret, backupCodes };
    };

    const mfaToken = async (email: string): Promise<string> => {
      const res = await logIn(t.client, email);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body['mfa-required'], true);
      secrets.push(res.body['mfa-token']);
      return res.body['mfa-token'] as string;
    };
    const completeMfa = (body: Record<string, string>, format = FORMAT_BY_NAME.json): Promise<TestResponse> =>
      t.client('POST', '/api/account/log-in/mfa', { body, format });
    const actions = async (accountId: string) =>
      await t.system.database.db
        .selectFrom('audit_entry')
        .select(['action', 'details', 'organization_id', 'actor_account_id'])
        .where('account_id', '=', accountId)
        .orderBy('id')
        .execute();

    it('sets up, turns on, and then log-in asks for a code before any token', async () => {
      const account = await signUpVerified(t);
      const access = (await logIn(t.client, account.email)).body['access-token'] as string;
      assert.equal((await t.client('GET', '/api/account/me', { headers: bearer(access) })).body['two-factor-enabled'], false);

      const early = await t.client('POST', '/api/account/2fa/enable', { headers: bearer(access), body: { code: '123456', password: PASSWORD } });
      assert.deepEqual([early.status, early.body.type], [409, 'conflict'], 'nothing to enable before setup');

      const first = await t.client('POST', '/api/account/2fa/setup', { headers: bearer(access), body: {} });
      const setup = await t.client('POST', '/api/account/2fa/setup', { headers: bearer(access), body: {} });
      assert.equal(setup.status, 200, setup.text);
      const secret = setup.body.secret as string;
      secrets.push(first.body.secret, secret);
      assert.match(secret, /^[A-Z2-7]{32}$/, '160 bits, base32');
      const url = new URL(setup.body['otpauth-url']);
      assert.equal(url.protocol, 'otpauth:');
      assert.equal(url.searchParams.get('secret'), secret);
      assert.equal(url.searchParams.get('issuer'), 'Acme Cloud');
      assert.equal(url.searchParams.get('digits'), '6');
      assert.equal(url.searchParams.get('period'), '30');
      assert.ok(decodeURIComponent(url.pathname).includes(account.email));
      // the QR code is a PNG of that URI: its modules (lean-qr's own encoding of it) at 5 pixels, 4 of quiet zone each side
      const png = Buffer.from(String(setup.body['otpauth-qr']).replace(/^data:image\/png;base64,/, ''), 'base64');
      assert.equal(png.subarray(1, 4).toString(), 'PNG');
      assert.equal(png.readUInt32BE(16), (generate(setup.body['otpauth-url']).size + 8) * 5, 'its width in pixels');
      const stored = await t.system.database.db.selectFrom('totp_credential').selectAll().where('account_id', '=', account.id).executeTakeFirstOrThrow();
      assert.ok(!stored.secret_sealed.includes(secret), 'the secret is stored sealed');
      assert.equal(stored.enabled_at, null, 'pending');

      await awayFromStepEdge();
      const noPassword = await t.client('POST', '/api/account/2fa/enable', {
        headers: bearer(access),
        body: { code: totpCode(secret), password: 'not the password' },
      });
      assert.deepEqual([noPassword.status, noPassword.body.errors?.[0]?.path], [403, '/password'], 'a stolen access token alone cannot turn it on');
      const stale = await t.client('POST', '/api/account/2fa/enable', {
        headers: bearer(access),
        body: { code: totpCode(first.body.secret), password: PASSWORD },
      });
      assert.deepEqual([stale.status, stale.body.errors?.[0]?.path], [403, '/code'], 'a code of the replaced secret');
      const wrong = await t.client('POST', '/api/account/2fa/enable', { headers: bearer(access), body: { code: totpCode(secret, 3), password: PASSWORD } });
      assert.equal(wrong.status, 403, 'three steps ahead is outside the window');
      const enabled = await t.client('POST', '/api/account/2fa/enable', {
        headers: bearer(access),
        body: { code: totpCode(secret).replace(/^(...)/, '$1 '), password: PASSWORD },
      });
      assert.equal(enabled.status, 200, enabled.text);
      const codes = enabled.body['backup-codes'] as string[];
      secrets.push(...codes);
      assert.equal(codes.length, 10);
      assert.equal(new Set(codes).size, 10);
      for (const c of codes) assert.match(c, /^[0-9a-z]{5}-[0-9a-z]{5}$/);
      const hashes = await t.system.database.db.selectFrom('backup_code').select('code_hash').where('account_id', '=', account.id).execute();
      assert.equal(hashes.length, 10);
      assert.ok(
        hashes.every((h) => !codes.some((c) => h.code_hash.includes(c.replace('-', '')))),
        'stored hashed',
      );

      assert.equal((await t.client('GET', '/api/account/me', { headers: bearer(access) })).body['two-factor-enabled'], true);
      const again = await t.client('POST', '/api/account/2fa/setup', { headers: bearer(access), body: {} });
      assert.deepEqual([again.status, again.body.type], [409, 'conflict'], 'no new secret while it is on');

      const res = await logIn(t.client, account.email);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(Object.keys(res.body).sort(), ['expires-in', 'mfa-required', 'mfa-token']);
      assert.equal(res.body['expires-in'], 300);
      assert.equal(res.headers['set-cookie'], undefined, 'no cookie before the second factor');
      secrets.push(res.body['mfa-token']);

      // a wrong password is still the plain 401
      assert.equal((await logIn(t.client, account.email, 'not the password')).status, 401);

      // the code just used to turn it on is refused: its step is spent
      const replay = await completeMfa({ 'mfa-token': res.body['mfa-token'], code: totpCode(secret) });
      assert.deepEqual([replay.status, replay.body.errors?.[0]?.path], [401, '/code']);
      const older = await completeMfa({ 'mfa-token': res.body['mfa-token'], code: totpCode(secret, -1) });
      assert.equal(older.status, 401, 'an earlier step too');
      const done = await completeMfa({ 'mfa-token': res.body['mfa-token'], code: totpCode(secret, 1) }, FORMAT_BY_NAME.edn);
      assert.equal(done.status, 200, done.text);
      assert.equal(done.headers['content-type'], 'application/edn');
      assert.equal(done.body.account.id, account.id);
      assert.equal(done.body.account['two-factor-enabled'], true);
      assert.ok(cookiesOf(done)['refresh-token']?.value, 'the refresh cookie, as log-in sets it');
      assert.equal((await t.client('GET', '/api/account/me', { headers: bearer(done.body['access-token']) })).status, 200);
      const refreshed = await t.client('POST', '/api/account/refresh', { body: { 'refresh-token': done.body['refresh-token'] } });
      assert.equal(refreshed.status, 200, 'a normal session');

      const used = await completeMfa({ 'mfa-token': res.body['mfa-token'], code: totpCode(secret, 1) });
      assert.deepEqual([used.status, used.body.errors?.[0]?.path], [401, '/mfa-token'], 'the mfa-token is single-use');

      const entries = await actions(account.id);
      const personal = await t.system.database.db
        .selectFrom('organization')
        .select('id')
        .where('personal_account_id', '=', account.id)
        .executeTakeFirstOrThrow();
      const enabledEntry = entries.find((e) => e.action === 'account.2fa-enabled')!;
      assert.equal(enabledEntry.organization_id, personal.id);
      assert.equal(enabledEntry.actor_account_id, account.id);
      assert.ok(entries.some((e) => e.action === 'account.logged-in' && e.details.method === 'totp'));
      // (the wrong password above has an entry of its own: reason wrong-password)
      assert.equal(
        entries.filter((e) => e.action === 'account.log-in-failed' && e.details.reason === 'wrong-code').length,
        2,
        'the replayed and the older code',
      );
    });

    it('backup codes log in once each, in any spelling', async () => {
      const a = await withTwoFactor();
      const [first, second] = a.backupCodes;
      const token = await mfaToken(a.email);
      const both = await completeMfa({ 'mfa-token': token, code: '000000', 'backup-code': first });
      assert.deepEqual([both.status, both.body.type], [400, 'request-coercion'], 'one factor at a time');
      const none = await completeMfa({ 'mfa-token': token });
      assert.equal(none.status, 400);
      const ok = await completeMfa({ 'mfa-token': token, 'backup-code': ` ${first.toUpperCase().replace('-', ' ')} ` }, FORMAT_BY_NAME.transit);
      assert.equal(ok.status, 200, ok.text);
      assert.equal(ok.body.account.email, a.email);

      const token2 = await mfaToken(a.email);
      const reused = await completeMfa({ 'mfa-token': token2, 'backup-code': first });
      assert.deepEqual([reused.status, reused.body.errors?.[0]?.path], [401, '/backup-code'], 'used once');
      const other = await completeMfa({ 'mfa-token': token2, 'backup-code': second });
      assert.equal(other.status, 200, 'the next one still works');

      const left = await t.system.database.db.selectFrom('backup_code').select('id').where('account_id', '=', a.id).where('used_at', 'is', null).execute();
      assert.equal(left.length, 8);
      const entries = await actions(a.id);
      assert.equal(entries.filter((e) => e.action === 'account.backup-code-used').length, 2);
      assert.equal(entries.filter((e) => e.action === 'account.logged-in' && e.details.method === 'backup-code').length, 2);
    });

    it("an mfa-token expires, dies after five wrong codes, and the account's failures are limited", async () => {
      const a = await withTwoFactor();
      const expiring = await mfaToken(a.email);
      await t.system.database.db
        .updateTable('mfa_login')
        .set({ expires_at: new Date(Date.now() - 1000) })
        .where('account_id', '=', a.id)
        .execute();
      const expired = await completeMfa({ 'mfa-token': expiring, code: totpCode(a.secret) });
      assert.deepEqual([expired.status, expired.body.errors?.[0]?.path], [401, '/mfa-token']);
      const unknown = await completeMfa({ 'mfa-token': 'not-a-token', code: totpCode(a.secret) });
      assert.deepEqual([unknown.status, unknown.body.errors?.[0]?.path], [401, '/mfa-token']);

      const token = await mfaToken(a.email);
      for (let i = 0; i < 5; i++) {
        const wrong = await completeMfa({ 'mfa-token': token, 'backup-code': `wrong-${i}` });
        assert.deepEqual([wrong.status, wrong.body.errors?.[0]?.path], [401, '/backup-code'], `wrong code ${i + 1}`);
      }
      const spent = await completeMfa({ 'mfa-token': token, code: totpCode(a.secret) });
      assert.deepEqual([spent.status, spent.body.errors?.[0]?.path], [401, '/mfa-token'], 'five wrong codes spend the token');

      // MFA_LIMIT_ACCOUNT=8/900: three more wrong codes on a new token, then 429 even for the right one
      const next = await mfaToken(a.email);
      for (let i = 0; i < 3; i++) assert.equal((await completeMfa({ 'mfa-token': next, code: '000000' })).status, 401);
      const limited = await completeMfa({ 'mfa-token': next, code: totpCode(a.secret) });
      assert.deepEqual([limited.status, limited.body.type], [429, 'rate-limited']);
      assert.ok(Number(limited.headers['retry-after']) > 0);
      // another account from the same address is not locked out
      const b = await withTwoFactor();
      const bToken = await mfaToken(b.email);
      assert.equal((await completeMfa({ 'mfa-token': bToken, code: totpCode(b.secret) })).status, 200);
    });

    it('turns off with the password and a code or a backup code', async () => {
      const a = await withTwoFactor();
      const wrongPassword = await t.client('POST', '/api/account/2fa/disable', {
        headers: bearer(a.access),
        body: { password: 'wrong password', code: totpCode(a.secret) },
      });
      assert.deepEqual([wrongPassword.status, wrongPassword.body.errors?.[0]?.path], [403, '/password']);
      const wrongCode = await t.client('POST', '/api/account/2fa/disable', { headers: bearer(a.access), body: { password: PASSWORD, code: '000000' } });
      assert.deepEqual([wrongCode.status, wrongCode.body.errors?.[0]?.path], [403, '/code']);
      const noCode = await t.client('POST', '/api/account/2fa/disable', { headers: bearer(a.access), body: { password: PASSWORD } });
      assert.equal(noCode.status, 400);
      const off = await t.client('POST', '/api/account/2fa/disable', { headers: bearer(a.access), body: { password: PASSWORD, code: totpCode(a.secret) } });
      assert.equal(off.status, 204, off.text);
      const twice = await t.client('POST', '/api/account/2fa/disable', {
        headers: bearer(a.access),
        body: { password: PASSWORD, code: totpCode(a.secret, 1) },
      });
      assert.deepEqual([twice.status, twice.body.type], [409, 'conflict']);
      assert.equal((await t.client('GET', '/api/account/me', { headers: bearer(a.access) })).body['two-factor-enabled'], false);
      const plain = await logIn(t.client, a.email);
      assert.ok(plain.body['access-token'], 'log-in gives tokens again');
      for (const table of ['totp_credential', 'backup_code', 'mfa_login'] as const) {
        const rows = await t.system.database.db.selectFrom(table).select('account_id').where('account_id', '=', a.id).execute();
        assert.equal(rows.length, 0, `${table} emptied`);
      }
      assert.ok((await actions(a.id)).some((e) => e.action === 'account.2fa-disabled' && e.details.method === 'totp'));

      const b = await withTwoFactor();
      const byBackup = await t.client('POST', '/api/account/2fa/disable', {
        headers: bearer(b.access),
        body: { password: PASSWORD, 'backup-code': b.backupCodes[9] },
      });
      assert.equal(byBackup.status, 204, byBackup.text);
      const entries = (await actions(b.id)).map((e) => e.action);
      assert.ok(entries.includes('account.backup-code-used') && entries.includes('account.2fa-disabled'));

      // account deletion takes the two-factor rows along (foreign keys cascade)
      const c = await withTwoFactor();
      await mfaToken(c.email);
      const deleted = await t.client('POST', '/api/account/delete', { headers: bearer(c.access), body: { password: PASSWORD } });
      assert.equal(deleted.status, 204, deleted.text);
      for (const table of ['totp_credential', 'backup_code', 'mfa_login'] as const) {
        const rows = await t.system.database.db.selectFrom(table).select('account_id').where('account_id', '=', c.id).execute();
        assert.equal(rows.length, 0, `${table} gone with the account`);
      }
    });

    it('a passkey signs a two-factor account in without a code: it is two factors itself', async () => {
      const a = await withTwoFactor();
      const authenticator = new SoftwareAuthenticator({ origin: APP_URL });
      const options = await t.client('POST', '/api/account/passkeys/register/options', { headers: bearer(a.access), body: { password: PASSWORD } });
      const created = await t.client('POST', '/api/account/passkeys/register/verify', {
        headers: bearer(a.access),
        body: { response: authenticator.register(options.body) },
      });
      assert.equal(created.status, 201, created.text);
      const request = await t.client('POST', '/api/auth/passkey/options', { body: {} });
      const res = await t.client('POST', '/api/auth/passkey/verify', {
        body: { 'challenge-id': request.body['challenge-id'], response: authenticator.assert(request.body.options) },
      });
      assert.equal(res.status, 200, res.text);
      assert.ok(res.body['access-token']);
      assert.equal(res.body.account['two-factor-enabled'], true);
      assert.equal(res.body['mfa-required'], undefined);
    });

    it('no secret, code, backup code or mfa-token reaches the log', async () => {
      const text = await t.logText();
      assert.ok(text.includes('/api/account/log-in/mfa'), 'the requests were logged');
      assert.ok(secrets.length > 20);
      for (const secret of secrets) assert.ok(!text.includes(secret), `a secret in the log: ${secret.slice(0, 4)}…`);
      assert.ok(!/"code":"\d{6}"/.test(text) && !/"backup-code":"[^[]/.test(text), 'codes are redacted');
    });
  });
}
