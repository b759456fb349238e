/** Mail and APP_URL settings: defaults, validation naming the variable, MAIL_URL required in prod. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { mailModule } from '../../src/mail/module.js';
import { loadAll, settingsOf } from '../support/settings.js';
import { retryDelayMs } from '../../src/mail/outbox.js';

const prod = { APP_ENV: 'prod', JWT_SECRET: 'x'.repeat(32) };

describe('mail configuration', () => {
  it('defaults to the local mailbox and APP_URL from HOST and PORT', () => {
    const config = loadConfig({ HOST: '127.0.0.1', PORT: '4000' });
    const mail = settingsOf(mailModule, { HOST: '127.0.0.1', PORT: '4000' });
    assert.equal(mail.url, undefined);
    assert.equal(mail.from, 'SaaS <no-reply@localhost>');
    assert.equal(config.appUrl, 'http://127.0.0.1:4000');
    assert.equal(loadConfig({ HOST: '::1' }).appUrl, 'http://[::1]:3000');
    assert.deepEqual([mail.pollMs, mail.retryBaseMs, mail.retryMaxMs, mail.giveUpMs, mail.leaseMs], [1000, 30_000, 3_600_000, 86_400_000, 300_000]);
  });

  it('requires MAIL_URL in prod, naming it', () => {
    assert.throws(() => loadAll(prod), /MAIL_URL is required/);
    assert.equal(settingsOf(mailModule, { ...prod, MAIL_URL: 'smtps://u:p@smtp.example.com:465' }).url, 'smtps://u:p@smtp.example.com:465');
  });

  it('refuses bad values, naming the variable', () => {
    assert.throws(() => loadAll({ MAIL_URL: 'http://smtp.example.com' }), /MAIL_URL/);
    assert.throws(() => loadAll({ MAIL_URL: 'not a url' }), /MAIL_URL/);
    assert.throws(() => loadAll({ MAIL_FROM: 'nobody' }), /MAIL_FROM/);
    assert.throws(() => loadAll({ MAIL_POLL_MS: 'soon' }), /MAIL_POLL_MS/);
    assert.throws(() => loadAll({ MAIL_RETRY_BASE_MS: '0' }), /MAIL_RETRY_BASE_MS/);
    for (const bad of ['ftp://x.example.com', 'https://x.example.com/app', 'https://x.example.com?a=1', 'https://u:p@x.example.com', 'x.example.com']) {
      assert.throws(() => loadConfig({ APP_URL: bad }), /APP_URL/, bad);
    }
    assert.equal(loadConfig({ APP_URL: 'https://App.Example.com/' }).appUrl, 'https://app.example.com');
    assert.equal(settingsOf(mailModule, { MAIL_FROM: '"Acme Inc" <hi@acme.test>' }).from, '"Acme Inc" <hi@acme.test>');
  });
});

describe('retry delays', () => {
  const policy = { baseMs: 1000, maxMs: 60_000, giveUpMs: 86_400_000 };
  it('double from the base per failed attempt, up to the cap, with at most 10% jitter', () => {
    assert.deepEqual(
      [1, 2, 3, 4, 7, 8, 30].map((n) => retryDelayMs(policy, n, () => 0)),
      [1000, 2000, 4000, 8000, 60_000, 60_000, 60_000],
    );
    assert.equal(
      retryDelayMs(policy, 1, () => 0.999),
      1100,
    );
    assert.equal(
      retryDelayMs(policy, 1000, () => 0),
      60_000,
    );
  });
});
