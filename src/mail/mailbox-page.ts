/**
 * The dev mailbox's HTML: a list of the messages the system wrote, newest first, each with its
 * links ready to click (verification, reset ...), and one message with its HTML part in a
 * sandboxed frame and its text part. Dev only: the links carry live tokens.
 */
import { createHash } from 'node:crypto';
import { escapeHtml as e } from './layout.js';
import type { MailboxMessage } from './outbox.js';

const URL_IN_TEXT = /https?:\/\/[^\s<>"')]+/g;

/** The links in a message's text part, in order, each once. */
export function linksOf(message: Pick<MailboxMessage, 'text'>): string[] {
  return [...new Set(message.text?.match(URL_IN_TEXT) ?? [])];
}

const STYLE = `body{font:14px/1.5 system-ui,sans-serif;margin:24px;color:#1f2933}table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid #e4e7eb;vertical-align:top}th{font-weight:600;color:#52606d}
.status-failed{color:#b91c1c}.status-pending,.status-sending{color:#b45309}.status-sent{color:#047857}
iframe{width:100%;height:520px;border:1px solid #e4e7eb;border-radius:6px}pre{white-space:pre-wrap;background:#f5f7fa;padding:12px;border-radius:6px}
.muted{color:#7b8794}a{color:#2563eb}`;

/**
 * The mailbox pages' policy: their one stylesheet allowed by its hash (no 'unsafe-inline'), no
 * script at all, the message's HTML part framed from this server.
 */
export const MAILBOX_PAGE_CSP =
  `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; ` +
  "img-src 'self' data:; frame-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${e(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`;
}

function when(d: Date | null): string {
  return d ? e(d.toISOString().replace('T', ' ').slice(0, 19)) : '';
}

function linkList(links: string[]): string {
  return links.map((l) => `<a href="${e(l)}">${e(l.length > 70 ? `${l.slice(0, 67)}...` : l)}</a>`).join('<br>');
}

export function mailboxListPage(messages: MailboxMessage[], filter: { to?: string }, transport: 'smtp' | 'mailbox'): string {
  const rows = messages
    .map(
      (m) => `<tr>
<td class="muted">${when(m.createdAt)}</td><td>${e(m.to)}</td><td>${e(m.kind)}</td>
<td><a href="/dev/mailbox/${e(m.id)}">${e(m.subject)}</a></td>
<td class="status-${e(m.status)}">${e(m.status)}${m.attempts > 1 ? ` (${m.attempts} attempts)` : ''}</td>
<td>${linkList(linksOf(m))}</td></tr>`,
    )
    .join('\n');
  const delivery =
    transport === 'mailbox'
      ? 'Local mailbox: nothing leaves this machine (MAIL_URL is not set).'
      : 'MAIL_URL is set: messages are also sent over SMTP; bodies are dropped once sent.';
  return page(
    'Mailbox',
    `<h1>Mailbox</h1>
<p class="muted">${e(delivery)} Newest first. <a href="/dev/mailbox">Refresh</a></p>
<form method="get" action="/dev/mailbox"><label>To <input name="to" value="${e(filter.to ?? '')}" type="email"></label> <button>Filter</button></form>
${messages.length === 0 ? '<p>No messages yet.</p>' : `<table><thead><tr><th>Queued (UTC)</th><th>To</th><th>Kind</th><th>Subject</th><th>Status</th><th>Links</th></tr></thead><tbody>${rows}</tbody></table>`}`,
  );
}

export function mailboxMessagePage(m: MailboxMessage): string {
  const links = linksOf(m);
  const text =
    m.text === null
      ? '<p class="muted">(dropped after delivery)</p>'
      : `<pre>${e(m.text).replace(/https?:\/\/[^\s<>"')]+/g, (url) => `<a href="${url}">${url}</a>`)}</pre>`;
  return page(
    m.subject,
    `<p><a href="/dev/mailbox">&larr; Mailbox</a></p>
<h1>${e(m.subject)}</h1>
<table>
<tr><th>From</th><td>${e(m.from)}</td></tr><tr><th>To</th><td>${e(m.to)}</td></tr>
<tr><th>Kind</th><td>${e(m.kind)}</td></tr>
<tr><th>Status</th><td class="status-${e(m.status)}">${e(m.status)}, ${m.attempts} attempt${m.attempts === 1 ? '' : 's'}${m.lastError ? `, last error: ${e(m.lastError)}` : ''}</td></tr>
<tr><th>Queued</th><td>${when(m.createdAt)} UTC</td></tr><tr><th>Sent</th><td>${m.sentAt ? `${when(m.sentAt)} UTC` : ''}</td></tr>
<tr><th>Links</th><td>${linkList(links) || '<span class="muted">none</span>'}</td></tr>
</table>
<h2>HTML part</h2>
${
  m.html === null
    ? '<p class="muted">(dropped after delivery)</p>'
    : `<iframe src="/dev/mailbox/${e(m.id)}/html" title="HTML part" sandbox="allow-popups allow-popups-to-escape-sandbox allow-top-navigation-by-user-activation"></iframe>`
}
<h2>Text part</h2>
${text}`,
  );
}

/** The message's own HTML for the frame: links open in the top window, the page itself runs nothing. */
export function messageHtmlDocument(m: MailboxMessage): string {
  const html = m.html ?? '';
  return /<head[^>]*>/i.test(html) ? html.replace(/<head[^>]*>/i, (head) => `${head}<base target="_top">`) : `<base target="_top">${html}`;
}

/** The policy for {@link messageHtmlDocument}: no scripts, no requests but images, framed by the mailbox only. */
export const MESSAGE_HTML_CSP =
  "sandbox allow-popups allow-popups-to-escape-sandbox allow-top-navigation-by-user-activation; default-src 'none'; style-src 'unsafe-inline'; img-src data: https:; frame-ancestors 'self'";
