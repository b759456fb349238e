/**
 * Passkeys and two-factor in a real browser (Debian's Chromium through playwright-core), with
 * Chromium's virtual authenticator (CDP `WebAuthn`: CTAP2, internal transport, resident keys,
 * user verification) standing in for the device: a signed-in user adds a passkey on the account
 * page, logs out and signs in with it (no email typed); then sets up two-factor from the secret
 * the page shows, keeps the backup codes, logs out, and logs in with password and a code the
 * test computes with the server's own TOTP library. The app runs at http://localhost:<port>
 * (a secure context, and a valid RP id). No console error or failing request over the run.
 */
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import type { Page } from 'playwright-core';
import { signUpVerified, uniqueEmail, PASSWORD } from '../support/auth.js';
import { browserHarness, PUBLIC_DIR } from '../support/browser.js';
import { freePort } from '../support/net.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { awayFromStepEdge, totpCode } from '../support/totp.js';

/** the server's 403 `reauthentication-required` before the dialog: Chromium logs it as a console error too */
const REAUTH_ASKED = [/ response: POST \/api\/account\/(passkeys\/register\/options|2fa\/enable) 403$/, /console: .*status of 403/];

const browser = browserHarness('sign-in-methods');

describe('passkeys and two-factor in the browser', { skip: browser.skip }, () => {
  let t: TestSystem;
  let page: Page;
  let base = '';
  const email = uniqueEmail('passkey');
  let totpSecret = '';

  before(async () => {
    const port = await freePort();
    base = `http://localhost:${port}`;
    t = await startSystem(testDatabases()[0], { PUBLIC_DIR, PORT: String(port), APP_URL: base });
    // lasting sign-in methods need a verified address
    await signUpVerified(t, email);
    await browser.launch();
    page = await browser.openPage('page');
    const cdp = await browser.contextOf('page').newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
  });
  after(async () => {
    await browser.close();
    await t?.stop();
  });

  const step = browser.step;

  const logOut = async () => {
    await page.locator('#account-menu-button').click();
    await page.locator('#log-out').click();
    await page.waitForURL(`${base}/log-in`);
  };
  const logInWithPassword = async () => {
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
  };

  const toSecurity = async () => {
    await page.locator('#nav-security').click();
    await page.waitForURL(`${base}/settings/security`);
  };

  step(
    'adds a passkey on the security page',
    async () => {
      await page.goto(`${base}/log-in`);
      await logInWithPassword();
      await page.waitForURL(`${base}/account`);
      await toSecurity();
      await page.locator('#no-passkeys').waitFor();
      await page.getByLabel('Name for a new passkey').fill('Virtual key');
      await page.getByRole('button', { name: 'Add a passkey' }).click();
      // the server asks for the password (re-authentication): a dialog takes it and the request goes again
      await page.locator('#reauth-password').fill(PASSWORD);
      await page.locator('#reauth-dialog .dialog-ok').click();
      await page.locator('#passkeys tr[data-passkey] [data-field=name]', { hasText: 'Virtual key' }).waitFor();
      const stored = await t.system.database.db.selectFrom('passkey').select(['name', 'transports']).execute();
      assert.deepEqual(
        stored.map((p) => p.name),
        ['Virtual key'],
      );
    },
    REAUTH_ASKED,
  );

  step('logs out and signs in with the passkey, no email typed', async () => {
    await logOut();
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.waitForURL(`${base}/account`);
    assert.equal(await page.locator('#account [data-field=email]').textContent(), email);
    await toSecurity();
    await page.locator('#passkeys tr[data-passkey] [data-field=last-used-at]').filter({ hasNotText: 'never' }).waitFor();
  });

  step("renames the passkey in the app's own dialog, never the browser's prompt; Cancel keeps the name", async () => {
    const native: string[] = [];
    const onNative = (d: { type(): string; dismiss(): Promise<void> }) => {
      native.push(d.type());
      void d.dismiss();
    };
    page.on('dialog', onNative);
    try {
      const row = page.locator('#passkeys tr[data-passkey]').first();
      await row.locator('.rename-passkey').click();
      const dialog = page.locator('#rename-passkey-dialog[open]');
      await dialog.waitFor();
      assert.equal(await page.getByLabel('Name', { exact: true }).inputValue(), 'Virtual key', 'the current name to edit');
      await page.getByLabel('Name', { exact: true }).fill('Not this');
      await dialog.locator('.dialog-cancel').click();
      await dialog.waitFor({ state: 'detached' });
      assert.equal(await row.locator('[data-field=name]').textContent(), 'Virtual key', 'canceled: unchanged');

      await row.locator('.rename-passkey').click();
      await dialog.waitFor();
      assert.equal(await page.getByLabel('Name', { exact: true }).inputValue(), 'Virtual key', 'the canceled text is gone');
      await page.getByLabel('Name', { exact: true }).fill('  Work laptop  ');
      await page.keyboard.press('Enter');
      await row.locator('[data-field=name]', { hasText: 'Work laptop' }).waitFor();
      await dialog.waitFor({ state: 'detached' });
      const stored = await t.system.database.db.selectFrom('passkey').select('name').execute();
      assert.deepEqual(
        stored.map((p) => p.name),
        ['Work laptop'],
      );
      assert.deepEqual(native, [], 'no alert, confirm or prompt of the browser');
    } finally {
      page.off('dialog', onNative);
    }
  });

  step(
    'sets up two-factor from the shown secret and keeps the backup codes',
    async () => {
      await page.getByRole('button', { name: 'Set up two-factor' }).click();
      const secret = (await page.locator('#two-factor-secret').textContent()) ?? '';
      assert.match(secret, /^[A-Z2-7]{32}$/);
      assert.match((await page.locator('#two-factor-url').textContent()) ?? '', /^otpauth:\/\/totp\//);
      assert.match((await page.locator('#two-factor-qr').getAttribute('src')) ?? '', /^data:image\//, 'the QR code is drawn');
      await awayFromStepEdge();
      await page.getByLabel('Code from the app').fill(totpCode(secret));
      await page.getByRole('button', { name: 'Turn on two-factor' }).click();
      await page.locator('#reauth-password').fill(PASSWORD);
      await page.locator('#reauth-dialog .dialog-ok').click();
      await page.locator('#backup-codes li').nth(9).waitFor();
      assert.equal(await page.locator('#two-factor').getAttribute('data-enabled'), 'true');
      await page.getByRole('button', { name: 'I saved them' }).click();
      assert.equal(await page.locator('#backup-codes').count(), 0, 'shown once');
      totpSecret = secret;
    },
    REAUTH_ASKED,
  );

  step('logs in with password and a code from the app', async () => {
    const secret = totpSecret;
    await logOut();
    await logInWithPassword();
    await page.getByLabel('Code from your authenticator app').waitFor();
    assert.equal(new URL(page.url()).pathname, '/log-in', 'no session before the code');
    await awayFromStepEdge();
    await page.getByLabel('Code from your authenticator app').fill(totpCode(secret, 1));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(`${base}/account`);
    await toSecurity();
    assert.equal(await page.locator('#two-factor').getAttribute('data-enabled'), 'true');
  });
});
