/**
 * The messages to an account about the account itself: proving its address, resetting its
 * password, signing in by email, and the notices of changes to how it signs in (templates.ts).
 */
import { msg, phrase } from '../i18n/messages.js';
import { compose, greeting, lifetime, type TemplatesOf, tokenLink } from './compose.js';
import { LINK_LIFETIME_SECONDS, type MailTemplates } from './kinds.js';
import { SECURITY_EVENT_WORDS } from './security-words.js';

const PROOF_WORDS: Record<MailTemplates['credentials-removed-notice']['via'], string> = {
  verification: msg('through the verification link'),
  'password-reset': msg('by resetting the password through the emailed link'),
  'email-sign-in': msg('by signing in through the emailed link'),
  'single-sign-on': msg("by your organization's single sign-on"),
};

export type AccountMailKind =
  | 'verify-email'
  | 'reset-password'
  | 'confirm-email-change'
  | 'email-changed-notice'
  | 'password-changed-notice'
  | 'credentials-removed-notice'
  | 'identity-linked-notice'
  | 'app-connected-notice'
  | 'security-notice'
  | 'email-sign-in';

export const ACCOUNT_MAILS: TemplatesOf<AccountMailKind> = {
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
};
