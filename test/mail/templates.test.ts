/** Templates: every kind renders subject, HTML and text; values are escaped; links come from APP_URL. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { escapeHtml } from '../../src/mail/layout.js';
import { MAIL_KINDS, type MailTemplates } from '../../src/mail/kinds.js';
import { renderMail, TEMPLATES } from '../../src/mail/templates.js';

const ctx = { appUrl: 'https://app.example.com', product: 'Acme' };
const evil = `<script>alert("x")</script> & 'quotes'`;
const token = 'a+b/c=d&e';

const samples: { [K in keyof MailTemplates]: MailTemplates[K] } = {
  'verify-email': { name: evil, token },
  'reset-password': { name: evil, token },
  'confirm-email-change': { name: evil, newEmail: 'new@example.com', token },
  'email-changed-notice': { name: evil, newEmail: `x${evil}@example.com` },
  'password-changed-notice': { name: evil },
  invitation: { inviter: evil, organization: evil, role: 'member', token },
  'trial-will-end': { organization: evil, organizationId: '0b6c1c5e-8f1a-4c55-9c33-2d0a3f1e9b10', plan: evil, trialEndsAt: new Date('2026-11-22T10:00:00Z') },
  'credentials-removed-notice': { name: evil, via: 'verification', removed: ['2 passkeys', `sign-in through ${evil}`] },
  'identity-linked-notice': { name: evil, provider: evil, providerEmail: 'x@example.com', at: new Date('2026-11-22T10:00:00Z') },
  'sso-certificate-expiring': { organization: evil, organizationId: '0b6c1c5e-8f1a-4c55-9c33-2d0a3f1e9b10', expiresAt: new Date('2026-12-17T10:00:00Z') },
  'audit-stream-paused': {
    organization: evil,
    organizationId: '0b6c1c5e-8f1a-4c55-9c33-2d0a3f1e9b10',
    kind: 'splunk',
    failingSince: new Date('2026-11-17T10:00:00Z'),
    error: `unexpected-status (HTTP 403): ${evil}`,
  },
  'webhook-disabled': {
    organization: evil,
    organizationId: '0b6c1c5e-8f1a-4c55-9c33-2d0a3f1e9b10',
    endpoint: `https://hooks.example.com/${evil}`,
    failingSince: new Date('2026-11-17T10:00:00Z'),
    days: 5,
  },
  'usage-threshold': {
    organization: evil,
    organizationId: '0b6c1c5e-8f1a-4c55-9c33-2d0a3f1e9b10',
    meter: 'API calls',
    used: 800,
    soft: 800,
    hard: 1000,
    periodEnd: new Date('2026-12-01T00:00:00Z'),
  },
  'security-notice': { name: evil, event: 'passkey-added', at: new Date('2026-11-22T10:00:00Z'), browser: evil, ip: '203.0.113.9', detail: evil },
  'email-sign-in': { name: evil, token, code: '123456' },
  'app-connected-notice': { name: evil, app: evil, scopes: ['openid', evil], at: new Date('2026-11-22T10:00:00Z'), ip: '203.0.113.9' },
  notification: { title: evil, body: evil, url: `/orgs/x?${evil}`, unsubscribeUrl: 'https://app.example.com/api/notifications/unsubscribe?token=t' },
  'notification-digest': {
    name: evil,
    items: [{ title: evil, body: evil, url: '/orgs/x', at: new Date('2026-11-22T10:00:00Z') }],
    unsubscribeUrl: 'https://app.example.com/api/notifications/unsubscribe?token=t',
  },
};

const linkPaths: Partial<Record<keyof MailTemplates, string>> = {
  'verify-email': '/verify-email',
  'reset-password': '/reset-password',
  'confirm-email-change': '/confirm-email',
  invitation: '/invitations/accept',
  'email-sign-in': '/auth/email',
};

describe('mail templates', () => {
  it('cover every kind', () => {
    assert.deepEqual(Object.keys(TEMPLATES).sort(), [...MAIL_KINDS].sort());
  });

  for (const kind of MAIL_KINDS) {
    it(`${kind}: subject, HTML and text, every value escaped in the HTML`, () => {
      const mail = renderMail(kind, samples[kind] as never, ctx);
      assert.ok(mail.subject.length > 0 && !/[\r\n]/.test(mail.subject));
      assert.ok(mail.html.startsWith('<!doctype html>'));
      assert.ok(!mail.html.includes('<script>'), 'no value reaches the HTML unescaped');
      assert.ok(mail.html.includes(escapeHtml(evil)), 'the value is there, escaped');
      assert.ok(mail.text.includes(evil), 'the text part has the value as it is');
      assert.ok(!mail.text.includes('<p'), 'the text part has no markup');
      const path = linkPaths[kind];
      if (path) {
        const link = `https://app.example.com${path}?token=${encodeURIComponent(token)}`;
        assert.ok(mail.text.includes(link), `text has ${link}`);
        assert.ok(mail.html.includes(`href="${escapeHtml(link)}"`), `HTML has ${link}`);
      } else {
        // a notification's only token is its one-click unsubscribe link's (docs/notifications.md)
        assert.ok(!mail.text.replace(/\/api\/notifications\/unsubscribe\?token=\S+/g, '').includes('token='));
      }
    });
  }

  it('states each link lifetime, and the trial end date', () => {
    assert.match(renderMail('verify-email', samples['verify-email'], ctx).text, /expires in 24 hours/);
    assert.match(renderMail('reset-password', samples['reset-password'], ctx).text, /expires in 1 hour/);
    assert.match(renderMail('invitation', samples.invitation, ctx).text, /expires in 7 days/);
    assert.match(renderMail('trial-will-end', samples['trial-will-end'], ctx).subject, /November 22, 2026/);
  });

  it('keeps a line break in a value out of the subject', () => {
    const mail = renderMail('invitation', { inviter: 'Eve\r\nBcc: victim@example.com', organization: 'Org', role: 'admin', token }, ctx);
    assert.ok(!/[\r\n]/.test(mail.subject));
  });
});
