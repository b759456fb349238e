/**
 * Email (docs/email.md): the outbox services write to in their own transaction, the worker
 * that delivers it, and in dev the mailbox pages.
 */
import { sql } from 'kysely';
import { MESSAGES_KEY } from '../i18n/messages.js';
import { defineModule } from '../runtime/module.js';
import { createMail, type Mail } from './index.js';
import { MAIL_MESSAGES } from './messages/index.js';
import { mailboxHosts, mailboxRoutes } from './routes.js';
import { mailSettings } from './settings.js';
import { displayNameOf } from './transport.js';

export type { Mail, MailExecutor, MailMessage } from './index.js';

export interface MailServices {
  mail: Mail;
  /** the product's name, as the mail's From names it: authenticator apps and passkey prompts show it */
  productName: string;
}

export const mailModule = defineModule({
  name: 'mail',
  settings: (env, config) => mailSettings(env, config.env === 'prod'),
  // the emails' words (templates.ts through words.ts) and the mail routes' error messages
  declares: { [MESSAGES_KEY]: [MAIL_MESSAGES] },
  async start(ctx, settings) {
    const { config, metrics } = ctx;
    const mail = await createMail(settings, config.appUrl, ctx.db, ctx.logs, {
      onDelivery: metrics && ((outcome) => metrics.mailDelivery(outcome)),
      defaultLocale: config.defaultLocale,
    });
    mail.worker.start();
    // the partial index on pending rows answers it
    metrics?.gauge('saas_mail_outbox_pending', 'Messages waiting in the outbox to be sent (read at scrape time)', async () => {
      const { rows } = await sql<{ n: string | number }>`select count(*) as n from mail_outbox where status = 'pending'`.execute(ctx.db);
      return Number(rows[0]?.n ?? 0);
    });
    return {
      services: { mail, productName: displayNameOf(settings.from) ?? 'SaaS' } satisfies MailServices,
      // the mailbox shows live tokens: never outside dev
      routeGroups: config.env === 'dev' ? [mailboxRoutes(mail.mailbox, mail.transport, mailboxHosts([config.appUrl, ...config.allowedOrigins]))] : [],
      stop: () => mail.worker.stop(config.shutdownTimeoutMs),
    };
  },
});
