/**
 * Notifications (docs/notifications.md): what happened to a person, in the app (the bell, live on
 * every instance) and by email (at once, in a daily digest, or not), by their choice per category
 * and their organization's defaults. Modules declare categories and kinds
 * (`declares: {[NOTIFICATION_KINDS_KEY]: [...]}`) and call `notify(trx, …)` in the transaction of
 * the cause; the notice emails of the product are these kinds' email channel.
 */
import { authModule } from '../auth/module.js';
import { apiSecurityHeaders } from '../http/security-headers.js';
import { mailModule } from '../mail/module.js';
import { membershipResolver } from '../orgs/data.js';
import { productModule } from '../product/module.js';
import { defineModule } from '../runtime/module.js';
import { ConfigError, int, type Env } from '../runtime/settings.js';
import { apiResourceOf, OAUTH_SCOPES_KEY } from '../shared/oauth-scopes.js';
import { Digest } from './digest.js';
import { BUILT_IN_CATEGORIES, NOTIFICATION_CATEGORIES_KEY, NOTIFICATION_KINDS_KEY, type NotificationCategory, type NotificationKind } from './kinds.js';
import { Preferences } from './preferences.js';
import { notificationRoutes } from './routes.js';
import { NOTIFICATION_SCHEMAS } from './schemas.js';
import { NotificationService } from './service.js';
import { NotificationStreams, STREAM_PATH, STREAM_SCOPE } from './stream.js';
import { UNSUBSCRIBE_PATH, UnsubscribePage } from './unsubscribe-page.js';
import { UnsubscribeTokens } from './unsubscribe.js';
import { type Catalogs, MESSAGES_KEY, Translator } from '../i18n/messages.js';
import { NOTIFICATIONS_MESSAGES } from './messages/index.js';

const PURGE_EVERY_MS = 3_600_000;

/** NOTIFICATION_DIGEST_AT: `HH:MM` UTC, as minutes after midnight. */
function digestAt(env: Env): number {
  const raw = env.NOTIFICATION_DIGEST_AT?.trim() || '08:00';
  const m = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(raw);
  if (!m) throw new ConfigError('NOTIFICATION_DIGEST_AT', `must be HH:MM (UTC, 24-hour), got "${raw}"`);
  return Number(m[1]) * 60 + Number(m[2]);
}

export const notificationsModule = defineModule({
  name: 'notifications',
  declares: {
    [MESSAGES_KEY]: [NOTIFICATIONS_MESSAGES],
    [NOTIFICATION_CATEGORIES_KEY]: BUILT_IN_CATEGORIES,
    [OAUTH_SCOPES_KEY]: [{ scope: STREAM_SCOPE, words: 'Read your notifications' }],
  },
  settings: (env) => ({
    streamsPerAccount: int(env, 'NOTIFICATION_STREAMS_PER_ACCOUNT', 5, 1, 100_000),
    digestAtMinute: digestAt(env),
  }),
  start(ctx, settings) {
    const { config, db } = ctx;
    const log = ctx.logs.logger('saas.notifications');
    const auth = ctx.use(authModule);
    const { mail } = ctx.use(mailModule);
    const categories = new Map<string, NotificationCategory>();
    for (const c of ctx.declared<NotificationCategory>(NOTIFICATION_CATEGORIES_KEY)) {
      if (categories.has(c.id)) throw new Error(`The notification category ${c.id} is declared twice`);
      categories.set(c.id, c);
    }
    const kinds = new Map<string, NotificationKind>();
    for (const k of ctx.declared<NotificationKind>(NOTIFICATION_KINDS_KEY)) {
      if (kinds.has(k.kind)) throw new Error(`The notification kind ${k.kind} is declared twice`);
      if (!categories.has(k.category)) throw new Error(`The notification kind ${k.kind} names the category ${k.category}, which no module declares`);
      kinds.set(k.kind, k);
    }
    const tokens = new UnsubscribeTokens(config.encryptionKey);
    const preferences = new Preferences(db, categories);
    const notifications = new NotificationService({
      db,
      mail,
      preferences,
      categories,
      kinds,
      unsubscribe: tokens,
      appUrl: config.appUrl,
      translator: new Translator(ctx.declared<Catalogs>(MESSAGES_KEY)),
      defaultLocale: config.defaultLocale,
    });
    const headers = apiSecurityHeaders(config.secureCookies);
    const streams = new NotificationStreams({
      db,
      tokens: auth.accessTokens,
      isRevoked: (sessionId) => auth.revokedSessions.isRevoked(sessionId),
      notifications,
      log,
      perAccount: settings.streamsPerAccount,
      apiResource: apiResourceOf(config.appUrl),
      headers,
      draining: ctx.draining,
    });
    ctx.listener.subscribe({
      channel: 'notification',
      onNotification: (payload) => streams.wake(payload.split(':')[0]!),
      // while LISTEN was away: every open stream reads what came after its cursor
      catchUp: async () => streams.wakeAll(),
    });
    const digest = new Digest({ db, mail, notifications, log, atMinute: settings.digestAtMinute });
    digest.start();
    const unsubscribe = new UnsubscribePage({
      tokens,
      preferences,
      categories,
      product: ctx.use(productModule).name,
      headers,
      log,
      localeOf: async (accountId) => (await db.selectFrom('account').select('locale').where('id', '=', accountId).executeTakeFirst())?.locale ?? null,
    });
    const purge = setInterval(
      () => void notifications.purge().catch((err: Error) => log.warn('notifications/purge-failed', `Purging old notifications failed: ${err.message}`)),
      PURGE_EVERY_MS,
    );
    purge.unref();
    return {
      services: { notifications, preferences, streams, digest, categories, kinds },
      schemas: NOTIFICATION_SCHEMAS,
      routeGroups: [notificationRoutes(notifications, preferences, membershipResolver(db))],
      mounts: [
        { urls: [STREAM_PATH], handle: (req, res, _address, _app, say) => streams.handle(req, res, say) },
        { urls: [UNSUBSCRIBE_PATH], handle: (req, res, _address, _app, say) => unsubscribe.handle(req, res, say) },
      ],
      async stop() {
        clearInterval(purge);
        digest.stop();
        streams.close();
      },
    };
  },
});
