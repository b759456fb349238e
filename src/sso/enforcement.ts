/**
 * `enforced: true` (docs/sso.md, "4. Enforcement"): an account whose email is in a verified domain
 * of an organization with an enforced connection signs in only through that connection; the
 * organization's owners keep their other methods (so a broken IdP cannot lock everyone out).
 * Registered on the account module's first-factor hook (`accounts.useFirstFactorPolicy`), and on
 * its change-of-address hook (`useEmailChangePolicy`): such an account stays in the domains.
 */
import type { EmailChangePolicy } from '../account/lifecycle-service.js';
import { FirstFactorRefusedError, type FirstFactorPolicy } from '../account/service.js';
import { appendAudit } from '../audit/log.js';
import type { DB } from '../db/database.js';
import type { Logger } from '../logging/logger.js';
import { domainOf } from './domains.js';

/** The organization enforcing SSO on the account's address (its verified domain), and the account's role there. */
function enforcingOrganization(db: DB, account: { id: string; email: string }) {
  return db
    .selectFrom('org_domain as d')
    .innerJoin('saml_connection as c', 'c.organization_id', 'd.organization_id')
    .leftJoin('membership as m', (join) => join.onRef('m.organization_id', '=', 'd.organization_id').on('m.account_id', '=', account.id))
    .select(['d.organization_id', 'm.role'])
    .where('d.domain', '=', domainOf(account.email))
    .where('d.verified_at', 'is not', null)
    .where('c.enforced', '=', true)
    .executeTakeFirst();
}

export function enforcementPolicy(db: DB, log: Logger): FirstFactorPolicy {
  return async (account, method) => {
    const enforcing = await enforcingOrganization(db, account);
    if (!enforcing || enforcing.role === 'owner') return;
    log.info('sso/first-factor-refused', 'Sign-in refused: the organization requires single sign-on', {
      'account-id': account.id,
      'organization-id': enforcing.organization_id,
      method,
    });
    await appendAudit(db, {
      action: 'sso.sign-in-refused',
      organizationId: enforcing.organization_id,
      accountId: account.id,
      actor: {},
      target: { type: 'account', id: account.id },
      details: { reason: 'sso-required', method },
      origin: { ip: null, userAgent: null },
    });
    throw new FirstFactorRefusedError('sso-required', 'Your organization requires signing in with single sign-on (SSO)');
  };
}

/**
 * The same accounts cannot move their address out of the organization's verified domains (issue
 * 37): the password and email link would then sign in again, membership and all. A move to
 * another of its verified domains is fine; owners are excepted, as above.
 */
export function emailChangeEnforcement(db: DB, log: Logger): EmailChangePolicy {
  return async (account, newEmail) => {
    const enforcing = await enforcingOrganization(db, account);
    if (!enforcing || enforcing.role === 'owner') return;
    const inside = await db
      .selectFrom('org_domain')
      .select('id')
      .where('organization_id', '=', enforcing.organization_id)
      .where('domain', '=', domainOf(newEmail))
      .where('verified_at', 'is not', null)
      .executeTakeFirst();
    if (inside) return;
    log.info('sso/email-change-refused', 'Email change refused: the organization requires single sign-on for its domains', {
      'account-id': account.id,
      'organization-id': enforcing.organization_id,
    });
    throw new FirstFactorRefusedError('sso-required', 'Your organization requires single sign-on: your address cannot move outside its domains');
  };
}
