/**
 * Readable names of the audit log's actions, for people: the client's audit log page shows them
 * (it imports this file), docs/audit.md lists the same. An action not listed here is shown as it
 * is, so a module that records a new action works before it adds its name here.
 */
export const AUDIT_ACTION_LABELS: Readonly<Record<string, string>> = {
  'account.signed-up': 'Account created',
  'account.logged-in': 'Logged in',
  'account.log-in-failed': 'Failed log-in',
  'account.logged-out': 'Logged out',
  'account.session-ended': 'Session ended',
  'account.refresh-token-reused': 'Refresh token reused: session ended',
  'account.password-changed': 'Password changed',
  'account.password-reset-requested': 'Password reset requested',
  'account.password-reset': 'Password reset',
  'account.email-verified': 'Email verified',
  'account.email-change-requested': 'Email change requested',
  'account.email-changed': 'Email changed',
  'account.deleted': 'Account deleted',
  'account.identity-linked': 'Sign-in provider linked',
  'account.identity-unlinked': 'Sign-in provider unlinked',
  'account.2fa-enabled': 'Two-factor turned on',
  'account.2fa-disabled': 'Two-factor turned off',
  'account.backup-code-used': 'Backup code used',
  'account.backup-codes-regenerated': 'Backup codes regenerated',
  'account.email-sign-in-requested': 'Email sign-in link requested',
  'account.passkey-added': 'Passkey added',
  'account.passkey-renamed': 'Passkey renamed',
  'account.passkey-removed': 'Passkey removed',
  'account.credentials-removed': 'Address proven: earlier sign-in methods removed',
  'org.created': 'Organization created',
  'org.renamed': 'Organization renamed',
  'org.deleted': 'Organization deleted',
  'org.member-role-changed': 'Member role changed',
  'org.member-removed': 'Member removed',
  'org.member-left': 'Member left',
  'org.invitation-sent': 'Invitation sent',
  'org.invitation-revoked': 'Invitation revoked',
  'org.invitation-accepted': 'Invitation accepted',
  'api-key.created': 'API key created',
  'api-key.revoked': 'API key revoked',
  'webhook.created': 'Webhook endpoint created',
  'webhook.updated': 'Webhook endpoint changed',
  'webhook.deleted': 'Webhook endpoint deleted',
  'webhook.secret-rotated': 'Webhook secret rotated',
  'billing.checkout-started': 'Checkout started',
  'billing.checkout-completed': 'Checkout completed',
  'billing.portal-opened': 'Billing portal opened',
  'billing.subscription-changed': 'Subscription changed',
  'admin.account-locked': 'Account locked by a platform admin',
  'admin.account-unlocked': 'Account unlocked by a platform admin',
  'admin.impersonation-started': 'Support signed in as the account',
  'admin.impersonation-stopped': 'Support signed out of the account',
};

/** The readable name of an action; the action itself when it has none. */
export function auditActionLabel(action: string): string {
  return Object.hasOwn(AUDIT_ACTION_LABELS, action) ? AUDIT_ACTION_LABELS[action] : action;
}
