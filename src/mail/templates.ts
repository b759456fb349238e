/**
 * Every message the system sends, in one place: each kind is a function of its typed data
 * returning the subject and the HTML and text parts. To change a message, change it here;
 * to add one, add its data type to {@link MailTemplates} (kinds.ts) and its function to
 * {@link TEMPLATES} (the compiler then asks for both). Values are escaped by the `html` tag;
 * links are built from APP_URL with the token in the query, as the client's pages expect.
 * Every text is a message id (its English ICU template: `phrase('…{product}…', {product})`, or
 * `msg('…')` for a constant one) formatted in the recipient's locale (words.ts, docs/email.md).
 */
import { msg, type Phrase, phrase } from '../i18n/messages.js';
import type { Locale } from '../shared/locales.js';
import { LINK_LIFETIME_SECONDS, type MailKind, type MailTemplates, type SecurityEvent } from './kinds.js';
import { button, frame, paragraph, textFrame, type Html } from './layout.js';
import { mailWords, type MailWords } from './words.js';

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

/** A link's lifetime ("24 hours", "1 hour", "15 minutes") in the recipient's words. */
export function lifetime(seconds: number, w: MailWords = mailWords('en')): string {
  if (seconds % 86400 === 0) {
    if (seconds === 86400) return w.t(msg('24 hours'));
    return w.t(phrase('{count, plural, one {{count} day} other {{count} days}}', { count: seconds / 86400 }));
  }
  if (seconds % 3600 === 0) return w.t(phrase('{count, plural, one {{count} hour} other {{count} hours}}', { count: seconds / 3600 }));
  return w.t(phrase('{count, plural, one {{count} minute} other {{count} minutes}}', { count: Math.round(seconds / 60) }));
}

/** The first line of a message to a person: by name when there is one. */
export function greeting(name: string | null, w: MailWords = mailWords('en')): string {
  return name ? w.t(phrase('Hi {name},', { name })) : w.t(msg('Hello,'));
}

const PROOF_WORDS: Record<MailTemplates['credentials-removed-notice']['via'], string> = {
  verification: msg('through the verification link'),
  'password-reset': msg('by resetting the password through the emailed link'),
  'email-sign-in': msg('by signing in through the emailed link'),
  'single-sign-on': msg("by your organization's single sign-on"),
};

/**
 * What proving an address removed (account/address-proof.ts), one phrase each: the notice email
 * and the in-app notification word them in the recipient's language, the API answers in English.
 */
export const REMOVED_WORDS = {
  password: (): Phrase => phrase('the password'),
  passkeys: (count: number): Phrase => phrase('{count, plural, one {# passkey} other {# passkeys}}', { count }),
  identities: (providers: string): Phrase => phrase('sign-in through {providers}', { providers }),
  twoFactor: (): Phrase => phrase('two-factor authentication (its authenticator app and backup codes)'),
  unfinishedTwoFactor: (): Phrase => phrase('a two-factor set-up that was not finished'),
  apiKeys: (count: number): Phrase => phrase('{count, plural, one {# API key} other {# API keys}}', { count }),
  emailChange: (email: string): Phrase => phrase("a pending change of the account's address to {email}", { email }),
  sessions: (count: number, others: boolean): Phrase =>
    others
      ? phrase('{count, plural, one {# other signed-in session} other {# other signed-in sessions}}', { count })
      : phrase('{count, plural, one {# signed-in session} other {# signed-in sessions}}', { count }),
};

type EventWords = (detail: string | undefined, product: string, locale?: Locale) => { subject: string; text: string };

/** One event's words: its subject and sentence as phrases, formatted in `locale` (English by default). */
const eventWords =
  (words: (detail: string | undefined, product: string) => { subject: Phrase; text: Phrase }): EventWords =>
  (detail, product, locale = 'en') => {
    const { subject, text } = words(detail, product);
    const w = mailWords(locale);
    return { subject: w.t(subject), text: w.t(text) };
  };

/**
 * What a security notice says of its event, in `locale` (English when none is given): its subject
 * and its sentence (also the notification's words: src/account/notices.ts).
 */
