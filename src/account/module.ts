/**
 * Accounts (docs/account-lifecycle.md): sign-up, log-in, refresh and log-out; the account's
 * whole life by email (verification, password reset, email change); sessions, export, deletion.
 */
import { MESSAGES_KEY } from '../i18n/messages.js';
import { ACCOUNT_MESSAGES } from './messages/index.js';
import { authModule } from '../auth/module.js';
import { mailModule } from '../mail/module.js';
import { defineModule } from '../runtime/module.js';
import { ConfigError, oneOf, rateLimit, str, type Env } from '../runtime/settings.js';
import { BreachedPasswords, type BreachCheckOutcome } from './breached-passwords.js';
import { EmailSignIn } from './email-sign-in.js';
import { EMAIL_SIGN_IN_SCHEMAS, emailSignInRoutes } from './email-sign-in-routes.js';
import { AccountData } from './account-data.js';
import { AccountChecks } from './guard.js';
import { LIFECYCLE_SCHEMAS } from './lifecycle-schemas.js';
import { lifecycleRoutes } from './lifecycle-routes.js';
import { AccountLifecycle, type EmailChangePolicy } from './lifecycle-service.js';
import { AccountShaping } from './account-shaping.js';
import { LifecycleRateLimiter } from './limits.js';
import { accountQueries } from './queries.js';
import { accountRoutes, LOG_OUT_COOKIES_KEY, type LogOutCookie } from './routes.js';
import { ACCOUNT_SCHEMAS } from './schemas.js';
import { AccountService } from './service.js';
import type { FirstFactorPolicy } from './first-factor.js';
import { ACCOUNT_NOTIFICATION_KINDS, securityNotices } from './notices.js';
import { NOTIFICATION_KINDS_KEY } from '../notifications/kinds.js';
import { notificationsModule } from '../notifications/module.js';
import { productModule } from '../product/module.js';
import { sessionRoutes } from './session-routes.js';
import { AccountSessions } from './sessions.js';

/** An http(s) URL setting; anything else stops start-up naming the variable. */
function httpUrl(env: Env, name: string, fallback: string): string {
  const raw = str(env, name, fallback);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be an http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(name, `must be an http(s) URL, got "${raw}"`);
  return raw;
}

