/**
 * Emails in the recipient's language (docs/email.md, "Languages"): the account's own locale
 * whatever language the request that caused the message was in; DEFAULT_LOCALE for an account
 * without one; an invitation to an address without an account in the inviter's language; an
 * Arabic message's HTML right to left. Then `renderMail` alone: Arabic's plural forms of a count,
 * English exactly as it was, and the mail catalogs holding every id the templates use.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { serverMessages } from '../../scripts/i18n/server-messages.js';
import { MAIL_MESSAGES } from '../../src/mail/messages/index.js';
import { renderMail } from '../../src/mail/templates.js';
import { logIn, PASSWORD, uniqueEmail, verifyEmail } from '../support/auth.js';
import { mailedLink } from '../support/mailbox.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

interface Account {
  id: string;
  email: string;
  token: string;
}

/** Signs up (the browser naming `language`, or none), verifies the address and logs in. */
async function account(t: TestSystem, language?: string): Promise<Account> {
  const email = uniqueEmail('i18n-mail');
  const res = await t.client('POST', '/api/account/sign-up', {
    headers: language ? { 'accept-language': language } : {},
    body: { email, password: PASSWORD, name: 'Test User' },
  });
  assert.equal(res.status, 201, res.text);
  assert.equal(res.body.account.locale, language ?? null);
  await verifyEmail(t, email);
  const login = await logIn(t.client, email);
  assert.equal(login.status, 200, login.text);
  return { id: res.body.account.id, email, token: login.body['access-token'] };
}

/** The newest message of `kind` to `to`, waiting for it (forgot-password queues after answering). */
async function newest(t: TestSystem, to: string, kind: 'reset-password' | 'invitation') {
  await mailedLink(t.system, to, kind);
  const [message] = await t.system.mail.mailbox.list({ to, kind, limit: 1 });
  assert.ok(message);
  return message;
}

async function forgotPassword(t: TestSystem, email: string, language: string) {
  const res = await t.client('POST', '/api/account/forgot-password', { headers: { 'accept-language': language }, body: { email } });
  assert.equal(res.status, 202, res.text);
  return newest(t, email, 'reset-password');
}

for (const database of testDatabases()) {
  describe(`emails in the recipient's language (${database.name})`, () => {
    let t: TestSystem;
    before(async () => {
      t = await startSystem(database);
    });
    after(async () => {
      await t?.stop();
    });

    it("a password reset is in the account's language, not the request's", async () => {
      const german = await account(t, 'de');
      const mail = await forgotPassword(t, german.email, 'es');
      assert.equal(mail.subject, 'Setzen Sie Ihr SaaS-Passwort zurück');
      assert.match(mail.text ?? '', /^Hallo Test User,\n\nJemand hat angefordert, das Passwort Ihres SaaS-Kontos zurückzusetzen\./);
      assert.match(mail.text ?? '', /Der Link läuft in 1 Stunde ab und funktioniert nur einmal\./);
      assert.match(mail.html ?? '', /<html lang="de" dir="ltr">/);
      assert.match(mail.html ?? '', />Neues Passwort wählen<\/a>/);
      assert.match(mail.html ?? '', /Falls die Schaltfläche nicht funktioniert/);
      assert.doesNotMatch(mail.text ?? '', /contraseña|Someone asked|Hi Test/);
    });

    it('an account without a language gets DEFAULT_LOCALE (en here), whatever the request names', async () => {
      const none = await account(t);
      const mail = await forgotPassword(t, none.email, 'de');
      assert.equal(mail.subject, 'Reset your SaaS password');
      assert.match(mail.html ?? '', /<html lang="en" dir="ltr">/);
    });

    it("an invitation to an address without an account is in the inviter's language, right to left in Arabic; an account's own language comes first", async () => {
      const inviter = await account(t, 'ar');
      const created = await t.client('POST', '/api/orgs', { headers: { authorization: `Bearer ${inviter.token}` }, body: { name: 'Acme Labs' } });
      assert.equal(created.status, 201, created.text);
      const invite = (email: string, role: string) =>
        t.client('POST', `/api/orgs/${created.body.id}/invitations`, { headers: { authorization: `Bearer ${inviter.token}` }, body: { email, role } });

      const stranger = uniqueEmail('i18n-invitee');
      assert.equal((await invite(stranger, 'admin')).status, 201);
      const arabic = await newest(t, stranger, 'invitation');
      assert.equal(arabic.subject, 'دعاك Test User إلى Acme Labs على SaaS');
      assert.match(arabic.text ?? '', /دعاك Test User إلى الانضمام إلى المؤسسة Acme Labs على SaaS بصفة مشرف\./);
      assert.match(arabic.text ?? '', /تنتهي صلاحية الدعوة خلال 7 أيام\./);
      assert.match(arabic.html ?? '', /<html lang="ar" dir="rtl">/);

      // the invitee's address in another case: the account is found all the same
      const spanish = await account(t, 'es');
      assert.equal((await invite(spanish.email.toUpperCase(), 'member')).status, 201);
      const own = await newest(t, spanish.email, 'invitation');
      assert.equal(own.subject, 'Test User te invitó a Acme Labs en SaaS');
      assert.match(own.text ?? '', /como miembro\./);
      assert.match(own.html ?? '', /<html lang="es" dir="ltr">/);
    });
  });

  describe(`emails with DEFAULT_LOCALE=es (${database.name})`, () => {
    let t: TestSystem;
    before(async () => {
      t = await startSystem(database, { DEFAULT_LOCALE: 'es' });
    });
    after(async () => {
      await t?.stop();
    });

    it('an account without a language gets DEFAULT_LOCALE; one with a language keeps it', async () => {
      const none = await account(t);
      const mail = await forgotPassword(t, none.email, 'de');
      assert.equal(mail.subject, 'Restablece tu contraseña de SaaS');
      assert.match(mail.text ?? '', /^Hola, Test User:\n\nAlguien pidió restablecer la contraseña de tu cuenta de SaaS\./);
      assert.match(mail.text ?? '', /El enlace caduca en 1 hora y solo funciona una vez\./);
      const german = await account(t, 'de');
      assert.equal((await forgotPassword(t, german.email, 'es')).subject, 'Setzen Sie Ihr SaaS-Passwort zurück');
    });
  });
}

