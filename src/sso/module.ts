/**
 * Enterprise single sign-on (docs/sso.md): an organization's verified domains, its SAML 2.0
 * connection and the sign-on through it, the enforcement of SSO on the domains' accounts (a
 * first-factor policy on the account module's hook) and the daily certificate expiry check.
 */
import { accountModule } from '../account/module.js';
import { authModule } from '../auth/module.js';
import { counter } from '../auth/rate-limit.js';
import { NOTIFICATION_KINDS_KEY } from '../notifications/kinds.js';
import { notificationsModule } from '../notifications/module.js';
import { orgsModule } from '../orgs/module.js';
import { defineModule } from '../runtime/module.js';
import { ConnectionService, ServiceProviderUrls } from './connections.js';
import { DomainService, txtResolver } from './domains.js';
import { emailChangeEnforcement, enforcementPolicy } from './enforcement.js';
import { CertificateExpiryCheck } from './expiry.js';
import { ssoAdminRoutes, ssoSignOnRoutes } from './routes.js';
import { SSO_SCHEMAS } from './schemas.js';
import { ssoSettings } from './settings.js';
import { SignOnService } from './signon.js';
import { MESSAGES_KEY } from '../i18n/messages.js';
import { SSO_MESSAGES } from './messages/index.js';

export { domainOf } from './domains.js';

export const ssoModule = defineModule({
  name: 'sso',
  declares: {
    [MESSAGES_KEY]: [SSO_MESSAGES],
    [NOTIFICATION_KINDS_KEY]: [
      { kind: 'sso-certificate-expiring', category: 'security', description: "the organization's SAML certificate expires within 30 days (owners)" },
    ],
  },
  settings: (env) => ssoSettings(env),
  start(ctx, settings) {
    const log = ctx.logs.logger('saas.sso');
    const { db } = ctx;
    const { refreshTokens } = ctx.use(authModule);
    const { accounts, useEmailChangePolicy } = ctx.use(accountModule);
    const { memberships, invitations } = ctx.use(orgsModule);
    const urls = new ServiceProviderUrls(ctx.config.appUrl);
    const domains = new DomainService(db, txtResolver(settings.dnsServers), log);
    const connections = new ConnectionService(db, urls, log);
    const signOn = new SignOnService({
      db,
      urls,
      connections,
      domains,
      refreshTokens,
      notifications: ctx.use(notificationsModule).notifications,
      requestTtlMs: settings.requestTtlMs,
      checkNewSeat: (trx, organizationId) => invitations.checkNewSeat(trx, organizationId),
    });
    accounts.useFirstFactorPolicy(enforcementPolicy(db, log));
    useEmailChangePolicy(emailChangeEnforcement(db, log));
    const expiry = new CertificateExpiryCheck({
      db,
      notifications: ctx.use(notificationsModule).notifications,
      log,
      intervalMs: settings.expiryCheckMs,
      purge: () => signOn.purge(),
    });
    expiry.start();
    return {
      services: { domains, connections, signOn, expiry },
      schemas: SSO_SCHEMAS,
      routeGroups: [
        ssoAdminRoutes(domains, connections, memberships),
        ...ssoSignOnRoutes({
          db,
          signOn,
          connections,
          accounts,
          appUrl: ctx.config.appUrl,
          cookies: { secureCookies: ctx.secureCookies },
          log,
          startLimiter: counter('sso-start-address', settings.startLimit, ctx.limiterStore),
          acsAddressLimiter: counter('sso-acs-address', settings.acsAddressLimit, ctx.limiterStore),
          acsRequestLimiter: counter('sso-acs-request', settings.acsRequestLimit, ctx.limiterStore),
        }),
      ],
      stop: () => expiry.stop(),
    };
  },
});
