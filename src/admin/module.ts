/**
 * Platform administration (docs/admin.md): who the platform admins are (ADMIN_EMAILS, verified
 * addresses only), the admin API under /api/admin (platform admins only: route data), account
 * locking and audited impersonation.
 */
import { accountModule } from '../account/module.js';
import { authModule } from '../auth/module.js';
import type { PlatformAdminResolver } from '../http/routes.js';
import { defineModule } from '../runtime/module.js';
import { ConfigError, list, type Env } from '../runtime/settings.js';
import { Impersonation } from './impersonation.js';
import { adminRoutes } from './routes.js';
import { ADMIN_SCHEMAS } from './schemas.js';
import { AdminService, type IsPlatformAdmin } from './service.js';
import { MESSAGES_KEY } from '../i18n/messages.js';
import { ADMIN_MESSAGES } from './messages/index.js';

export interface AdminSettings {
  /** lower-cased */
  adminEmails: ReadonlySet<string>;
}

/** ADMIN_EMAILS: comma-separated addresses; none by default (no one is a platform admin). */
export function adminSettings(env: Env): AdminSettings {
  const emails = list(env.ADMIN_EMAILS).map((e) => e.toLowerCase());
  const bad = emails.find((e) => !/^[^\s@,]+@[^\s@,]+$/.test(e) || e.length > 254);
  if (bad !== undefined) throw new ConfigError('ADMIN_EMAILS', `must list email addresses separated by commas, got "${bad}"`);
  return { adminEmails: new Set(emails) };
}

export const adminModule = defineModule({
  name: 'admin',
  declares: { [MESSAGES_KEY]: [ADMIN_MESSAGES] },
  settings: adminSettings,
  start(ctx, settings) {
    const { db, secureCookies } = ctx;
    const log = ctx.logs.logger('saas.admin');
    const { refreshTokens } = ctx.use(authModule);
    const { accounts, shaping } = ctx.use(accountModule);
    const isPlatformAdmin: IsPlatformAdmin = ({ email, emailVerified }) => emailVerified && settings.adminEmails.has(email.toLowerCase());
    // `platform-admin` of every account shape follows this rule
    shaping.use(isPlatformAdmin);
    // the route gate's question, for an admin route only: one lookup, read fresh (the address or its verification may have changed)
    const resolver: PlatformAdminResolver = async (user) => {
      if (settings.adminEmails.size === 0) return false;
      const row = await db.selectFrom('account').select(['email', 'email_verified', 'locked_at']).where('id', '=', user.id).executeTakeFirst();
      return row !== undefined && row.locked_at === null && isPlatformAdmin({ email: row.email, emailVerified: row.email_verified });
    };
    const admin = new AdminService({ db, refreshTokens, isPlatformAdmin, log });
    const impersonation = new Impersonation({ db, accounts, refreshTokens, isPlatformAdmin, log });
    return {
      services: { admin, impersonation, isPlatformAdmin },
      schemas: ADMIN_SCHEMAS,
      routeGroups: [adminRoutes(admin, impersonation, resolver, { secureCookies })],
    };
  },
});
