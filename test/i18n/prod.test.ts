/**
 * The reader's language in prod (APP_ENV=prod), as one tries it on one's own machine (APP_URL
 * http on 127.0.0.1) and as it runs behind a TLS-ending proxy (APP_URL https, TRUST_PROXY): the
 * page is served in the browser's language (Arabic right to left); a 400 to a Spanish request is
 * in Spanish with the same type, place and paths as in English; a password reset asked for in
 * Spanish reaches a real SMTP server in its German recipient's language, its link on APP_URL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { smtpServer, type TestSmtpServer } from '../mail/smtp.js';
import { PASSWORD, uniqueEmail, verifyEmail } from '../support/auth.js';
import { makeClient } from '../support/http.js';
import { freePort } from '../support/net.js';
import { startSystem, testDatabases, TEST_JWT_SECRET, type TestSystem } from '../support/system.js';
import { startTlsProxy, type TlsProxy } from '../support/tls-proxy.js';
import { waitFor } from '../webhooks/support.js';

const PROD = { APP_ENV: 'prod', JWT_SECRET: TEST_JWT_SECRET, LOG_CONSOLE: 'off', SHUTDOWN_DELAY: '0', MAIL_POLL_MS: '50' };

const MODES = [
  { name: 'http on loopback', tls: false },
  { name: 'https behind a TLS-ending proxy', tls: true },
] as const;

for (const mode of MODES) {
  describe(`the reader's language in prod, ${mode.name}`, () => {
    let t: TestSystem;
    let proxy: TlsProxy | undefined;
    let smtp: TestSmtpServer;
    /** the system as its clients reach it: through the proxy when there is one */
    let app: TestSystem;
    let appUrl: string;

    before(async () => {
      smtp = await smtpServer();
      await smtp.listen();
      const port = await freePort();
      const env = { ...PROD, MAIL_URL: smtp.url, PORT: String(port) };
      if (mode.tls) {
        const proxyPort = await freePort();
        appUrl = `https://127.0.0.1:${proxyPort}`;
        t = await startSystem(testDatabases()[0], { ...env, APP_URL: appUrl, TRUST_PROXY: '1' });
        proxy = await startTlsProxy(t.url, proxyPort);
        app = { ...t, client: makeClient(appUrl, proxy.ca) };
      } else {
        appUrl = `http://127.0.0.1:${port}`;
        t = await startSystem(testDatabases()[0], { ...env, APP_URL: appUrl });
        app = t;
      }
      assert.equal(t.system.config.env, 'prod');
    });
    after(async () => {
      await proxy?.close();
      await t?.stop();
      await smtp?.close();
    });

    it("serves the page in the browser's language, Arabic right to left", async () => {
      const page = await app.client('GET', '/', { headers: { accept: 'text/html', 'accept-language': 'ar-EG,ar;q=0.9,en;q=0.5' } });
      assert.equal(page.status, 200);
      assert.match(page.text, /<html lang="ar" dir="rtl"/);
      const garbage = await app.client('GET', '/', { headers: { accept: 'text/html', 'accept-language': ';;;q=x,,' } });
      assert.equal(garbage.status, 200);
      assert.match(garbage.text, /<html lang="en" dir="ltr"/);
    });

    it('answers a Spanish 400 in Spanish, its type, place and paths as in English', async () => {
      const body = { email: 'not-an-address', password: 'short' };
      const english = await app.client('POST', '/api/account/sign-up', { body });
      const spanish = await app.client('POST', '/api/account/sign-up', { body, headers: { 'accept-language': 'es-MX' } });
      assert.equal(english.status, 400, english.text);
      assert.equal(spanish.status, 400, spanish.text);
      assert.equal(spanish.body.type, english.body.type);
      assert.equal(spanish.body.in, english.body.in);
      const paths = (res: typeof english) => (res.body.errors as Array<{ path: string }>).map((e) => e.path).sort();
      assert.deepEqual(paths(spanish), paths(english));
      assert.notEqual(spanish.body.message, english.body.message);
      assert.match(JSON.stringify(spanish.body.errors), /caracteres|debe/);
    });

    it("sends a password reset asked for in Spanish in its German recipient's language, over SMTP", async () => {
      const email = uniqueEmail('prod-i18n');
      const signUp = await app.client('POST', '/api/account/sign-up', {
        body: { email, password: PASSWORD, name: 'Grete' },
        headers: { 'accept-language': 'de-AT' },
      });
      assert.equal(signUp.status, 201, signUp.text);
      assert.equal(signUp.body.account.locale, 'de');
      await verifyEmail(app, email);
      const asked = await app.client('POST', '/api/account/forgot-password', { body: { email }, headers: { 'accept-language': 'es' } });
      assert.equal(asked.status, 202, asked.text);
      const mail = await waitFor('the reset email', () => smtp.received.find((m) => m.envelopeTo.includes(email) && /Passwort/.test(m.parsed.subject ?? '')));
      assert.equal(mail.parsed.subject, 'Setzen Sie Ihr SaaS-Passwort zurück');
      assert.match(mail.parsed.text ?? '', /^Hallo Grete,/);
      assert.match(String(mail.parsed.html), /<html lang="de" dir="ltr">/);
      assert.ok((mail.parsed.text ?? '').includes(`${appUrl}/reset-password?token=`), mail.parsed.text);
      assert.doesNotMatch(mail.parsed.text ?? '', /contraseña/);
    });
  });
}
