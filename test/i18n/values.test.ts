/**
 * A message's values go in as they are typed (src/shared/message-values.ts). Lingui's runtime
 * decodes `\uXXXX` and `\xXX` in the formatted text and fills its `#` placeholder in plural
 * branches, values included: a name typed as `Eve\u0000` came out with a NUL, which PostgreSQL
 * refused, so removing that member or sending that account a password reset failed; a client
 * named `\u202E…` showed a right-to-left override on the consent page. Then the same through the
 * HTTP API: that member is removed, and that account's reset email is sent, greeting it by the
 * name it typed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { t as clientT, useLocaleWords } from '../../src/client/i18n/words.js';
import { english, list, phrase, Translator } from '../../src/i18n/messages.js';
import { renderMail } from '../../src/mail/templates.js';
import { logIn, PASSWORD, uniqueEmail } from '../support/auth.js';
import { mailedLink } from '../support/mailbox.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';
import { account, addMember, as, createOrg } from '../orgs/support.js';

const NUL_TYPED = 'Eve\\u0000';
const OVERRIDE_TYPED = 'Acme \\u202E(moc.elgoog)';
const PLACEHOLDER = 'x %__lingui_octothorpe__% y';

describe("a message's values as they are typed", () => {
  const translator = new Translator([
    {
      de: {
        'Hi {name},': 'Hallo {name},',
        '{count, plural, one {# by {name}} other {# by {name}}}': '{count, plural, one {# von {name}} other {# von {name}}}',
      },
    },
  ]);

  it('English and a translation keep escape-like text literally', () => {
    assert.equal(english(phrase('Hi {name},', { name: NUL_TYPED })), 'Hi Eve\\u0000,');
    assert.equal(translator.text('de', phrase('Hi {name},', { name: NUL_TYPED })), 'Hallo Eve\\u0000,');
    assert.equal(english(phrase('Hi {name},', { name: 'Ann\\x0aCLICK' })), 'Hi Ann\\x0aCLICK,');
    assert.doesNotMatch(english(phrase('Hi {name},', { name: OVERRIDE_TYPED })), /\u202E/);
  });

  it("a plural's placeholder text in a value stays, and the count still fills #", () => {
    const message = phrase('{count, plural, one {# by {name}} other {# by {name}}}', { count: 3, name: PLACEHOLDER });
    assert.equal(english(message), `3 by ${PLACEHOLDER}`);
    assert.equal(translator.text('de', message), `3 von ${PLACEHOLDER}`);
  });

  it('a value cannot stand for another by typing the slot characters', () => {
    const message = phrase('{a} and {b}', { a: 'one\\u0041', b: '\uE0020\uE003' });
    assert.equal(english(message), 'one\\u0041 and \uE0020\uE003');
  });

  it('a select still chooses by its value, and plain values are untouched', () => {
    const message = phrase('{role, select, owner {an owner} other {a member}} named {name}', { role: 'owner', name: 'Zoë 100%' });
    assert.equal(english(message), 'an owner named Zoë 100%');
  });

  it("a list is joined in the reader's words, its names as typed", () => {
    const plans = phrase('needs {plans}', { plans: list(['pro', 'team\\u0000', 'enterprise'], 'disjunction') });
    const german = new Translator([{ de: { 'needs {plans}': 'braucht {plans}' } }]);
    assert.equal(english(plans), 'needs pro, team\\u0000, or enterprise');
    assert.equal(german.text('de', plans), 'braucht pro, team\\u0000 oder enterprise');
    assert.equal(english(phrase('needs {plans}', { plans: list(['a', 'b']) })), 'needs a and b');
  });

  it("the client's t() keeps them too", () => {
    useLocaleWords('en', {});
    assert.equal(clientT('Allow {named} to use your account?', { named: OVERRIDE_TYPED }), `Allow ${OVERRIDE_TYPED} to use your account?`);
    assert.equal(clientT('{count, plural, one {# key of {name}} other {# keys of {name}}}', { count: 2, name: PLACEHOLDER }), `2 keys of ${PLACEHOLDER}`);
  });

  it('an email greets by the name as typed', () => {
    const mail = renderMail('reset-password', { name: NUL_TYPED, token: 'tok' }, { appUrl: 'https://app.example', product: 'SaaS' }, 'de');
    assert.match(mail.text, /^Hallo Eve\\u0000,/);
    assert.doesNotMatch(mail.text + mail.html + mail.subject, /\0/);
  });
});

for (const database of testDatabases()) {
  describe(`a name typed with an escape, through the API (${database.name})`, () => {
    let t: TestSystem;
    before(async () => {
      t = await startSystem(database);
    });
    after(async () => {
      await t?.stop();
    });

    it('the member is given another role and removed, the other admins told', async () => {
      const owner = await account(t);
      const admin = await account(t);
      const eve = await account(t);
      const org = await createOrg(t, owner);
      await addMember(t, org, owner, admin, 'admin');
      await addMember(t, org, owner, eve, 'member');
      assert.equal((await as(t, eve, 'PATCH', '/api/account/me', { name: NUL_TYPED })).status, 200);
      const promoted = await as(t, owner, 'PATCH', `/api/orgs/${org}/members/${eve.id}`, { role: 'admin' });
      assert.equal(promoted.status, 200, promoted.text);
      const removed = await as(t, owner, 'DELETE', `/api/orgs/${org}/members/${eve.id}`);
      assert.equal(removed.status, 204, removed.text);
      const members = await as(t, owner, 'GET', `/api/orgs/${org}/members`);
      assert.ok(!JSON.stringify(members.body).includes(eve.id));
      const told = await as(t, admin, 'GET', '/api/notifications');
      assert.equal(told.status, 200, told.text);
      assert.ok(JSON.stringify(told.body).includes('Eve\\\\u0000'), told.text);
    });

    it("the account's password reset is sent, greeting it by the name it typed", async () => {
      const email = uniqueEmail('escape-name');
      const signUp = await t.client('POST', '/api/account/sign-up', { body: { email, password: PASSWORD, name: NUL_TYPED } });
      assert.equal(signUp.status, 201, signUp.text);
      assert.equal(signUp.body.account.name, NUL_TYPED);
      const login = await logIn(t.client, email);
      assert.equal(login.status, 200, login.text);
      const reset = await t.client('POST', '/api/account/forgot-password', { body: { email } });
      assert.equal(reset.status, 202, reset.text);
      await mailedLink(t.system, email, 'reset-password');
      const [mail] = await t.system.mail.mailbox.list({ to: email, kind: 'reset-password', limit: 1 });
      assert.match(mail?.text ?? '', /^Hi Eve\\u0000,/);
    });
  });
}
