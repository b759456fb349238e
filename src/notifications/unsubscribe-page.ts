/**
 * `APP_URL/api/notifications/unsubscribe?token=…` (RFC 8058), a mount: a mail provider's one-click
 * POST (`List-Unsubscribe=One-Click`, form-encoded, no session) turns the token's category email
 * off for its account; a GET shows a page that asks to confirm (a link followed by a scanner must
 * change nothing). A token tampered with or expired: 400 and nothing changed.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Say } from '../http/app.js';
import type { Words } from '../http/errors.js';
import { msg, phrase } from '../i18n/messages.js';
import type { Logger } from '../logging/logger.js';
import { textDirection } from '../shared/locales.js';
import type { NotificationCategory } from './kinds.js';
import type { Preferences } from './preferences.js';
import type { UnsubscribeTokens } from './unsubscribe.js';

export const UNSUBSCRIBE_PATH = '/api/notifications/unsubscribe';

const html = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export class UnsubscribePage {
  constructor(
    private readonly deps: {
      tokens: UnsubscribeTokens;
      preferences: Preferences;
      categories: ReadonlyMap<string, NotificationCategory>;
      product: string;
      headers: Record<string, string>;
      log: Logger;
      /** the account's own language setting (the page is in it, as the email was) */
      localeOf(accountId: string): Promise<string | null>;
    },
  ) {}

  handle(req: IncomingMessage, res: ServerResponse, say: Say): void {
    for (const [name, value] of Object.entries(this.deps.headers)) res.setHeader(name, value);
    const url = new URL(req.url ?? '/', 'http://localhost');
    const token = url.searchParams.get('token') ?? '';
    const found = this.deps.tokens.verify(token);
    if (!found) {
      req.resume();
      if (req.method === 'POST') this.json(res, 400, { type: 'bad-request', message: say(msg('The unsubscribe link is not valid or has expired')) });
      else if (req.method !== 'GET') this.notAllowed(res, say);
      else
        this.page(res, 400, say, null, msg('This unsubscribe link is not valid or has expired. Choose what you get in your account’s notification settings.'));
      return;
    }
    // the database away: the request's language (the page needs nothing else of it; a POST then answers 503)
    this.deps.localeOf(found.accountId).then(
      (locale) => this.answer(req, res, say, found, token, locale),
      () => this.answer(req, res, say, found, token, null),
    );
  }

  private answer(
    req: IncomingMessage,
    res: ServerResponse,
    say: Say,
    found: { accountId: string; category: string },
    token: string,
    locale: string | null,
  ): void {
    const names = (categories: string[]) =>
      categories.map((c) => {
        const category = this.deps.categories.get(c);
        return category ? say(category.name, locale) : c;
      });
    const list = (categories: string[]) => new Intl.ListFormat(say.locale(locale), { type: 'conjunction' }).format(names(categories));
    const product = this.deps.product;
    if (req.method === 'POST') {
      req.resume();
      this.deps.preferences.emailOff(found.accountId, found.category).then(
        (muted) => {
          this.deps.log.info('notifications/unsubscribed', 'An account turned a category’s email off by its link', {
            'account-id': found.accountId,
            categories: muted.join(','),
          });
          if (String(req.headers.accept ?? '').includes('text/html'))
            return this.page(res, 200, say, locale, phrase('You will no longer get {categories} emails from {product}.', { categories: list(muted), product }));
          this.json(res, 200, { unsubscribed: muted });
        },
        () => this.unavailable(res, say),
      );
      return;
    }
    req.resume();
    if (req.method !== 'GET') {
      this.notAllowed(res, say);
      return;
    }
    const form = {
      markup: `<form method="post" action="${UNSUBSCRIBE_PATH}?token=${encodeURIComponent(token)}"><button type="submit">${html(say(msg('Unsubscribe'), locale))}</button></form>`,
    };
    this.page(
      res,
      200,
      say,
      locale,
      phrase('Stop {categories} emails from {product}?', { categories: list(found.category.split(',')), product }),
      form,
      msg('You can turn them on again in your notification settings.'),
    );
  }

  private unavailable(res: ServerResponse, say: Say): void {
    this.json(res, 503, { type: 'service-unavailable', message: say(msg('Try again shortly')) }, { 'retry-after': '5' });
  }

  private notAllowed(res: ServerResponse, say: Say): void {
    this.json(res, 405, { type: 'method-not-allowed', message: say(msg('Only GET and POST are allowed here')) }, { allow: 'GET, POST' });
  }

  private json(res: ServerResponse, status: number, body: Record<string, unknown>, headers: Record<string, string> = {}): void {
    res.statusCode = status;
    for (const [name, value] of Object.entries({ 'content-type': 'application/json; charset=utf-8', ...headers })) res.setHeader(name, value);
    res.end(JSON.stringify(body));
  }

  /** The page in the account's language (else the request's): its paragraphs, and markup between them. */
  private page(res: ServerResponse, status: number, say: Say, account: string | null, ...parts: Array<Words | { markup: string }>): void {
    const locale = say.locale(account);
    const title = html(say(msg('Email notifications'), account));
    const body = parts.map((p) => (typeof p === 'object' && 'markup' in p ? p.markup : `<p>${html(say(p, account))}</p>`)).join('');
    res.statusCode = status;
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.setHeader('content-security-policy', "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
    res.end(
      `<!doctype html><html lang="${locale}" dir="${textDirection(locale)}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${title}</title></head>` +
        `<body><main><h1>${title}</h1>${body}</main></body></html>`,
    );
  }
}
