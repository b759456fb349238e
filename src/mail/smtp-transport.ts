/**
 * SMTP through nodemailer, for MAIL_URL. Imported only when MAIL_URL is set (mail/index.ts):
 * nodemailer is about 20 MB resident, which the embedded default without mail does not need
 * (docs/performance.md, "The embedded default's footprint").
 */
import nodemailer from 'nodemailer';
import { withSpan } from '../observability/spans.js';
import { addressOf, type MailTransport } from './transport.js';

export interface SmtpOptions {
  url: string;
  /** a send that takes longer fails (and is retried); keep well under MAIL_LEASE_MS */
  socketTimeoutMs?: number;
}

export function smtpTransport(options: SmtpOptions): MailTransport {
  const transporter = nodemailer.createTransport({
    url: options.url,
    pool: true,
    maxConnections: 2,
    // a connection lost mid-send fails the attempt: the outbox retries it, with its own backoff
    maxRequeues: 0,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: options.socketTimeoutMs ?? 30_000,
    // nodemailer's own logging would write whole SMTP conversations, bodies and links included
    logger: false,
    debug: false,
    // messages never read local files or fetch URLs named in their content
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  const server = new URL(options.url);
  // the host and port only: the URL's credentials never reach a span
  const spanAttributes = { 'server.address': server.hostname, 'server.port': Number(server.port || (server.protocol === 'smtps:' ? 465 : 587)) };
  return {
    name: 'smtp',
    async send(mail) {
      await withSpan('smtp send', { ...spanAttributes, 'mail.kind': mail.kind }, () =>
        transporter.sendMail({
          from: mail.from,
          to: mail.to,
          subject: mail.subject,
          html: mail.html,
          text: mail.text,
          // stable across retries, so a receiver can drop the duplicate of a resend after a crash
          messageId: `<${mail.id}@${addressOf(mail.from).split('@')[1] ?? 'localhost'}>`,
          headers: { ...mail.headers, 'Auto-Submitted': 'auto-generated', 'X-Mail-Kind': mail.kind },
        }),
      );
    },
    async close() {
      transporter.close();
    },
  };
}
