/**
 * Every message the system sends: each kind is a function of its typed data returning the
 * subject and the HTML and text parts, the account's own in account-mails.ts, an organization's
 * in organization-mails.ts. To add one, add its data type to {@link MailTemplates} (kinds.ts)
 * and its function to one of the two (the compiler then asks for both). Values are escaped by the `html` tag;
 * links are built from APP_URL with the token in the query, as the client's pages expect.
 * Every text is a message id (its English ICU template: `phrase('…{product}…', {product})`, or
 * `msg('…')` for a constant one) formatted in the recipient's locale (words.ts, docs/email.md).
 */
import type { Locale } from '../shared/locales.js';
import { ACCOUNT_MAILS } from './account-mails.js';
import type { RenderedMail, TemplateContext } from './compose.js';
import type { MailKind, MailTemplates } from './kinds.js';
import { ORGANIZATION_MAILS } from './organization-mails.js';
import { mailWords, type MailWords } from './words.js';

export type { RenderedMail, TemplateContext } from './compose.js';

type Templates = { [K in MailKind]: (data: MailTemplates[K], ctx: TemplateContext, w: MailWords) => RenderedMail };

/** Every kind's template: the compiler asks for each kind of kinds.ts once. */
export const TEMPLATES: Templates = { ...ACCOUNT_MAILS, ...ORGANIZATION_MAILS };

/** Renders a message of `kind` from its data, in `locale` (the recipient's; English when none is given). */
export function renderMail<K extends MailKind>(kind: K, data: MailTemplates[K], ctx: TemplateContext, locale: Locale = 'en'): RenderedMail {
  return (TEMPLATES[kind] as (d: MailTemplates[K], c: TemplateContext, w: MailWords) => RenderedMail)(data, ctx, mailWords(locale));
}
