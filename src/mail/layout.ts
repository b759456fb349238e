import { msg, phrase } from '../i18n/messages.js';
import { type Locale, textDirection } from '../shared/locales.js';
import { mailWords } from './words.js';

/**
 * The building blocks every message template shares: escaping, the HTML frame (inline styles
 * only: mail clients drop <style> blocks and external sheets), a button, and the matching
 * plain-text shapes. Templates (templates.ts) only say what a message says.
 */

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** A piece of HTML that is already safe: the only way markup enters a message. */
export class Html {
  constructor(readonly markup: string) {}
  toString(): string {
    return this.markup;
  }
}

/**
 * Tagged template for message HTML: every interpolated value is escaped unless it is
 * {@link Html} (built by these helpers), so no template can forget to escape.
 */
export function html(strings: TemplateStringsArray, ...values: Array<string | number | Html | Html[]>): Html {
  let out = strings[0];
  values.forEach((value, i) => {
    const parts = Array.isArray(value) ? value : [value];
    out += parts.map((v) => (v instanceof Html ? v.markup : escapeHtml(String(v)))).join('') + strings[i + 1];
  });
  return new Html(out);
}

export function paragraph(text: string | Html): Html {
  return html`<p style="margin:0 0 16px;font-size:15px;line-height:1.5;color:#1f2933">${text}</p>`;
}

/** A call-to-action link styled as a button, with the address written out below for clients that hide buttons. */
export function button(label: string, href: string, locale: Locale = 'en'): Html {
  const hint = mailWords(locale).t(msg('If the button does not work, copy this address into your browser:'));
  return html`<p style="margin:24px 0"><a href="${href}" style="display:inline-block;padding:12px 20px;border-radius:6px;background:#2563eb;color:#ffffff;font-weight:600;text-decoration:none">${label}</a></p>
<p style="margin:0 0 16px;font-size:13px;line-height:1.5;color:#52606d">${hint}<br><a href="${href}" style="color:#2563eb;word-break:break-all">${href}</a></p>`;
}

export interface Frame {
  /** product name, shown in the header and footer */
  product: string;
  /** one short line shown before the message in inbox previews */
  preheader: string;
  body: Html[];
  /** the recipient's: the document's `lang` and `dir`, and the footer's words */
  locale?: Locale;
}

/** The whole HTML document of a message. */
export function frame({ product, preheader, body, locale = 'en' }: Frame): string {
  const footer = mailWords(locale).t(phrase('This message was sent by {product} because of an action on your account.', { product }));
  return html`<!doctype html>
<html lang="${locale}" dir="${textDirection(locale)}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${product}</title></head>
<body style="margin:0;padding:0;background:#f5f7fa;font-family:-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif">
<div style="display:none;max-height:0;overflow:hidden">${preheader}</div>
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="background:#f5f7fa"><tr><td align="center" style="padding:32px 16px">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="max-width:560px;background:#ffffff;border-radius:8px"><tr><td style="padding:32px">
<p style="margin:0 0 24px;font-size:18px;font-weight:700;color:#1f2933">${product}</p>
${body}
</td></tr></table>
<p style="margin:16px 0 0;font-size:12px;color:#7b8794">${footer}</p>
</td></tr></table>
</body>
</html>
`.markup;
}

/** The plain-text part: paragraphs separated by blank lines, then the product's footer. */
export function textFrame(product: string, paragraphs: string[]): string {
  return `${paragraphs.join('\n\n')}\n\n-- \n${product}\n`;
}
