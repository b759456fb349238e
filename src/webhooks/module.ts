/**
 * Outgoing webhooks (docs/webhooks.md): an organization's endpoints, the delivery worker, the
 * routes and the settings. The services that cause events write them with `emitWebhookEvent`
 * (outbox.ts) in their own transactions; they start before this module and need nothing of it.
 */
import { SecretBox } from '../auth/secret-box.js';
import { counter } from '../http/rate-limit.js';
import { mailModule } from '../mail/module.js';
import { NOTIFICATION_KINDS_KEY } from '../notifications/kinds.js';
import { notificationsModule } from '../notifications/module.js';
import { orgsModule } from '../orgs/module.js';
import { defineModule } from '../runtime/module.js';
import { dnsResolver, systemResolver } from './address-guard.js';
import { WEBHOOK_DUE_CHANNEL } from './outbox.js';
import { webhookEventTypeRoutes, webhookRoutes } from './routes.js';
import { webhookSchemas } from './schemas.js';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_EVENT_TYPES_KEY, type DeclaredWebhookEventType } from './event-types.js';
import { WebhookSender } from './sender.js';
import { WebhookService } from './service.js';
import { webhookSettings } from './settings.js';
import { WebhookWorker, type AttemptOutcome } from './worker.js';
import { MESSAGES_KEY } from '../i18n/messages.js';
import { WEBHOOKS_MESSAGES } from './messages/index.js';

export { emitWebhookEvent } from './outbox.js';
export { WEBHOOK_EVENT_TYPES, WEBHOOK_EVENT_TYPES_KEY, type DeclaredWebhookEventType, type WebhookEventType } from './event-types.js';

export const webhooksModule = defineModule({
  name: 'webhooks',
  declares: {
    [MESSAGES_KEY]: [WEBHOOKS_MESSAGES],
    [NOTIFICATION_KINDS_KEY]: [
      { kind: 'webhook-disabled', category: 'developers', description: 'a failing webhook endpoint was disabled (owners and admins)' },
    ],
  },
  settings: (env, config) => webhookSettings(env, config.env === 'prod'),
  start(ctx, settings) {
    const log = ctx.logs.logger('saas.webhooks');
    // the built-in types, then those the modules of the system declare
    const eventTypes = [...WEBHOOK_EVENT_TYPES, ...ctx.declared<DeclaredWebhookEventType>(WEBHOOK_EVENT_TYPES_KEY).map((d) => d.type)];
    const { productName } = ctx.use(mailModule);
    const resolve = settings.dnsServers.length > 0 ? dnsResolver(settings.dnsServers) : systemResolver;
    const box = new SecretBox(ctx.config.encryptionKey, 'webhook-secret');
    const webhooks = new WebhookService({
      db: ctx.db,
      log,
      box,
      resolve,
      allowPrivate: settings.allowPrivate,
      requireHttps: settings.requireHttps,
      resolveTimeoutMs: settings.timeoutMs,
      manualLimiter: counter('webhook-manual-org', settings.manualLimit, ctx.limiterStore),
    });
    const sender = new WebhookSender({
      timeoutMs: settings.timeoutMs,
      resolve,
      allowPrivate: settings.allowPrivate,
      userAgent: `${productName.replace(/[^A-Za-z0-9._-]+/g, '-')}-Webhooks/${ctx.config.version}`,
    });

    let onAttempt: ((outcome: AttemptOutcome, seconds: number) => void) | undefined;
    const { metrics, db } = ctx;
    if (metrics) {
      const outcomes = ['succeeded', 'retry', 'failed'] as const;
      const deliveries = metrics.counter(
        'saas_outgoing_webhook_attempts_total',
        'Outgoing webhook attempts by outcome: succeeded, retry (failed, attempted again later), failed (given up)',
        ['outcome'],
        outcomes.map((outcome) => ({ outcome })),
      );
      const duration = metrics.histogram('saas_outgoing_webhook_attempt_duration_seconds', 'Time an outgoing webhook attempt took, by outcome', ['outcome']);
      onAttempt = (outcome, seconds) => {
        deliveries.labels(outcome).inc();
        duration.labels(outcome).observe(seconds);
      };
      const pending = () => db.selectFrom('webhook_delivery').where('status', '=', 'pending');
      metrics.gauge(
        'saas_outgoing_webhook_pending_deliveries',
        'Outgoing webhook deliveries waiting for an attempt or a retry (read at scrape time)',
        async () =>
          Number(
            (
              await pending()
                .select((eb) => eb.fn.countAll<string>().as('n'))
                .executeTakeFirstOrThrow()
            ).n,
          ),
      );
      metrics.gauge(
        'saas_outgoing_webhook_oldest_pending_seconds',
        'Age of the oldest pending outgoing webhook delivery, seconds; 0 when none (read at scrape time)',
        async () => {
          const row = await pending()
            .select((eb) => eb.fn.min('created_at').as('oldest'))
            .executeTakeFirst();
          return row?.oldest ? Math.max(0, (Date.now() - new Date(row.oldest).getTime()) / 1000) : 0;
        },
      );
    }

    const worker = new WebhookWorker({ db, log, sender, box, notifications: ctx.use(notificationsModule).notifications, settings, onAttempt });
    // every commit that wrote a delivery wakes the worker of every instance
    ctx.listener.subscribe({
      channel: WEBHOOK_DUE_CHANNEL,
      onNotification: () => worker.nudge(),
      catchUp: async () => worker.nudge(),
      // a nudge of a worker that polls by itself: not at every tick while LISTEN is down
      catchUpWhileDisconnected: false,
    });
    worker.start();
    return {
      // the guarded sender and the URL rules, for what else sends to a customer's URL (the audit log's streams)
      services: {
        webhooks,
        worker,
        sender,
        urlRules: { resolve, allowPrivate: settings.allowPrivate, requireHttps: settings.requireHttps, resolveTimeoutMs: settings.timeoutMs },
      },
      schemas: webhookSchemas(eventTypes),
      routeGroups: [webhookRoutes(webhooks, ctx.use(orgsModule).memberships), webhookEventTypeRoutes(eventTypes)],
      stop: () => worker.stop(ctx.config.shutdownTimeoutMs),
    };
  },
});