export const accountModule = defineModule({
  name: 'account',
  declares: { [NOTIFICATION_KINDS_KEY]: ACCOUNT_NOTIFICATION_KINDS, [MESSAGES_KEY]: [ACCOUNT_MESSAGES] },
  settings: (env, config) => ({
    resendAccount: rateLimit(env, 'RESEND_LIMIT_ACCOUNT', { count: 5, seconds: 3600 }),
    resendAddress: rateLimit(env, 'RESEND_LIMIT_ADDRESS', { count: 20, seconds: 3600 }),
    forgotEmail: rateLimit(env, 'FORGOT_PASSWORD_LIMIT_EMAIL', { count: 5, seconds: 3600 }),
    forgotAddress: rateLimit(env, 'FORGOT_PASSWORD_LIMIT_ADDRESS', { count: 20, seconds: 3600 }),
    emailSignInEmail: rateLimit(env, 'EMAIL_SIGN_IN_LIMIT_EMAIL', { count: 5, seconds: 3600 }),
    emailSignInAddress: rateLimit(env, 'EMAIL_SIGN_IN_LIMIT_ADDRESS', { count: 20, seconds: 3600 }),
    emailSignInVerifyAddress: rateLimit(env, 'EMAIL_SIGN_IN_VERIFY_LIMIT_ADDRESS', { count: 100, seconds: 900 }),
    emailCodeFailures: rateLimit(env, 'EMAIL_SIGN_IN_CODE_FAILURES', { count: 20, seconds: 86400 }),
    emailSignUp: oneOf(env, 'EMAIL_SIGN_UP', ['on', 'off'] as const, 'on') === 'on',
    breachCheck: {
      enabled: oneOf(env, 'PASSWORD_BREACH_CHECK', ['on', 'off'] as const, config.env === 'test' ? 'off' : 'on') === 'on',
      apiUrl: httpUrl(env, 'HIBP_API_URL', 'https://api.pwnedpasswords.com'),
    },
  }),
  start(ctx, limits) {
    const { db, metrics, secureCookies } = ctx;
    const { passwords, accessTokens, refreshTokens, loginLimiter, signUpLimiter } = ctx.use(authModule);
    const { mail } = ctx.use(mailModule);
    const log = ctx.logs.logger('saas.account');
    // what other modules plug into the account shape: the admin rule (src/admin/), the avatar's links (src/files/)
    const shaping = new AccountShaping();
    const { notifications } = ctx.use(notificationsModule);
    const notices = securityNotices(notifications, ctx.use(productModule).name);
    const breaches = new BreachedPasswords(
      limits.breachCheck,
      log,
      metrics &&
        (() => {
          const checks = metrics.counter(
            'saas_password_breach_checks_total',
            'Breached-password checks by outcome: clean, breached, unavailable (accepted unchecked)',
            ['outcome'],
            [{ outcome: 'clean' }, { outcome: 'breached' }, { outcome: 'unavailable' }],
          );
          return (outcome: BreachCheckOutcome) => checks.labels(outcome).inc();
        })(),
    );
    const accounts = new AccountService({
      db,
      passwords,
      accessTokens,
      refreshTokens,
      loginLimiter,
      signUpLimiter,
      mail,
      log,
      shaping,
      breaches,
      notices,
      onLogIn: metrics && ((outcome) => metrics.logIn(outcome)),
    });
    // API keys an unproven account made, revoked at its address's first proof: forgotten at once here (src/api-keys/)
    const apiKeysRevoked: Array<(keyIds: readonly string[]) => void> = [];
    const lifecycleLimits = new LifecycleRateLimiter(limits, ctx.limiterStore);
    const onApiKeysRevoked = (ids: readonly string[]) => {
      for (const hook of apiKeysRevoked) hook(ids);
    };
    // other modules' rules for a change of address (src/sso: an organization that requires single sign-on)
    const emailChangePolicies: EmailChangePolicy[] = [];
    const lifecycle = new AccountLifecycle({
      db,
      passwords,
      refreshTokens,
      mail,
      notifications,
      loginLimiter,
      log,
      shaping,
      limits: lifecycleLimits,
      onApiKeysRevoked,
      breaches,
      emailChangePolicies,
    });
    const emailSignIn = new EmailSignIn({
      db,
      mail,
      notifications,
      log,
      refreshTokens,
      limits: lifecycleLimits,
      accounts,
      signUp: limits.emailSignUp,
      onApiKeysRevoked,
    });
    const sessions = new AccountSessions(db, refreshTokens, log);
    // an account's deletion takes the organizations it alone owns: what must happen first is plugged in (src/orgs/)
    const beforeDeletion: Array<(organizationIds: readonly string[]) => Promise<void>> = [];
    const data = new AccountData({
      db,
      passwords,
      loginLimiter,
      refreshTokens,
      sessions,
      log,
      shaping,
      beforeOrganizationsDeleted: async (ids) => {
        for (const hook of beforeDeletion) await hook(ids);
      },
    });
    return {
      services: {
        accounts,
        shaping,
        emailSignIn,
        /** queues a security notice in a change's transaction (notices.ts) */
        notices,
        /** every first factor asks these before a session or a second step (first-factor.ts) */
        useFirstFactorPolicy(policy: FirstFactorPolicy): void {
          accounts.useFirstFactorPolicy(policy);
        },
        /** every change of address asks these, when asked for and when confirmed (lifecycle-service.ts) */
        useEmailChangePolicy(policy: EmailChangePolicy): void {
          emailChangePolicies.push(policy);
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
        accountRoutes(accounts, { secureCookies, alsoClear: ctx.declared<LogOutCookie>(LOG_OUT_COOKIES_KEY) }),
        lifecycleRoutes(lifecycle),
        sessionRoutes(sessions, data, { secureCookies }),
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
