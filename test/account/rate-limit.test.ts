import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AccountService } from '../../src/account/service.js';
import { authModule, type AuthServices } from '../../src/auth/module.js';
import { PasswordHasher } from '../../src/auth/passwords.js';
import { LoginRateLimiter, SignUpRateLimiter } from '../../src/auth/rate-limit.js';
import { RefreshTokens } from '../../src/auth/refresh-tokens.js';
import { PASSWORD, signUp, uniqueEmail } from '../support/auth.js';
import { startSystem, testDatabases, TEST_JWT_SECRET, type TestSystem } from '../support/system.js';

/** A log-in from `address`: with TRUST_PROXY=1 the right-most X-Forwarded-For entry is the client. */
const logInFrom = (t: TestSystem, address: string, email: string, password = PASSWORD) =>
  t.client('POST', '/api/account/log-in', { headers: { 'x-forwarded-for': address }, body: { email, password } });

for (const db of testDatabases()) {
  describe(`Log-in limits count failures only, per email + address, on ${db.name}`, () => {
    let t: TestSystem;
    // the defaults: 10 failures per email + address, 100 per address, in 15 minutes
    before(async () => {
      t = await startSystem(db, { TRUST_PROXY: '1', LOGIN_LIMIT_EMAIL: '', LOGIN_LIMIT_ADDRESS: '' });
    });
    after(async () => t?.stop());

    it('lets the owner in from another address after anyone else failed eleven times', async () => {
      const { email } = await signUp(t.client, uniqueEmail('VICTIM'));
      const attacker = '198.51.100.1';
      for (let i = 0; i < 10; i++) {
        // case variants share the counter, as they share the account
        const guess = await logInFrom(t, attacker, i % 2 ? email.toUpperCase() : email, `wrong-password-${i}`);
        assert.equal(guess.status, 401, `guess ${i + 1}`);
      }
      const eleventh = await logInFrom(t, attacker, email, 'wrong-password-10');
      assert.equal(eleventh.status, 429);
      assert.equal(eleventh.body.type, 'rate-limited');

      const owner = await logInFrom(t, '203.0.113.50', email);
      assert.equal(owner.status, 200, owner.text);
      const fromAttacker = await logInFrom(t, attacker, email);
      assert.equal(fromAttacker.status, 429);
      assert.ok(Number(fromAttacker.headers['retry-after']) > 0);
      assert.ok(Number(fromAttacker.headers['retry-after']) <= 900);
    });

    it('lets no burst of concurrent guesses past the limit', async () => {
      const { email } = await signUp(t.client);
      const statuses = await Promise.all(Array.from({ length: 25 }, () => logInFrom(t, '198.51.100.9', email, 'wrong-password').then((r) => r.status)));
      assert.equal(statuses.filter((s) => s === 401).length, 10);
      assert.equal(statuses.filter((s) => s === 429).length, 15);
    });

    it('does not count successful log-ins', async () => {
      const { email } = await signUp(t.client);
      for (let i = 0; i < 20; i++) assert.equal((await logInFrom(t, '198.51.100.2', email)).status, 200, `log-in ${i + 1}`);
      // nor do they hide failures: ten more wrong guesses still reach the limit
      for (let i = 0; i < 10; i++) assert.equal((await logInFrom(t, '198.51.100.2', email, 'wrong-password')).status, 401);
      assert.equal((await logInFrom(t, '198.51.100.2', email)).status, 429);
    });
  });

  describe(`The per-address limit and TRUST_PROXY=1 on ${db.name}`, () => {
    let t: TestSystem;
    before(async () => {
      t = await startSystem(db, { TRUST_PROXY: '1', LOGIN_LIMIT_ADDRESS: '5/60' });
    });
    after(async () => t?.stop());

    it('takes the right-most X-Forwarded-For entry, so a client cannot pick its address', async () => {
      const { email } = await signUp(t.client);
      for (let i = 0; i < 5; i++) {
        const res = await t.client('POST', '/api/account/log-in', {
          headers: { 'x-forwarded-for': `10.9.0.${i}, 203.0.113.7` },
          body: { email: uniqueEmail(), password: PASSWORD },
        });
        assert.equal(res.status, 401, `attempt ${i + 1}`);
      }
      const sixth = await t.client('POST', '/api/account/log-in', {
        headers: { 'x-forwarded-for': '10.9.0.99, 203.0.113.7' },
        body: { email, password: PASSWORD },
      });
      assert.equal(sixth.status, 429, 'the address is over its limit, whatever the client wrote on the left');
      assert.equal((await logInFrom(t, '203.0.113.8', email)).status, 200, 'another address is not');
    });
  });

  describe(`Sign-up: a limit per address, no hashing for a taken email, on ${db.name}`, () => {
    let t: TestSystem;
    before(async () => {
      t = await startSystem(db, { TRUST_PROXY: '1', SIGNUP_LIMIT_ADDRESS: '20/3600' });
    });
    after(async () => t?.stop());

    it('refuses the 21st sign-up from one address with 429 and Retry-After, taken emails included', async () => {
      const signUpFrom = (address: string, email: string) =>
        t.client('POST', '/api/account/sign-up', { headers: { 'x-forwarded-for': address }, body: { email, password: PASSWORD } });
      const taken = uniqueEmail();
      assert.equal((await signUpFrom('198.51.100.3', taken)).status, 201);
      for (let i = 1; i < 20; i++) {
        const res = await signUpFrom('198.51.100.3', i % 4 ? uniqueEmail() : taken);
        assert.equal(res.status, i % 4 ? 201 : 409, `sign-up ${i + 1}`);
      }
      const limited = await signUpFrom('198.51.100.3', uniqueEmail());
      assert.equal(limited.status, 429);
      assert.equal(limited.body.type, 'rate-limited');
      assert.ok(Number(limited.headers['retry-after']) > 3500);
      assert.equal((await signUpFrom('198.51.100.4', uniqueEmail())).status, 201);
    });

    it('answers 409 without hashing, so a flood of them cannot take the hashing slots log-in needs', async () => {
      let hashes = 0;
      class CountingHasher extends PasswordHasher {
        override hash(password: string): Promise<string> {
          hashes++;
          return super.hash(password);
        }
      }
      const accounts = new AccountService({
        db: t.system.database.db,
        passwords: new CountingHasher(2),
        accessTokens: t.system.services<AuthServices>(authModule).accessTokens,
        refreshTokens: new RefreshTokens(t.system.database.db, { secret: TEST_JWT_SECRET, ttl: 3600, reuseGrace: 0 }, { markRevoked: () => undefined }),
        loginLimiter: new LoginRateLimiter({ email: null, address: null }),
        signUpLimiter: new SignUpRateLimiter(null),
        mail: t.system.mail,
        log: t.system.logs.logger('test'),
      });
      const email = uniqueEmail();
      await accounts.signUp({ email, password: PASSWORD }, { ip: '127.0.0.1', userAgent: null });
      assert.equal(hashes, 1);
      for (const variant of [email, email.toUpperCase()]) {
        await assert.rejects(
          accounts.signUp({ email: variant, password: PASSWORD }, { ip: '127.0.0.1', userAgent: null }),
          (err: { status?: number }) => err.status === 409,
        );
      }
      assert.equal(hashes, 1);
    });
  });
}
