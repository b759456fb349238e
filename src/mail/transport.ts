/**
 * Where a message goes when the worker delivers it: SMTP through nodemailer when MAIL_URL is
 * set, otherwise the local mailbox (dev and test), where the outbox row itself is the mail
 * and delivering only marks it sent.
 */
import nodemailer from 'nodemailer';
import { redactLinkTokens } from '../logging/redact-links.js';
import { withSpan } from '../observability/spans.js';

export interface OutgoingMail {
  id: string;
  kind: string;
  from: string;
  to: string;
  subject: string;
  html: string;
  text: string;
}

export interface MailTransport {
  readonly name: 'smtp' | 'mailbox';
  /** resolves once the receiving server took the message; rejects with the reason otherwise */
  send(mail: OutgoingMail): Promise<void>;
  close(): Promise<void>;
}

/** The address part of `Name <address>` or of a bare address. */
export function addressOf(mailbox: string): string {
  const m = /<([^<>]+)>\s*$/.exec(mailbox);
  return (m ? m[1] : mailbox).trim();
}

/** The display name of `Name <address>`, without quotes; undefined for a bare address. */
export function displayNameOf(mailbox: string): string | undefined {
  const m = /^\s*"?([^"<]*?)"?\s*<[^<>]+>\s*$/.exec(mailbox);
  return m && m[1] ? m[1] : undefined;
}

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
      await withSpan('smtp send', { ...spanAttributes, 'mail.kind': mail.kind }, () => transporter.sendMail({
        from: mail.from,
        to: mail.to,
        subject: mail.subject,
        html: mail.html,
        text: mail.text,
        // stable across retries, so a receiver can drop the duplicate of a resend after a crash
        messageId: `<${mail.id}@${addressOf(mail.from).split('@')[1] ?? 'localhost'}>`,
        headers: { 'Auto-Submitted': 'auto-generated', 'X-Mail-Kind': mail.kind },
      }));
    },
    async close() {
      transporter.close();
    },
  };
}

/** The local mailbox: nothing leaves the machine; the message stays readable in the outbox. */
export function mailboxTransport(): MailTransport {
  return {
    name: 'mailbox',
    async send() {},
    async close() {},
  };
}

/**
 * A delivery failure as it may be stored and logged: the error code, the SMTP reply code and
 * the message, without credentials or link tokens, bounded in length.
 */
export function describeSendError(err: unknown): string {
  const e = err as { code?: unknown; responseCode?: unknown; message?: unknown };
  const parts = [
    typeof e?.code === 'string' ? e.code : undefined,
    typeof e?.responseCode === 'number' ? String(e.responseCode) : undefined,
  ].filter(Boolean);
  const message = typeof e?.message === 'string' ? e.message : String(err);
  const text = `${parts.length ? `${parts.join(' ')}: ` : ''}${message}`
    .replace(/\/\/[^/\s@]*@/g, '//***@')
    .replace(/\s+/g, ' ');
  return redactLinkTokens(text).slice(0, 500);
}
