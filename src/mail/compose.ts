/**
 * What every message is made of (templates.ts): the context it is rendered in, its links, its
 * greeting and lifetimes in the recipient's words, and {@link compose}, which builds the HTML and
 * the text part from one list of blocks.
 */
import { msg, phrase } from '../i18n/messages.js';
import type { MailKind, MailTemplates } from './kinds.js';
import { button, frame, paragraph, textFrame, type Html } from './layout.js';
import { mailWords, type MailWords } from './words.js';

export interface RenderedMail {
  subject: string;
  html: string;
  text: string;
}

export interface TemplateContext {
  /** the public base URL, an origin without a trailing slash */
  appUrl: string;
  /** the product's name, from MAIL_FROM's display name */
  product: string;
}

/** `APP_URL<path>?token=<token>`, the token URL-encoded. */
export function tokenLink(ctx: TemplateContext, path: string, token: string): string {
  return `${ctx.appUrl}${path}?token=${encodeURIComponent(token)}`;
}

/** A link's lifetime ("24 hours", "1 hour", "15 minutes") in the recipient's words. */
export function lifetime(seconds: number, w: MailWords = mailWords('en')): string {
  if (seconds % 86400 === 0) {
    if (seconds === 86400) return w.t(msg('24 hours'));
    return w.t(phrase('{count, plural, one {{count} day} other {{count} days}}', { count: seconds / 86400 }));
  }
  if (seconds % 3600 === 0) return w.t(phrase('{count, plural, one {{count} hour} other {{count} hours}}', { count: seconds / 3600 }));
  return w.t(phrase('{count, plural, one {{count} minute} other {{count} minutes}}', { count: Math.round(seconds / 60) }));
}

/** The first line of a message to a person: by name when there is one. */
export function greeting(name: string | null, w: MailWords = mailWords('en')): string {
  return name ? w.t(phrase('Hi {name},', { name })) : w.t(msg('Hello,'));
}

export type Block = { text: string } | { action: string; href: string };

export function compose(ctx: TemplateContext, w: MailWords, subject: string, preheader: string, blocks: Block[]): RenderedMail {
  const body: Html[] = blocks.map((b) => ('action' in b ? button(b.action, b.href, w.locale) : paragraph(b.text)));
  const text = blocks.map((b) => ('action' in b ? `${b.action}:\n${b.href}` : b.text));
  // a name or an organization with a line break must not start a new header line
  const oneLine = subject.replace(/[\r\n]+/g, ' ');
  return { subject: oneLine, html: frame({ product: ctx.product, preheader, body, locale: w.locale }), text: textFrame(ctx.product, text) };
}

/** The templates of some kinds: each a function of its typed data. */
export type TemplatesOf<K extends MailKind> = { [P in K]: (data: MailTemplates[P], ctx: TemplateContext, w: MailWords) => RenderedMail };

/** An organization's settings page, `APP_URL/orgs/<id>/<page>`. */
export const orgPath = (ctx: TemplateContext, organizationId: string, page: string) => `${ctx.appUrl}/orgs/${encodeURIComponent(organizationId)}/${page}`;
