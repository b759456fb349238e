/**
 * Where a message goes when the worker delivers it: SMTP through nodemailer when MAIL_URL is
 * set (smtp-transport.ts, loaded only then), otherwise the local mailbox (dev and test), where
 * the outbox row itself is the mail and delivering only marks it sent.
 */
import { redactLinkTokens } from '../logging/redact-links.js';

export interface OutgoingMail {
  id: string;
  kind: string;
  from: string;
  to: string;
  subject: string;
  html: string;
  text: string;
  /** headers the message set (List-Unsubscribe) */
  headers?: Record<string, string>;
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
  return m?.[1] ? m[1] : undefined;
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
  const parts = [typeof e?.code === 'string' ? e.code : undefined, typeof e?.responseCode === 'number' ? String(e.responseCode) : undefined].filter(Boolean);
  const message = typeof e?.message === 'string' ? e.message : String(err);
  const text = `${parts.length ? `${parts.join(' ')}: ` : ''}${message}`.replace(/\/\/[^/\s@]*@/g, '//***@').replace(/\s+/g, ' ');
  return redactLinkTokens(text).slice(0, 500);
}