export const SECURITY_EVENT_WORDS: Record<SecurityEvent, EventWords> = {
  'two-factor-enabled': eventWords((_d, product) => ({
    subject: phrase('Two-factor authentication was turned on for your {product} account', { product }),
    text: phrase('two-factor authentication was turned on: signing in now also asks for a code from an authenticator app.'),
  })),
  'two-factor-disabled': eventWords((_d, product) => ({
    subject: phrase('Two-factor authentication was turned off for your {product} account', { product }),
    text: phrase('two-factor authentication was turned off: signing in no longer asks for a code.'),
  })),
  'backup-codes-regenerated': eventWords((_d, product) => ({
    subject: phrase('New backup codes were made for your {product} account', { product }),
    text: phrase('new two-factor backup codes were made; the earlier ones no longer work.'),
  })),
  'passkey-added': eventWords((detail, product) => ({
    subject: phrase('A passkey was added to your {product} account', { product }),
    text: detail
      ? phrase('a passkey ({detail}) was added: it can sign in to the account from now on.', { detail })
      : phrase('a passkey was added: it can sign in to the account from now on.'),
  })),
  'passkey-removed': eventWords((detail, product) => ({
    subject: phrase('A passkey was removed from your {product} account', { product }),
    text: detail ? phrase('a passkey ({detail}) was removed: it no longer signs in.', { detail }) : phrase('a passkey was removed: it no longer signs in.'),
  })),
  'identity-unlinked': eventWords((detail, product) => ({
    subject: detail
      ? phrase('{provider} was unlinked from your {product} account', { provider: detail, product })
      : phrase('A provider was unlinked from your {product} account', { product }),
    text: detail
      ? phrase('the sign-in with {provider} was unlinked: it no longer signs in.', { provider: detail })
      : phrase('the sign-in with a provider was unlinked: it no longer signs in.'),
  })),
  'new-browser-sign-in': eventWords((detail, product) => ({
    subject: phrase('New sign-in to your {product} account', { product }),
    text: detail
      ? phrase('your account was signed in to ({detail}) from a browser it had not used before.', { detail })
      : phrase('your account was signed in to from a browser it had not used before.'),
  })),
};

/** Builds both parts from one list of blocks, so the HTML and the text cannot drift apart. */
type Block = { text: string } | { action: string; href: string };

function compose(ctx: TemplateContext, w: MailWords, subject: string, preheader: string, blocks: Block[]): RenderedMail {
  const body: Html[] = blocks.map((b) => ('action' in b ? button(b.action, b.href, w.locale) : paragraph(b.text)));
  const text = blocks.map((b) => ('action' in b ? `${b.action}:\n${b.href}` : b.text));
  // a name or an organization with a line break must not start a new header line
  const oneLine = subject.replace(/[\r\n]+/g, ' ');
  return { subject: oneLine, html: frame({ product: ctx.product, preheader, body, locale: w.locale }), text: textFrame(ctx.product, text) };
}

type Templates = { [K in MailKind]: (data: MailTemplates[K], ctx: TemplateContext, w: MailWords) => RenderedMail };

const orgPath = (ctx: TemplateContext, organizationId: string, page: string) => `${ctx.appUrl}/orgs/${encodeURIComponent(organizationId)}/${page}`;

