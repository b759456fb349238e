/**
 * `APP_URL/api/notifications/unsubscribe?token=…` (RFC 8058), a mount: a mail provider's one-click
 * POST (`List-Unsubscribe=One-Click`, form-encoded, no session) turns the token's category email
 * off for its account; a GET shows a page that asks to confirm (a link followed by a scanner must
 * change nothing). A token tampered with or expired: 400 and nothing changed.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../logging/logger.js';
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
    },
  ) {}

  handle(req: IncomingMessage, res: ServerResponse): void {
    for (const [name, value] of Object.entries(this.deps.headers)) res.setHeader(name, value);
    const url = new URL(req.url ?? '/', 'http://localhost');
    const token = url.searchParams.get('token') ?? '';
    const found = this.deps.tokens.verify(token);
    const names = (found?.category ?? '')
      .split(',')
      .map((c) => this.deps.categories.get(c)?.name ?? c)
      .join(', ');
    if (req.method === 'POST') {
      req.resume();
      if (!found) {
        this.json(res, 400, { type: 'bad-request', message: 'The unsubscribe link is not valid or has expired' });
        return;
      }
      this.deps.preferences.emailOff(found.accountId, found.category).then(
        (muted) => {
          this.deps.log.info('notifications/unsubscribed', 'An account turned a category’s email off by its link', {
            'account-id': found.accountId,
            categories: muted.join(','),
          });
          if (String(req.headers.accept ?? '').includes('text/html'))
            return this.page(res, 200, `You will no longer get ${html(names)} emails from ${html(this.deps.product)}.`);
          this.json(res, 200, { unsubscribed: muted });
        },
        () => this.json(res, 503, { type: 'service-unavailable', message: 'Try again shortly' }, { 'retry-after': '5' }),
      );
      return;
    }
    if (req.method !== 'GET') this.json(res, 405, { type: 'method-not-allowed', message: 'GET or POST' }, { allow: 'GET, POST' });
    else if (!found) this.page(res, 400, 'This unsubscribe link is not valid or has expired. Choose what you get in your account’s notification settings.');
    else
      this.page(
        res,
        200,
        `Stop ${html(names)} emails from ${html(this.deps.product)}?</p><form method="post" action="${UNSUBSCRIBE_PATH}?token=${encodeURIComponent(token)}"><button type="submit">Unsubscribe</button></form><p>You can turn them on again in your notification settings.`,
      );
  }

  private json(res: ServerResponse, status: number, body: Record<string, unknown>, headers: Record<string, string> = {}): void {
    res.statusCode = status;
    for (const [name, value] of Object.entries({ 'content-type': 'application/json; charset=utf-8', ...headers })) res.setHeader(name, value);
    res.end(JSON.stringify(body));
  }

  private page(res: ServerResponse, status: number, paragraph: string): void {
    res.statusCode = status;
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.setHeader('content-security-policy', "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
    res.end(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>Email notifications</title></head>` +
        `<body><main><h1>Email notifications</h1><p>${paragraph}</p></main></body></html>`,
    );
  }
}
