/**
 * Every message the system sends, in one place: each kind is a function of its typed data
 * returning the subject and the HTML and text parts. To change a message, change it here;
 * to add one, add its data type to {@link MailTemplates} (kinds.ts) and its function to
 * {@link TEMPLATES} (the compiler then asks for both). Values are escaped by the `html` tag;
 * links are built from APP_URL with the token in the query, as the client's pages expect.
 */
import { LINK_LIFETIME_SECONDS, type MailKind, type MailTemplates, type SecurityEvent } from './kinds.js';
import { button, frame, paragraph, textFrame, type Html } from './layout.js';

export interface RenderedMail {
  subject: string;
  html: string;
  text: string;
}

export interface TemplateContext {
  /** the public base URL, an origin without a trailing slash */
  appUrl: string;
  /** the product's name, from MAIL_FROM's display name */
  product: string;
}

/** `APP_URL<path>?token=<token>`, the token URL-encoded. */
export function tokenLink(ctx: TemplateContext, path: string, token: string): string {
  return `${ctx.appUrl}${path}?token=${encodeURIComponent(token)}`;
}

function lifetime(seconds: number): string {
  if (seconds % 86400 === 0) return seconds === 86400 ? '24 hours' : `${seconds / 86400} days`;
  if (seconds % 3600 === 0) return seconds === 3600 ? '1 hour' : `${seconds / 3600} hours`;
  return `${Math.round(seconds / 60)} minutes`;
}

const greeting = (name: string | null): string => (name ? `Hi ${name},` : 'Hello,');

