/**
 * Breached passwords (docs/security.md, "Breached passwords") against a stand-in
 * for Have I Been Pwned's range API on 127.0.0.1 that records what it was asked: only 5 hex
 * characters of the SHA-1 leave, with `Add-Padding: true`; a breached password is refused at
 * sign-up, reset and change; a padding line (count 0) is no match; a slow or failing service
 * lets the password through with a warning. PASSWORD_BREACH_CHECK is off in test by default.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { logIn, PASSWORD, signUp, uniqueEmail } from '../support/auth.js';
import { mailedLink } from '../support/mailbox.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

const BREACHED = 'password1234';
const PADDED = 'only-a-padding-line-matches-me';
const sha1 = (s: string) => createHash('sha1').update(s).digest('hex').toUpperCase();

interface StandIn {
  url: string;
  asked: Array<{ path: string; headers: IncomingHttpHeaders }>;
  mode: 'ok' | 'slow' | 'error';
  close(): Promise<void>;
}

async function standIn(): Promise<StandIn> {
  const state = { asked: [] as StandIn['asked'], mode: 'ok' as StandIn['mode'] };
  const server: Server = createServer((req, res) => {
    state.asked.push({ path: req.url ?? '', headers: req.headers });
    void (async () => {
      if (state.mode === 'slow') await sleep(3000);
      if (state.mode === 'error') {
        res.writeHead(503).end();
        return;
      }
      const prefix = (req.url ?? '').split('/').pop() ?? '';
      const lines = ['0018A45C4D1DEF81644B54AB7F969B88D65:0', '00D4F6E8FA6EECAD2A3AA415EEC418D38EC:2'];
      if (prefix === sha1(BREACHED).slice(0, 5)) lines.push(`${sha1(BREACHED).slice(5)}:2413945`);
      if (prefix === sha1(PADDED).slice(0, 5)) lines.push(`${sha1(PADDED).slice(5)}:0`);
      res.writeHead(200, { 'content-type': 'text/plain' }).end(lines.join('\r\n'));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get asked() {
      return state.asked;
    },
    get mode() {
      return state.mode;
    },
    set mode(m) {
      state.mode = m;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

for (const db of testDatabases()) {
  describe(`Breached passwords on ${db.name}`, () => {
    let t: TestSystem;
    let hibp: StandIn;
    before(async () => {
      hibp = await standIn();
      t = await startSystem(db, { PASSWORD_BREACH_CHECK: 'on', HIBP_API_URL: hibp.url });
    });
    after(async () => {
      await t?.stop();
      await hibp?.close();
    });

    it('sends only the first 5 hex characters of the SHA-1, padded, and refuses a breached password at sign-up', async () => {
      hibp.mode = 'ok';
      hibp.asked.length = 0;
      const res = await t.client('POST', '/api/account/sign-up', { body: { email: uniqueEmail(), password: BREACHED } });
      assert.deepEqual([res.status, res.body.type, res.body.errors?.[0].path], [400, 'password-breached', '/password']);
      assert.match(res.body.message, /breach/, 'the message says why');
      assert.equal(hibp.asked.length, 1);
      assert.match(hibp.asked[0].path, /^\/range\/[0-9A-F]{5}$/, 'five hex characters, nothing more');
      assert.equal(hibp.asked[0].path, `/range/${sha1(BREACHED).slice(0, 5)}`);
      assert.equal(hibp.asked[0].headers['add-padding'], 'true');
      assert.ok(!JSON.stringify(hibp.asked).includes(sha1(BREACHED).slice(5)), 'the rest of the hash never leaves');
      assert.equal(
        (await t.client('POST', '/api/account/sign-up', { body: { email: uniqueEmail(), password: PADDED } })).status,
        201,
        'a padding line (count 0) is no match',
      );
      assert.equal((await t.client('POST', '/api/account/sign-up', { body: { email: uniqueEmail(), password: PASSWORD } })).status, 201);
    });

    it('refuses a breached password at reset and at change', async () => {
      hibp.mode = 'ok';
      const account = await signUp(t.client);
      const access = (await logIn(t.client, account.email)).body['access-token'] as string;
      const change = await t.client('POST', '/api/account/change-password', {
        headers: { authorization: `Bearer ${access}` },
        body: { 'current-password': PASSWORD, password: BREACHED },
      });
      assert.deepEqual([change.status, change.body.type], [400, 'password-breached']);
      assert.equal((await t.client('POST', '/api/account/forgot-password', { body: { email: account.email } })).status, 202);
      const { token } = await mailedLink(t.system, account.email, 'reset-password');
      const reset = await t.client('POST', '/api/account/reset-password', { body: { token, password: BREACHED } });
      assert.deepEqual([reset.status, reset.body.type], [400, 'password-breached']);
      assert.equal(
        (await t.client('POST', '/api/account/reset-password', { body: { token, password: 'a fine new passphrase' } })).status,
        204,
        'the link still works for a good one',
      );
    });

    it('fails open: a slow or failing service lets the password through, with a warning', async () => {
      for (const mode of ['error', 'slow'] as const) {
        hibp.mode = mode;
        const res = await t.client('POST', '/api/account/sign-up', { body: { email: uniqueEmail(), password: BREACHED } });
        assert.equal(res.status, 201, `${mode}: accepted unchecked`);
      }
      hibp.mode = 'ok';
      const warnings = (await t.logEntries()).filter((e) => e.id === 'account/breach-check-unavailable');
      assert.equal(warnings.length, 2);
      assert.ok(
        warnings.every((w) => String(w.level).startsWith('warn')),
        'logged as warnings',
      );
      assert.ok(!(await t.logText()).includes(BREACHED), 'the password is never logged');
    });
  });
}
