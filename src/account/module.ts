/**
 * Accounts (docs/account-lifecycle.md): sign-up, log-in, refresh and log-out; the account's
 * whole life by email (verification, password reset, email change); sessions, export, deletion.
 */
import { authModule } from '../auth/module.js';
import { mailModule } from '../mail/module.js';
import { defineModule } from '../runtime/module.js';
import { oneOf, rateLimit } from '../runtime/settings.js';
import { EmailSignIn } from './email-sign-in.js';
import { EMAIL_SIGN_IN_SCHEMAS, emailSignInRoutes } from './email-sign-in-routes.js';
import { AccountData } from './account-data.js';
import { AccountChecks } from './guard.js';
import { LIFECYCLE_SCHEMAS } from './lifecycle-schemas.js';
import { lifecycleRoutes } from './lifecycle-routes.js';
import { AccountLifecycle } from './lifecycle-service.js';
import { PlatformAdmins } from './platform-admins.js';
import { LifecycleRateLimiter } from './limits.js';
import { accountQueries } from './queries.js';
import { accountRoutes } from './routes.js';
import { ACCOUNT_SCHEMAS } from './schemas.js';
import { AccountService } from './service.js';
import type { FirstFactorPolicy } from './first-factor.js';
import { securityNotices } from './notices.js';
import { sessionRoutes } from './session-routes.js';
import { AccountSessions } from './sessions.js';

export const accountModule = defineModule({
  name: 'account',
  settings: (env) => ({
    resendAccount: rateLimit(env, 'RESEND_LIMIT_ACCOUNT', { count: 5, seconds: 3600 }),
    resendAddress: rateLimit(env, 'RESEND_LIMIT_ADDRESS', { count: 20, seconds: 3600 }),
    forgotEmail: rateLimit(env, 'FORGOT_PASSWORD_LIMIT_EMAIL', { count: 5, seconds: 3600 }),
    forgotAddress: rateLimit(env, 'FORGOT_PASSWORD_LIMIT_ADDRESS', { count: 20, seconds: 3600 }),
    emailSignInEmail: rateLimit(env, 'EMAIL_SIGN_IN_LIMIT_EMAIL', { count: 5, seconds: 3600 }),
    emailSignInAddress: rateLimit(env, 'EMAIL_SIGN_IN_LIMIT_ADDRESS', { count: 20, seconds: 3600 }),
    emailSignUp: oneOf(env, 'EMAIL_SIGN_UP', ['on', 'off'] as const, 'on') === 'on',
  }),
  start(ctx, limits) {
    const { db, metrics, secureCookies } = ctx;
    const { passwords, accessTokens, refreshTokens, loginLimiter, signUpLimiter } = ctx.use(authModule);
    const { mail } = ctx.use(mailModule);
    const log = ctx.logs.logger('saas.account');
    // `platform-admin` of the account shape: the admin module plugs in its rule (src/admin/)
    const platformAdmins = new PlatformAdmins();
    const notices = securityNotices(mail);
    const accounts = new AccountService({
      db, passwords, accessTokens, refreshTokens, loginLimiter, signUpLimiter, mail, log, platformAdmins,
      onLogIn: metrics && ((outcome) => metrics.logIn(outcome)),
    });
    // API keys an unproven account made, revoked at its address's first proof: forgotten at once here (src/api-keys/)
    const apiKeysRevoked: Array<(keyIds: readonly string[]) => void> = [];
    const lifecycleLimits = new LifecycleRateLimiter(limits, ctx.limiterStore);
    const onApiKeysRevoked = (ids: readonly string[]) => { for (const hook of apiKeysRevoked) hook(ids); };
    const lifecycle = new AccountLifecycle({
      db, passwords, refreshTokens, mail, loginLimiter, log, platformAdmins, limits: lifecycleLimits, onApiKeysRevoked,
    });
    const emailSignIn = new EmailSignIn({ db, mail, log, refreshTokens, limits: lifecycleLimits, accounts, signUp: limits.emailSignUp, onApiKeysRevoked });
    const sessions = new AccountSessions(db, refreshTokens, log);
    // an account's deletion takes the organizations it alone owns: what must happen first is plugged in (src/orgs/)
    const beforeDeletion: Array<(organizationIds: readonly string[]) => Promise<void>> = [];
    const data = new AccountData({
      db, passwords, loginLimiter, refreshTokens, sessions, log, platformAdmins,
      beforeOrganizationsDeleted: async (ids) => {
        for (const hook of beforeDeletion) await hook(ids);
      },
    });
    return {
      services: {
        accounts,
        platformAdmins,
        emailSignIn,
        /** queues a security notice in a change's transaction (notices.ts) */
        notices,
        /** every first factor asks these before a session or a second step (first-factor.ts) */
        useFirstFactorPolicy(policy: FirstFactorPolicy): void {
          accounts.useFirstFactorPolicy(policy);
        },
        onBeforeOrganizationsDeleted(hook: (organizationIds: readonly string[]) => Promise<void>): void {
          beforeDeletion.push(hook);
        },
        onApiKeysRevoked(hook: (keyIds: readonly string[]) => void): void {
          apiKeysRevoked.push(hook);
        },
      },
      schemas: [...ACCOUNT_SCHEMAS, ...LIFECYCLE_SCHEMAS, ...EMAIL_SIGN_IN_SCHEMAS],
      routeGroups: [
        accountRoutes(accounts, { secureCookies }), lifecycleRoutes(lifecycle), sessionRoutes(sessions, data, { secureCookies }),
        emailSignInRoutes(emailSignIn, { secureCookies }),
      ],
      queries: accountQueries(accounts),
      // route data `verifiedEmail` and `reauth`
      accountGuard: new AccountChecks({ db, passwords, loginLimiter, log }),
      // refused log-ins' audit entries and forgot-password work, answered before they finished: done before the database closes
      async stop() {
        await accounts.settle();
        await lifecycle.settle();
        await emailSignIn.settle();
      },
    };
  },
});