describe('renderMail in a locale', () => {
  const ctx = { appUrl: 'https://app.example.com', product: 'Acme' };
  const disabled = (days: number) => ({
    organization: 'Org',
    organizationId: '0b6c1c5e-8f1a-4c55-9c33-2d0a3f1e9b10',
    endpoint: 'https://hooks.example.com/in',
    failingSince: new Date('2026-11-17T10:00:00Z'),
    days,
  });

  it("gives Arabic's plural form of each count", () => {
    const forms: Array<[number, string]> = [
      [0, '0 يوم'],
      [1, 'يوم واحد'],
      [2, 'يومان'],
      [3, '3 أيام'],
      [11, '11 يومًا'],
      [100, '100 يوم'],
    ];
    for (const [days, words] of forms) {
      const mail = renderMail('webhook-disabled', disabled(days), ctx, 'ar');
      const paragraph = mail.text.split('\n\n')[1];
      assert.equal(
        paragraph,
        `فشلت كل عمليات التسليم إلى نقطة نهاية webhook https://hooks.example.com/in التابعة لـ Org منذ 17 نوفمبر 2026 (${words} أو أكثر)، لذا توقف Acme عن الإرسال إليها.`,
        `${days}`,
      );
      assert.equal(mail.subject, 'تم تعطيل نقطة نهاية webhook تابعة لـ Org');
      assert.match(mail.html, /<html lang="ar" dir="rtl">/);
    }
    // a lifetime after a preposition: the dual in the genitive
    assert.match(renderMail('verify-email', { name: null, token: 't' }, ctx, 'ar').text, /تنتهي صلاحية الرابط خلال 24 ساعة\./);
    assert.match(renderMail('invitation', { inviter: 'Eve', organization: 'Org', role: 'owner', token: 't' }, ctx, 'ar').text, /خلال 7 أيام\./);
  });

  it('keeps English as it was', () => {
    for (const [days, words] of [
      [1, '1 day'],
      [5, '5 days'],
      [1000, '1000 days'],
    ] as const) {
      const mail = renderMail('webhook-disabled', disabled(days), ctx);
      assert.deepEqual(mail, renderMail('webhook-disabled', disabled(days), ctx, 'en'));
      assert.equal(mail.subject, 'A webhook endpoint of Org was disabled');
      assert.equal(
        mail.text,
        `Hello,\n\nEvery delivery to the webhook endpoint https://hooks.example.com/in of Org has failed since November 17, 2026 (${words} or more), so Acme stopped sending to it.\n\n` +
          "Fix the receiver, then turn the endpoint on again on the Webhooks page; the delivery log shows each attempt's status code and error, and failed deliveries can be retried from there.\n\n" +
          'Open the Webhooks page:\nhttps://app.example.com/orgs/0b6c1c5e-8f1a-4c55-9c33-2d0a3f1e9b10/webhooks\n\n-- \nAcme\n',
      );
      assert.match(mail.html, /<html lang="en" dir="ltr">/);
    }
  });

  it('has every id the mail templates use in each mail catalog, and no other', () => {
    const { uses } = serverMessages(process.cwd());
    const ids = new Set(
      uses.filter((u) => /^src\/mail\/(account-mails|organization-mails|compose|security-words|layout|words)\.ts:/.test(u.at)).map((u) => u.id),
    );
    assert.ok(ids.size > 100);
    for (const [locale, catalog] of Object.entries(MAIL_MESSAGES)) {
      const missing = [...ids].filter((id) => !(id in (catalog ?? {})));
      assert.deepEqual(missing, [], `${locale} lacks them`);
      // the mail routes' error messages share these catalogs (their ids are the routes')
      const routes = new Set(uses.filter((u) => u.feature === 'mail').map((u) => u.id));
      assert.deepEqual(
        Object.keys(catalog ?? {}).filter((id) => !routes.has(id)),
        [],
        `${locale} has ids no code uses`,
      );
    }
  });
});