const longDate = new Intl.DateTimeFormat('en', { dateStyle: 'long', timeZone: 'UTC' });
const dateTime = new Intl.DateTimeFormat('en', { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' });

const PROOF_WORDS: Record<MailTemplates['credentials-removed-notice']['via'], string> = {
  verification: 'through the verification link',
  'password-reset': 'by resetting the password through the emailed link',
  'email-sign-in': 'by signing in through the emailed link',
  'single-sign-on': "by your organization's single sign-on",
};

/** What a security notice says of its event: its subject and its sentence (also the notification's words: src/account/notices.ts). */
export const SECURITY_EVENT_WORDS: Record<SecurityEvent, (detail: string | undefined, product: string) => { subject: string; text: string }> = {
  'two-factor-enabled': (_d, p) => ({
    subject: `Two-factor authentication was turned on for your ${p} account`,
    text: 'two-factor authentication was turned on: signing in now also asks for a code from an authenticator app.',
  }),
  'two-factor-disabled': (_d, p) => ({
    subject: `Two-factor authentication was turned off for your ${p} account`,
    text: 'two-factor authentication was turned off: signing in no longer asks for a code.',
  }),
  'backup-codes-regenerated': (_d, p) => ({
    subject: `New backup codes were made for your ${p} account`,
    text: 'new two-factor backup codes were made; the earlier ones no longer work.',
  }),
  'passkey-added': (d, p) => ({
    subject: `A passkey was added to your ${p} account`,
    text: `a passkey${d ? ` (${d})` : ''} was added: it can sign in to the account from now on.`,
  }),
  'passkey-removed': (d, p) => ({
    subject: `A passkey was removed from your ${p} account`,
    text: `a passkey${d ? ` (${d})` : ''} was removed: it no longer signs in.`,
  }),
  'identity-unlinked': (d, p) => ({
    subject: `${d ?? 'A provider'} was unlinked from your ${p} account`,
    text: `the sign-in with ${d ?? 'a provider'} was unlinked: it no longer signs in.`,
  }),
  'new-browser-sign-in': (d, p) => ({
    subject: `New sign-in to your ${p} account`,
    text: `your account was signed in to${d ? ` (${d})` : ''} from a browser it had not used before.`,
  }),
};

/** Builds both parts from one list of blocks, so the HTML and the text cannot drift apart. */
type Block = { text: string } | { action: string; href: string };

function compose(ctx: TemplateContext, subject: string, preheader: string, blocks: Block[]): RenderedMail {
  const body: Html[] = blocks.map((b) => ('action' in b ? button(b.action, b.href) : paragraph(b.text)));
  const text = blocks.map((b) => ('action' in b ? `${b.action}:\n${b.href}` : b.text));
  // a name or an organization with a line break must not start a new header line
  const oneLine = subject.replace(/[\r\n]+/g, ' ');
  return { subject: oneLine, html: frame({ product: ctx.product, preheader, body }), text: textFrame(ctx.product, text) };
}

type Templates = { [K in MailKind]: (data: MailTemplates[K], ctx: TemplateContext) => RenderedMail };

export const TEMPLATES: Templates = {
  'verify-email': (d, ctx) =>
    compose(ctx, `Verify your email address for ${ctx.product}`, 'Confirm that this address is yours.', [
      { text: greeting(d.name) },
      { text: `Please confirm that this is your email address to finish setting up your ${ctx.product} account.` },
      { action: 'Verify email address', href: tokenLink(ctx, '/verify-email', d.token) },
      { text: `The link expires in ${lifetime(LINK_LIFETIME_SECONDS['verify-email'])}. If you did not create an account, you can ignore this message.` },
    ]),

  'reset-password': (d, ctx) =>
    compose(ctx, `Reset your ${ctx.product} password`, 'A link to choose a new password.', [
      { text: greeting(d.name) },
      { text: `Someone asked to reset the password of your ${ctx.product} account. If it was you, choose a new password:` },
      { action: 'Choose a new password', href: tokenLink(ctx, '/reset-password', d.token) },
      {
        text: `The link expires in ${lifetime(LINK_LIFETIME_SECONDS['reset-password'])} and works once. Resetting the password logs out every session. If you did not ask for this, ignore this message: your password stays as it is.`,
      },
    ]),

  'confirm-email-change': (d, ctx) =>
    compose(ctx, `Confirm your new email address for ${ctx.product}`, "Confirm the change of your account's address.", [
      { text: greeting(d.name) },
      { text: `Please confirm that ${d.newEmail} should become the email address of your ${ctx.product} account.` },
      { action: 'Confirm new address', href: tokenLink(ctx, '/confirm-email', d.token) },
      {
        text: `The link expires in ${lifetime(LINK_LIFETIME_SECONDS['confirm-email-change'])}. Until then your account keeps its current address. If you did not ask for this, ignore this message.`,
      },
    ]),

  'email-changed-notice': (d, ctx) =>
    compose(ctx, `Your ${ctx.product} email address is being changed`, "A change of your account's address was requested.", [
      { text: greeting(d.name) },
      {
        text: `Someone asked to change the email address of your ${ctx.product} account to ${d.newEmail}. The change takes effect once it is confirmed from the new address.`,
      },
      { text: 'If this was you, there is nothing to do. If it was not, change your password now: whoever asked knows it.' },
      { action: 'Reset your password', href: `${ctx.appUrl}/forgot-password` },
    ]),

  'password-changed-notice': (d, ctx) =>
    compose(ctx, `Your ${ctx.product} password was changed`, 'Your password was just changed.', [
      { text: greeting(d.name) },
      { text: `The password of your ${ctx.product} account was just changed, and your other sessions were logged out.` },
      { text: 'If this was you, there is nothing to do. If it was not, reset your password at once:' },
      { action: 'Reset your password', href: `${ctx.appUrl}/forgot-password` },
    ]),

  'credentials-removed-notice': (d, ctx) =>
    compose(ctx, `We secured your ${ctx.product} account`, 'What was set up before your address was confirmed is gone.', [
      { text: greeting(d.name) },
      {
        text: `Your email address was just confirmed for your ${ctx.product} account (${PROOF_WORDS[d.via]}). Until then anyone could have used the account with your address, so everything set up before the confirmation was removed:`,
      },
      ...d.removed.map((line) => ({ text: `• ${line}` })),
      {
        text: 'If you set these up yourself, add them again from your account page. If you did not create this account, someone else did with your address: nothing they set up can sign in any more.',
      },
      { action: 'Review your account', href: `${ctx.appUrl}/account` },
    ]),

  'identity-linked-notice': (d, ctx) =>
    compose(ctx, `${d.provider} can now sign in to your ${ctx.product} account`, 'A sign-in provider was linked to your account.', [
      { text: greeting(d.name) },
      {
        text: `On ${dateTime.format(d.at)} UTC, a sign-in with ${d.provider}${d.providerEmail ? ` (${d.providerEmail})` : ''} was linked to your ${ctx.product} account: it can sign in to the account from now on.`,
      },
      {
        text: 'If this was you, there is nothing to do. If it was not, unlink it on your account page and change your password: whoever linked it was signed in as you.',
      },
      { action: 'Review your sign-in methods', href: `${ctx.appUrl}/account` },
    ]),

  'app-connected-notice': (d, ctx) =>
    compose(ctx, `${d.app} was connected to your ${ctx.product} account`, `${d.app} can now use your account.`, [
      { text: greeting(d.name) },
      {
        text: `On ${dateTime.format(d.at)} UTC, from the address ${d.ip}, ${d.app} was allowed to use your ${ctx.product} account: ${d.scopes.join(', ')}.`,
      },
      {
        text: 'If this was you, there is nothing to do. If it was not, disconnect it on your Connected apps page, then change your password: whoever allowed it was signed in as you.',
      },
      { action: 'Review your connected apps', href: `${ctx.appUrl}/settings/connected-apps` },
    ]),

  'security-notice': (d, ctx) => {
    const what = SECURITY_EVENT_WORDS[d.event](d.detail, ctx.product);
    const from = [d.browser && `from ${d.browser}`, d.ip && `at the address ${d.ip}`].filter(Boolean).join(' ');
    return compose(ctx, what.subject, what.subject, [
      { text: greeting(d.name) },
      { text: `On ${dateTime.format(d.at)} UTC${from ? `, ${from}` : ''}: ${what.text}` },
      {
        text: 'If this was you, there is nothing to do. If it was not, sign out the sessions you do not know, then change your password and check your sign-in methods: someone else can sign in as you.',
      },
      { action: 'Review your sessions', href: `${ctx.appUrl}/settings/sessions` },
    ]);
  },

  'email-sign-in': (d, ctx) =>
    compose(ctx, `Sign in to ${ctx.product}`, 'A link and a code to sign in.', [
      { text: greeting(d.name) },
      { text: `Someone asked to sign in to ${ctx.product} with this address. If it was you, open the link in this browser:` },
      { action: `Sign in to ${ctx.product}`, href: tokenLink(ctx, '/auth/email', d.token) },
      { text: `Or type this code where you asked for it: ${d.code}` },
      {
        text: `The link and the code expire in ${lifetime(LINK_LIFETIME_SECONDS['email-sign-in'])} and work once. If you did not ask for this, ignore this message: no one can sign in without it.`,
      },
    ]),

  invitation: (d, ctx) =>
    compose(ctx, `${d.inviter} invited you to ${d.organization} on ${ctx.product}`, `Join ${d.organization} as ${d.role}.`, [
      { text: 'Hello,' },
      { text: `${d.inviter} invited you to join the organization ${d.organization} on ${ctx.product} as ${d.role === 'admin' ? 'an admin' : `a ${d.role}`}.` },
      { action: 'Accept the invitation', href: tokenLink(ctx, '/invitations/accept', d.token) },
      {
        text: `The invitation expires in ${lifetime(LINK_LIFETIME_SECONDS.invitation)}. Sign in (or sign up) with this email address to accept it. If you do not know the sender, ignore this message.`,
      },
    ]),

  'trial-will-end': (d, ctx) =>
    compose(ctx, `The ${ctx.product} trial of ${d.organization} ends on ${longDate.format(d.trialEndsAt)}`, 'Your trial is ending soon.', [
      { text: 'Hello,' },
      {
        text: `The trial${d.plan ? ` of the ${d.plan} plan` : ''} for ${d.organization} ends on ${longDate.format(d.trialEndsAt)}. After that the subscription continues with the payment method on file, or ends if there is none.`,
      },
      { action: 'Manage billing', href: `${ctx.appUrl}/billing?org=${encodeURIComponent(d.organizationId)}` },
    ]),

  'webhook-disabled': (d, ctx) =>
    compose(ctx, `A webhook endpoint of ${d.organization} was disabled`, 'Its deliveries kept failing.', [
      { text: 'Hello,' },
      {
        text: `Every delivery to the webhook endpoint ${d.endpoint} of ${d.organization} has failed since ${longDate.format(d.failingSince)} (${d.days === 1 ? '1 day' : `${d.days} days`} or more), so ${ctx.product} stopped sending to it.`,
      },
      {
        text: "Fix the receiver, then turn the endpoint on again on the Webhooks page; the delivery log shows each attempt's status code and error, and failed deliveries can be retried from there.",
      },
      { action: 'Open the Webhooks page', href: `${ctx.appUrl}/orgs/${encodeURIComponent(d.organizationId)}/webhooks` },
    ]),

  'usage-threshold': (d, ctx) =>
    compose(ctx, `${d.organization} used ${d.used} ${d.meter} of its plan's ${d.hard ?? d.soft}`, "The usage reached the plan's warning level.", [
      { text: 'Hello,' },
      {
        text:
          `${d.organization} has used ${d.used} ${d.meter} in the current billing period, which ends on ${longDate.format(d.periodEnd)}; the plan warns at ${d.soft}` +
          (d.hard === null ? '.' : ` and stops at ${d.hard}: past that, requests are refused until the next period or an upgrade.`),
      },
      { action: 'See the usage', href: `${ctx.appUrl}/orgs/${encodeURIComponent(d.organizationId)}/usage` },
    ]),

  notification: (d, ctx) =>
    compose(ctx, d.title, d.body, [
      { text: 'Hello,' },
      { text: d.body },
      ...(d.url ? [{ action: 'Open it', href: d.url.startsWith('/') ? `${ctx.appUrl}${d.url}` : d.url }] : []),
      ...(d.unsubscribeUrl ? [{ text: `You get these emails by your notification settings; to stop this kind: ${d.unsubscribeUrl}` }] : []),
    ]),

  'notification-digest': (d, ctx) =>
    compose(ctx, `Your ${ctx.product} notifications: ${d.items.length === 1 ? '1 new' : `${d.items.length} new`}`, 'What happened since the last digest.', [
      { text: d.name ? `Hello ${d.name},` : 'Hello,' },
      { text: `Here is what happened in ${ctx.product} since your last digest:` },
      ...d.items.map((item) => ({
        text: `${item.title} (${longDate.format(item.at)}): ${item.body}${item.url ? ` ${item.url.startsWith('/') ? `${ctx.appUrl}${item.url}` : item.url}` : ''}`,
      })),
      { action: 'Open your notifications', href: `${ctx.appUrl}/notifications` },
      { text: `You get this digest by your notification settings; to stop it: ${d.unsubscribeUrl}` },
    ]),

  'audit-stream-paused': (d, ctx) =>
    compose(ctx, `An audit log stream of ${d.organization} was paused`, 'Its batches kept failing.', [
      { text: 'Hello,' },
      {
        text: `Every batch of audit log entries sent to the ${d.kind} stream of ${d.organization} has failed since ${longDate.format(d.failingSince)}, so ${ctx.product} paused it. The last error: ${d.error}`,
      },
      {
        text: 'Nothing is lost: the entries wait for the stream. Fix the destination, then resume the stream on the Audit log streams page; it picks up where it stopped.',
      },
      { action: 'Open the audit log streams', href: `${ctx.appUrl}/orgs/${encodeURIComponent(d.organizationId)}/audit-log/streams` },
    ]),

  'sso-certificate-expiring': (d, ctx) =>
    compose(ctx, `The single sign-on certificate of ${d.organization} expires on ${longDate.format(d.expiresAt)}`, 'Sign-on stops working when it expires.', [
      { text: 'Hello,' },
      {
        text: `The signing certificate of ${d.organization}'s SAML identity provider expires on ${longDate.format(d.expiresAt)}. After that nobody can sign in to ${ctx.product} through it.`,
      },
      { text: 'Create a new certificate in the identity provider, then paste its new metadata on the Single sign-on page.' },
      { action: 'Open the Single sign-on page', href: `${ctx.appUrl}/orgs/${encodeURIComponent(d.organizationId)}/sso` },
    ]),
};

/** Renders a message of `kind` from its data. */
export function renderMail<K extends MailKind>(kind: K, data: MailTemplates[K], ctx: TemplateContext): RenderedMail {
  return (TEMPLATES[kind] as (d: MailTemplates[K], c: TemplateContext) => RenderedMail)(data, ctx);
}
