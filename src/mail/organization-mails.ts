/**
 * The messages about an organization: an invitation to it, its trial, billing usage, failing
 * webhook endpoints and audit log streams, an expiring single sign-on certificate, and the
 * in-app notifications sent by email one by one or as a digest (templates.ts).
 */
import { msg, phrase } from '../i18n/messages.js';
import { compose, lifetime, orgPath, type TemplatesOf, tokenLink } from './compose.js';
import { LINK_LIFETIME_SECONDS } from './kinds.js';

export type OrganizationMailKind =
  | 'invitation'
  | 'trial-will-end'
  | 'webhook-disabled'
  | 'usage-threshold'
  | 'notification'
  | 'notification-digest'
  | 'audit-stream-paused'
  | 'sso-certificate-expiring';

export const ORGANIZATION_MAILS: TemplatesOf<OrganizationMailKind> = {
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
