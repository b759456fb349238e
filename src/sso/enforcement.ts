/**
 * `enforced: true` (DESIGN.md): an account whose email is in a verified domain of an
 * organization with an enforced connection signs in only through that connection; the
 * organization's owners keep their other methods (so a broken IdP cannot lock everyone out).
 * Registered on the account module's first-factor hook (`accounts.useFirstFactorPolicy`).
 */
import { FirstFactorRefusedError, type FirstFactorPolicy } from '../account/service.js';
import { appendAudit } from '../audit/log.js';
import type { DB } from '../db/database.js';
import type { Logger } from '../logging/logger.js';
import { domainOf } from './domains.js';

export function enforcementPolicy(db: DB, log: Logger): FirstFactorPolicy {
  return async (account, method) => {
    const enforcing = await db.selectFrom('org_domain as d')
      .innerJoin('saml_connection as c', 'c.organization_id', 'd.organization_id')
      .leftJoin('membership as m', (join) => join.onRef('m.organization_id', '=', 'd.organization_id').on('m.account_id', '=', account.id))
      .select(['d.organization_id', 'm.role'])
      .where('d.domain', '=', domainOf(account.email)).where('d.verified_at', 'is not', null).where('c.enforced', '=', true)
      .executeTakeFirst();
    if (!enforcing || enforcing.role === 'owner') return;
    log.info('sso/first-factor-refused', 'Sign-in refused: the organization requires single sign-on', {
      'account-id': account.id, 'organization-id': enforcing.organization_id, method,
    });
    await appendAudit(db, {
      action: 'sso.sign-in-refused', organizationId: enforcing.organization_id, accountId: account.id, actor: {},
      target: { type: 'account', id: account.id }, details: { reason: 'sso-required', method }, origin: { ip: null, userAgent: null },
    });
    throw new FirstFactorRefusedError('sso-required', 'Your organization requires signing in with single sign-on (SSO)');
  };
}
