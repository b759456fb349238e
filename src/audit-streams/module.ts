/**
 * The customer's audit trail streamed to its SIEM (docs/audit.md, "Streams" and "Retention"):
 * an organization's streams (https, Splunk, Datadog, S3), the delivery worker on the one job
 * runner, and the log's retention per plan. Entries are owed to streams by a trigger in the
 * transaction that appends them (migration 0028), so no module that audits knows of streams.
 */
import { SecretBox } from '../auth/secret-box.js';
import { billingModule } from '../billing/module.js';
import { counter } from '../http/rate-limit.js';
import { mailModule } from '../mail/module.js';
import { NOTIFICATION_KINDS_KEY } from '../notifications/kinds.js';
import { notificationsModule } from '../notifications/module.js';
import { orgsModule } from '../orgs/module.js';
import { defineModule } from '../runtime/module.js';
import { webhooksModule } from '../webhooks/module.js';
import { applyRetention } from './retention.js';
import { auditStreamRoutes } from './routes.js';
import { AUDIT_STREAM_SCHEMAS } from './schemas.js';
import { StreamSender } from './sending.js';
import { AuditStreamService } from './service.js';
import { auditStreamSettings } from './settings.js';
import { AUDIT_STREAM_DUE_CHANNEL, AuditStreamWorker } from './worker.js';
import { MESSAGES_KEY } from '../i18n/messages.js';
import { AUDIT_STREAMS_MESSAGES } from './messages/index.js';

export const auditStreamsModule = defineModule({
  name: 'audit-streams',
  declares: {
    [MESSAGES_KEY]: [AUDIT_STREAMS_MESSAGES],
    [NOTIFICATION_KINDS_KEY]: [
      { kind: 'audit-stream-paused', category: 'security', description: 'an audit log stream paused itself after failing for too long (owners and admins)' },
    ],
  },
  settings: (env) => auditStreamSettings(env),
  start(ctx, settings) {
    const log = ctx.logs.logger('saas.audit-streams');
    const { db, metrics } = ctx;
    const { sender: webhookSender, urlRules } = ctx.use(webhooksModule);
    const { billing } = ctx.use(billingModule);
    const { productName } = ctx.use(mailModule);
    const box = new SecretBox(ctx.config.encryptionKey, 'audit-stream');
    const sender = new StreamSender({
      sender: webhookSender,
      rules: urlRules,
      host: new URL(ctx.config.appUrl).hostname,
      service: productName.toLowerCase().replace(/[^a-z0-9._-]+/g, '-'),
      timeoutMs: urlRules.resolveTimeoutMs,
    });
    let onBatch: ((kind: string, ok: boolean, entries: number, seconds: number) => void) | undefined;
    if (metrics) {
      const batches = metrics.counter('saas_audit_stream_batches_total', 'Audit log stream batches sent, by kind and outcome (delivered, failed)', [
        'kind',
        'outcome',
      ]);
      const entries = metrics.counter('saas_audit_stream_entries_total', 'Audit log entries delivered to streams, by kind', ['kind']);
      metrics.gauge('saas_audit_stream_lag_entries', 'Audit log entries owed to streams, all organizations (read at scrape time)', async () =>
        Number(
          (
            await db
              .selectFrom('audit_stream_entry')
              .select((eb) => eb.fn.countAll<string>().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        ),
      );
      onBatch = (kind, ok, count) => {
        batches.labels(kind, ok ? 'delivered' : 'failed').inc();
        if (ok) entries.labels(kind).inc(count);
      };
    }
    const worker = new AuditStreamWorker({
      db,
      log,
      box,
      sender,
      notifications: ctx.use(notificationsModule).notifications,
      settings,
      retention: async () => {
        const deleted = await applyRetention(db, billing.catalogue);
        if (deleted > 0) log.info('audit-streams/retention', `Deleted ${deleted} audit log entries past their plan's retention`, { deleted });
        return 0;
      },
      onBatch,
    });
    const streams = new AuditStreamService({
      db,
      box,
      rules: urlRules,
      sender,
      testLimiter: counter('audit-stream-test-org', settings.testLimit, ctx.limiterStore),
      nudge: () => worker.nudge(),
    });
    // every commit that owed a stream an entry wakes the worker of every instance
    ctx.listener.subscribe({
      channel: AUDIT_STREAM_DUE_CHANNEL,
      onNotification: () => worker.nudge(),
      catchUp: async () => worker.nudge(),
      catchUpWhileDisconnected: false,
    });
    worker.start();
    return {
      services: { streams, worker, retention: () => applyRetention(db, billing.catalogue) },
      schemas: AUDIT_STREAM_SCHEMAS,
      routeGroups: [auditStreamRoutes(streams, ctx.use(orgsModule).memberships)],
      stop: () => worker.stop(ctx.config.shutdownTimeoutMs),
    };
  },
});
