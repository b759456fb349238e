/**
 * The kinds of message the system sends: the data each needs, their names, and the lifetimes of
 * the links they carry. Services and routes need only this; what each message says is in
 * templates.ts, which the compiler holds to one function per kind listed here.
 */
import type { Phrase } from '../i18n/messages.js';

/** What a security notice tells of (src/account/notices.ts). */
export type SecurityEvent =
  | 'two-factor-enabled'
  | 'two-factor-disabled'
  | 'backup-codes-regenerated'
  | 'passkey-added'
  | 'passkey-removed'
  | 'identity-unlinked'
  | 'new-browser-sign-in';

/** The data each kind of message needs. */
export interface MailTemplates {
  'verify-email': { name: string | null; token: string };
  'reset-password': { name: string | null; token: string };
  /** sent to the new address */
  'confirm-email-change': { name: string | null; newEmail: string; token: string };
  /** sent to the old address when a change is asked for */
  'email-changed-notice': { name: string | null; newEmail: string };
  'password-changed-notice': { name: string | null };
  invitation: { inviter: string; organization: string; role: 'owner' | 'admin' | 'member'; token: string };
  /**
   * after the address was proven for the first time (src/account/address-proof.ts): what was
   * removed because it was added before the proof
   */
  'credentials-removed-notice': {
    name: string | null;
    via: 'verification' | 'password-reset' | 'email-sign-in' | 'single-sign-on';
    removed: Array<string | Phrase>;
  };
  /** a provider identity was linked to the account (src/oidc/identities.ts) */
  'identity-linked-notice': { name: string | null; provider: string; providerEmail: string | null; at: Date };
  /** a change to how the account signs in, or a sign-in from a new browser (src/account/notices.ts) */
  'security-notice': {
    name: string | null;
    event: SecurityEvent;
    at: Date;
    /** which browser: a name as it is, or its words ("{browser} on {system}": security-words.ts) said in the recipient's language */
    browser: string | Phrase | null;
    ip: string | null;
    detail?: string;
  };
  /** the link and code of an email sign-in (src/account/email-sign-in.ts) */
  'email-sign-in': { name: string | null; token: string; code: string };
  /** to each owner of the organization (src/payments/subscription-change.ts, on Stripe's `customer.subscription.trial_will_end`) */
  'trial-will-end': { organization: string; organizationId: string; plan: string | null; trialEndsAt: Date };
  /** to each owner and admin of the organization when the webhook worker disables a failing endpoint (src/webhooks/worker.ts) */
  'webhook-disabled': { organization: string; organizationId: string; endpoint: string; failingSince: Date; days: number };
  /** to each owner and admin when the organization's usage of a meter reaches the plan's soft limit in a billing period (src/billing/usage.ts) */
  'usage-threshold': { organization: string; organizationId: string; meter: string; used: number; soft: number; hard: number | null; periodEnd: Date };
  /** an app was connected to the account, or given more scopes, by an Allow on the consent page (src/oauth/interactions.ts) */
  'app-connected-notice': { name: string | null; app: string; scopes: string[]; at: Date; ip: string };
  /** a notification of a kind that has no message of its own, when its category is emailed at once (src/notifications/) */
  notification: { title: string; body: string; url: string | null; unsubscribeUrl: string | null };
  /** the day's notifications of every category an account has emailed daily, in one message (src/notifications/digest.ts) */
  'notification-digest': { name: string | null; items: Array<{ title: string; body: string; url: string | null; at: Date }>; unsubscribeUrl: string };
  /** to each owner and admin when an audit log stream paused itself after failing for AUDIT_STREAM_PAUSE_AFTER (src/audit-streams/worker.ts) */
  'audit-stream-paused': { organization: string; organizationId: string; kind: string; failingSince: Date; error: string };
  /** to each owner when the organization's SAML identity provider certificate expires within 30 days (src/sso/expiry.ts) */
  'sso-certificate-expiring': { organization: string; organizationId: string; expiresAt: Date };
}

export type MailKind = keyof MailTemplates;

export const MAIL_KINDS = [
  'verify-email',
  'reset-password',
  'confirm-email-change',
  'email-changed-notice',
  'password-changed-notice',
  'invitation',
  'trial-will-end',
  'credentials-removed-notice',
  'identity-linked-notice',
  'webhook-disabled',
  'sso-certificate-expiring',
  'audit-stream-paused',
  'usage-threshold',
  'security-notice',
  'email-sign-in',
  'app-connected-notice',
  'notification',
  'notification-digest',
] as const satisfies readonly MailKind[];

/**
 * How long each emailed token is valid, seconds (docs/email.md, "Templates"). The messages state
 * it, so the code that issues the tokens should take its lifetimes from here.
 */
export const LINK_LIFETIME_SECONDS = {
  'verify-email': 24 * 3600,
  'reset-password': 3600,
  'confirm-email-change': 24 * 3600,
  invitation: 7 * 24 * 3600,
  'email-sign-in': 15 * 60,
} as const;