export const TEMPLATES: Templates = {
  'verify-email': (d, ctx, w) => {
    const { product } = ctx;
    return compose(ctx, w, w.t(phrase('Verify your email address for {product}', { product })), w.t(msg('Confirm that this address is yours.')), [
      { text: greeting(d.name, w) },
      { text: w.t(phrase('Please confirm that this is your email address to finish setting up your {product} account.', { product })) },
      { action: w.t(msg('Verify email address')), href: tokenLink(ctx, '/verify-email', d.token) },
      {
        text: w.t(
          phrase('The link expires in {lifetime}. If you did not create an account, you can ignore this message.', {
            lifetime: lifetime(LINK_LIFETIME_SECONDS['verify-email'], w),
          }),
        ),
      },
    ]);
  },

  'reset-password': (d, ctx, w) => {
    const { product } = ctx;
    return compose(ctx, w, w.t(phrase('Reset your {product} password', { product })), w.t(msg('A link to choose a new password.')), [
      { text: greeting(d.name, w) },
      { text: w.t(phrase('Someone asked to reset the password of your {product} account. If it was you, choose a new password:', { product })) },
      { action: w.t(msg('Choose a new password')), href: tokenLink(ctx, '/reset-password', d.token) },
      {
        text: w.t(
          phrase(
            'The link expires in {lifetime} and works once. Resetting the password logs out every session. If you did not ask for this, ignore this message: your password stays as it is.',
            { lifetime: lifetime(LINK_LIFETIME_SECONDS['reset-password'], w) },
          ),
        ),
      },
    ]);
  },

  'confirm-email-change': (d, ctx, w) => {
    const { product } = ctx;
    return compose(
      ctx,
      w,
      w.t(phrase('Confirm your new email address for {product}', { product })),
      w.t(msg("Confirm the change of your account's address.")),
      [
        { text: greeting(d.name, w) },
        { text: w.t(phrase('Please confirm that {newEmail} should become the email address of your {product} account.', { newEmail: d.newEmail, product })) },
        { action: w.t(msg('Confirm new address')), href: tokenLink(ctx, '/confirm-email', d.token) },
        {
          text: w.t(
            phrase('The link expires in {lifetime}. Until then your account keeps its current address. If you did not ask for this, ignore this message.', {
              lifetime: lifetime(LINK_LIFETIME_SECONDS['confirm-email-change'], w),
            }),
          ),
        },
      ],
    );
  },

  'email-changed-notice': (d, ctx, w) => {
    const { product } = ctx;
    return compose(
      ctx,
      w,
      w.t(phrase('Your {product} email address is being changed', { product })),
      w.t(msg("A change of your account's address was requested.")),
      [
        { text: greeting(d.name, w) },
        {
          text: w.t(
            phrase(
              'Someone asked to change the email address of your {product} account to {newEmail}. The change takes effect once it is confirmed from the new address.',
              { product, newEmail: d.newEmail },
            ),
          ),
        },
        { text: w.t(msg('If this was you, there is nothing to do. If it was not, change your password now: whoever asked knows it.')) },
        { action: w.t(msg('Reset your password')), href: `${ctx.appUrl}/forgot-password` },
      ],
    );
  },

  'password-changed-notice': (d, ctx, w) => {
    const { product } = ctx;
    return compose(ctx, w, w.t(phrase('Your {product} password was changed', { product })), w.t(msg('Your password was just changed.')), [
      { text: greeting(d.name, w) },
      { text: w.t(phrase('The password of your {product} account was just changed, and your other sessions were logged out.', { product })) },
      { text: w.t(msg('If this was you, there is nothing to do. If it was not, reset your password at once:')) },
      { action: w.t(msg('Reset your password')), href: `${ctx.appUrl}/forgot-password` },
    ]);
  },

  'credentials-removed-notice': (d, ctx, w) => {
    const { product } = ctx;
    return compose(
      ctx,
      w,
      w.t(phrase('We secured your {product} account', { product })),
      w.t(msg('What was set up before your address was confirmed is gone.')),
      [
        { text: greeting(d.name, w) },
        {
          text: w.t(
            phrase(
              'Your email address was just confirmed for your {product} account ({proof}). Until then anyone could have used the account with your address, so everything set up before the confirmation was removed:',
              { product, proof: w.t(PROOF_WORDS[d.via]) },
            ),
          ),
        },
        ...d.removed.map((line) => ({ text: `• ${w.t(line)}` })),
        {
          text: w.t(
            msg(
              'If you set these up yourself, add them again from your account page. If you did not create this account, someone else did with your address: nothing they set up can sign in any more.',
            ),
          ),
        },
        { action: w.t(msg('Review your account')), href: `${ctx.appUrl}/account` },
      ],
    );
  },

  'identity-linked-notice': (d, ctx, w) => {
    const { product } = ctx;
    const values = { date: w.dateTime(d.at), provider: d.provider, product };
    return compose(
      ctx,
      w,
      w.t(phrase('{provider} can now sign in to your {product} account', { provider: d.provider, product })),
      w.t(msg('A sign-in provider was linked to your account.')),
      [
        { text: greeting(d.name, w) },
        {
          text: w.t(
            d.providerEmail
              ? phrase(
                  'On {date} UTC, a sign-in with {provider} ({providerEmail}) was linked to your {product} account: it can sign in to the account from now on.',
                  {
                    ...values,
                    providerEmail: d.providerEmail,
                  },
                )
              : phrase('On {date} UTC, a sign-in with {provider} was linked to your {product} account: it can sign in to the account from now on.', values),
          ),
        },
        {
          text: w.t(
            msg(
              'If this was you, there is nothing to do. If it was not, unlink it on your account page and change your password: whoever linked it was signed in as you.',
            ),
          ),
        },
        { action: w.t(msg('Review your sign-in methods')), href: `${ctx.appUrl}/account` },
      ],
    );
  },

  'app-connected-notice': (d, ctx, w) => {
    const { product } = ctx;
    return compose(
      ctx,
      w,
      w.t(phrase('{app} was connected to your {product} account', { app: d.app, product })),
      w.t(phrase('{app} can now use your account.', { app: d.app })),
      [
        { text: greeting(d.name, w) },
        {
          text: w.t(
            phrase('On {date} UTC, from the address {ip}, {app} was allowed to use your {product} account: {scopes}.', {
              date: w.dateTime(d.at),
              ip: d.ip,
              app: d.app,
              product,
              scopes: d.scopes.join(', '),
            }),
          ),
        },
        {
          text: w.t(
            msg(
              'If this was you, there is nothing to do. If it was not, disconnect it on your Connected apps page, then change your password: whoever allowed it was signed in as you.',
            ),
          ),
        },
        { action: w.t(msg('Review your connected apps')), href: `${ctx.appUrl}/settings/connected-apps` },
      ],
    );
  },

  'security-notice': (d, ctx, w) => {
    const what = SECURITY_EVENT_WORDS[d.event](d.detail, ctx.product, w.locale);
    const date = w.dateTime(d.at);
    const when = d.browser
      ? d.ip
        ? phrase('On {date} UTC, from {browser} at the address {ip}: {what}', { date, browser: d.browser, ip: d.ip, what: what.text })
        : phrase('On {date} UTC, from {browser}: {what}', { date, browser: d.browser, what: what.text })
      : d.ip
        ? phrase('On {date} UTC, at the address {ip}: {what}', { date, ip: d.ip, what: what.text })
        : phrase('On {date} UTC: {what}', { date, what: what.text });
    return compose(ctx, w, what.subject, what.subject, [
      { text: greeting(d.name, w) },
      { text: w.t(when) },
      {
        text: w.t(
          msg(
            'If this was you, there is nothing to do. If it was not, sign out the sessions you do not know, then change your password and check your sign-in methods: someone else can sign in as you.',
          ),
        ),
      },
      { action: w.t(msg('Review your sessions')), href: `${ctx.appUrl}/settings/sessions` },
    ]);
  },

  'email-sign-in': (d, ctx, w) => {
    const { product } = ctx;
    return compose(ctx, w, w.t(phrase('Sign in to {product}', { product })), w.t(msg('A link and a code to sign in.')), [
      { text: greeting(d.name, w) },
      { text: w.t(phrase('Someone asked to sign in to {product} with this address. If it was you, open the link in this browser:', { product })) },
      { action: w.t(phrase('Sign in to {product}', { product })), href: tokenLink(ctx, '/auth/email', d.token) },
      { text: w.t(phrase('Or type this code where you asked for it: {code}', { code: d.code })) },
      {
        text: w.t(
          phrase('The link and the code expire in {lifetime} and work once. If you did not ask for this, ignore this message: no one can sign in without it.', {
            lifetime: lifetime(LINK_LIFETIME_SECONDS['email-sign-in'], w),
          }),
        ),
      },
    ]);
  },

  invitation: (d, ctx, w) => {
    const { product } = ctx;
    const names = { inviter: d.inviter, organization: d.organization, product };
    return compose(
      ctx,
      w,
      w.t(phrase('{inviter} invited you to {organization} on {product}', names)),
      w.t(phrase('Join {organization} as {role, select, owner {owner} admin {admin} other {member}}.', { organization: d.organization, role: d.role })),
      [
        { text: w.t(msg('Hello,')) },
        {
          text: w.t(
            phrase(
              '{inviter} invited you to join the organization {organization} on {product} as {role, select, owner {an owner} admin {an admin} other {a member}}.',
              {
                ...names,
                role: d.role,
              },
            ),
          ),
        },
        { action: w.t(msg('Accept the invitation')), href: tokenLink(ctx, '/invitations/accept', d.token) },
        {
          text: w.t(
            phrase(
              'The invitation expires in {lifetime}. Sign in (or sign up) with this email address to accept it. If you do not know the sender, ignore this message.',
              { lifetime: lifetime(LINK_LIFETIME_SECONDS.invitation, w) },
            ),
          ),
        },
      ],
    );
  },

  'trial-will-end': (d, ctx, w) => {
    const date = w.date(d.trialEndsAt);
    return compose(
      ctx,
      w,
      w.t(phrase('The {product} trial of {organization} ends on {date}', { product: ctx.product, organization: d.organization, date })),
      w.t(msg('Your trial is ending soon.')),
      [
        { text: w.t(msg('Hello,')) },
        {
          text: w.t(
            d.plan
              ? phrase(
                  'The trial of the {plan} plan for {organization} ends on {date}. After that the subscription continues with the payment method on file, or ends if there is none.',
                  { plan: d.plan, organization: d.organization, date },
                )
              : phrase(
                  'The trial for {organization} ends on {date}. After that the subscription continues with the payment method on file, or ends if there is none.',
                  { organization: d.organization, date },
                ),
          ),
        },
        { action: w.t(msg('Manage billing')), href: `${ctx.appUrl}/billing?org=${encodeURIComponent(d.organizationId)}` },
      ],
    );
  },

  'webhook-disabled': (d, ctx, w) =>
    compose(
      ctx,
      w,
      w.t(phrase('A webhook endpoint of {organization} was disabled', { organization: d.organization })),
      w.t(msg('Its deliveries kept failing.')),
      [
        { text: w.t(msg('Hello,')) },
        {
          text: w.t(
            phrase(
              'Every delivery to the webhook endpoint {endpoint} of {organization} has failed since {date} ({days, plural, one {1 day} other {{days} days}} or more), so {product} stopped sending to it.',
              { endpoint: d.endpoint, organization: d.organization, date: w.date(d.failingSince), days: d.days, product: ctx.product },
            ),
          ),
        },
        {
          text: w.t(
            msg(
              "Fix the receiver, then turn the endpoint on again on the Webhooks page; the delivery log shows each attempt's status code and error, and failed deliveries can be retried from there.",
            ),
          ),
        },
        { action: w.t(msg('Open the Webhooks page')), href: orgPath(ctx, d.organizationId, 'webhooks') },
      ],
    ),

  'usage-threshold': (d, ctx, w) => {
    // the counts as the code writes them (no digit grouping), whatever the locale
    const values = { organization: d.organization, used: String(d.used), meter: d.meter, date: w.date(d.periodEnd), soft: String(d.soft) };
    return compose(
      ctx,
      w,
      w.t(
        phrase("{organization} used {used} {meter} of its plan's {limit}", {
          organization: d.organization,
          used: String(d.used),
          meter: d.meter,
          limit: String(d.hard ?? d.soft),
        }),
      ),
      w.t(msg("The usage reached the plan's warning level.")),
      [
        { text: w.t(msg('Hello,')) },
        {
          text: w.t(
            d.hard === null
              ? phrase('{organization} has used {used} {meter} in the current billing period, which ends on {date}; the plan warns at {soft}.', values)
              : phrase(
                  '{organization} has used {used} {meter} in the current billing period, which ends on {date}; the plan warns at {soft} and stops at {hard}: past that, requests are refused until the next period or an upgrade.',
                  { ...values, hard: String(d.hard) },
                ),
          ),
        },
        { action: w.t(msg('See the usage')), href: orgPath(ctx, d.organizationId, 'usage') },
      ],
    );
  },

  notification: (d, ctx, w) =>
    compose(ctx, w, d.title, d.body, [
      { text: w.t(msg('Hello,')) },
      { text: d.body },
      ...(d.url ? [{ action: w.t(msg('Open it')), href: d.url.startsWith('/') ? `${ctx.appUrl}${d.url}` : d.url }] : []),
      ...(d.unsubscribeUrl
        ? [{ text: w.t(phrase('You get these emails by your notification settings; to stop this kind: {url}', { url: d.unsubscribeUrl })) }]
        : []),
    ]),

  'notification-digest': (d, ctx, w) => {
    const { product } = ctx;
    return compose(
      ctx,
      w,
      w.t(phrase('Your {product} notifications: {count, plural, one {1 new} other {{count} new}}', { product, count: d.items.length })),
      w.t(msg('What happened since the last digest.')),
      [
        { text: d.name ? w.t(phrase('Hello {name},', { name: d.name })) : w.t(msg('Hello,')) },
        { text: w.t(phrase('Here is what happened in {product} since your last digest:', { product })) },
        ...d.items.map((item) => {
          const values = { title: item.title, date: w.date(item.at), body: item.body };
          const url = item.url && (item.url.startsWith('/') ? `${ctx.appUrl}${item.url}` : item.url);
          return { text: w.t(url ? phrase('{title} ({date}): {body} {url}', { ...values, url }) : phrase('{title} ({date}): {body}', values)) };
        }),
        { action: w.t(msg('Open your notifications')), href: `${ctx.appUrl}/notifications` },
        { text: w.t(phrase('You get this digest by your notification settings; to stop it: {url}', { url: d.unsubscribeUrl })) },
      ],
    );
  },

  'audit-stream-paused': (d, ctx, w) =>
    compose(ctx, w, w.t(phrase('An audit log stream of {organization} was paused', { organization: d.organization })), w.t(msg('Its batches kept failing.')), [
      { text: w.t(msg('Hello,')) },
      {
        text: w.t(
          phrase(
            'Every batch of audit log entries sent to the {kind} stream of {organization} has failed since {date}, so {product} paused it. The last error: {error}',
            { kind: d.kind, organization: d.organization, date: w.date(d.failingSince), product: ctx.product, error: d.error },
          ),
        ),
      },
      {
        text: w.t(
          msg(
            'Nothing is lost: the entries wait for the stream. Fix the destination, then resume the stream on the Audit log streams page; it picks up where it stopped.',
          ),
        ),
      },
      { action: w.t(msg('Open the audit log streams')), href: orgPath(ctx, d.organizationId, 'audit-log/streams') },
    ]),

  'sso-certificate-expiring': (d, ctx, w) => {
    const date = w.date(d.expiresAt);
    return compose(
      ctx,
      w,
      w.t(phrase('The single sign-on certificate of {organization} expires on {date}', { organization: d.organization, date })),
      w.t(msg('Sign-on stops working when it expires.')),
      [
        { text: w.t(msg('Hello,')) },
        {
          text: w.t(
            phrase(
              "The signing certificate of {organization}'s SAML identity provider expires on {date}. After that nobody can sign in to {product} through it.",
              {
                organization: d.organization,
                date,
                product: ctx.product,
              },
            ),
          ),
        },
        { text: w.t(msg('Create a new certificate in the identity provider, then paste its new metadata on the Single sign-on page.')) },
        { action: w.t(msg('Open the Single sign-on page')), href: orgPath(ctx, d.organizationId, 'sso') },
      ],
    );
  },
};

/** Renders a message of `kind` from its data, in `locale` (the recipient's; English when none is given). */
export function renderMail<K extends MailKind>(kind: K, data: MailTemplates[K], ctx: TemplateContext, locale: Locale = 'en'): RenderedMail {
  return (TEMPLATES[kind] as (d: MailTemplates[K], c: TemplateContext, w: MailWords) => RenderedMail)(data, ctx, mailWords(locale));
}
