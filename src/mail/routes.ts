/**
 * `GET /dev/mailbox[/:id]`: the messages the system wrote, for a developer. Registered in dev
 * only (system.ts): the bodies carry live tokens. A browser (Accept: text/html) gets pages with
 * clickable links; anything else the data in the negotiated format (JSON, EDN, Transit).
 */
import { phrase } from '../i18n/messages.js';
import Negotiator from 'negotiator';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { ErrorBody, forbidden, notFound } from '../http/errors.js';
import { FORMATS } from '../http/formats.js';
import { ref, route, type RouteGroup } from '../http/routes.js';
import type { Mailbox } from './index.js';
import { linksOf, MAILBOX_PAGE_CSP, mailboxListPage, mailboxMessagePage, MESSAGE_HTML_CSP, messageHtmlDocument } from './mailbox-page.js';
import type { MailboxMessage } from './outbox.js';
import { MAIL_KINDS } from './kinds.js';

const MailboxEntry = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    kind: Type.String(),
    to: Type.String(),
    from: Type.String(),
    subject: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('sending'), Type.Literal('sent'), Type.Literal('failed')]),
    attempts: Type.Integer({ minimum: 0 }),
    'last-error': Type.Union([Type.String(), Type.Null()]),
    'created-at': Type.String({ format: 'date-time' }),
    'sent-at': Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    links: Type.Array(Type.String(), { description: 'the links in the text part, tokens included' }),
  },
  { additionalProperties: false },
);

const MailboxList = Type.Object({ messages: Type.Array(MailboxEntry) }, { additionalProperties: false });
const MailboxMessageBody = Type.Object(
  {
    ...MailboxEntry.properties,
    html: Type.Union([Type.String(), Type.Null()]),
    text: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);

const Html = Type.String({ description: 'an HTML page (Accept: text/html)' });
const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

const DATA_TYPES = FORMATS.map((f) => f.mime);

/** True when the caller prefers HTML to the data formats (a browser). */
function wantsHtml(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  if (!accept) return false;
  return new Negotiator({ headers: { accept } }).mediaType([...DATA_TYPES, 'text/html']) === 'text/html';
}

function sendHtml(reply: FastifyReply, body: string, csp?: string): string {
  reply.type('text/html; charset=utf-8').header('cache-control', 'no-store');
  if (csp) reply.header('content-security-policy', csp);
  return body;
}

function entry(m: MailboxMessage): Static<typeof MailboxEntry> {
  return {
    id: m.id,
    kind: m.kind,
    to: m.to,
    from: m.from,
    subject: m.subject,
    status: m.status,
    attempts: m.attempts,
    'last-error': m.lastError,
    'created-at': m.createdAt.toISOString(),
    'sent-at': m.sentAt?.toISOString() ?? null,
    links: linksOf(m),
  };
}

/** The host names a developer's browser may reach the mailbox by: the app's own origins and loopback. */
export function mailboxHosts(origins: readonly string[]): Set<string> {
  return new Set(['localhost', '127.0.0.1', '[::1]', ...origins.map((o) => new URL(o).hostname)]);
}

function hostnameOf(host: string | undefined): string {
  if (!host) return '';
  const h = host.toLowerCase();
  return h.startsWith('[') ? h.slice(0, h.indexOf(']') + 1) : h.split(':')[0];
}

/**
 * `hosts`: the host names the page answers to. Anything else is refused: a web page on another
 * site that rebinds its own name to this machine (DNS rebinding) would otherwise read the
 * mailbox, tokens included, from the developer's browser.
 */
export function mailboxRoutes(mailbox: Mailbox, transport: 'smtp' | 'mailbox', hosts: ReadonlySet<string>): RouteGroup {
  const checkHost = (request: FastifyRequest) => {
    if (!hosts.has(hostnameOf(request.headers.host))) throw forbidden("The mailbox answers only to the app's own host names", { reason: 'host' });
  };
  const find = async (id: string) => {
    const message = await mailbox.get(id);
    if (!message) throw notFound(phrase('No message {id}', { id }));
    return message;
  };
  return {
    prefix: '/dev/mailbox',
    tags: ['Dev mailbox'],
    auth: 'none',
    routes: [
      route({
        method: 'GET',
        path: '',
        summary: 'The messages the system wrote (dev only)',
        description: 'Newest first. A browser gets an HTML page with the links ready to click; other clients the data.',
        schemas: {
          querystring: Type.Object(
            {
              to: Type.Optional(Type.String({ maxLength: 254 })),
              kind: Type.Optional(Type.Union(MAIL_KINDS.map((k) => Type.Literal(k)))),
              limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
            },
            { additionalProperties: false },
          ),
          response: { 200: Type.Union([MailboxList, Html]), 403: ref(ErrorBody) },
        },
        async handler({ parameters, request, reply }) {
          checkHost(request);
          const { to, kind, limit } = parameters.query;
          const messages = await mailbox.list({ to, kind, limit });
          if (wantsHtml(request)) return sendHtml(reply, mailboxListPage(messages, { to }, transport), MAILBOX_PAGE_CSP);
          return { messages: messages.map(entry) };
        },
      }),
      route({
        method: 'GET',
        path: '/:id',
        summary: 'One message with its HTML and text parts (dev only)',
        schemas: { params: IdParams, response: { 200: Type.Union([MailboxMessageBody, Html]), 403: ref(ErrorBody), 404: ref(ErrorBody) } },
        async handler({ parameters, request, reply }) {
          checkHost(request);
          const message = await find(parameters.path.id);
          if (wantsHtml(request)) return sendHtml(reply, mailboxMessagePage(message), MAILBOX_PAGE_CSP);
          return { ...entry(message), html: message.html, text: message.text };
        },
      }),
      route({
        method: 'GET',
        path: '/:id/html',
        summary: 'The HTML part of one message, as sent (dev only)',
        description: 'Served sandboxed (no scripts); links open in the top window.',
        schemas: { params: IdParams, response: { 200: Html, 403: ref(ErrorBody), 404: ref(ErrorBody) } },
        async handler({ parameters, request, reply }) {
          checkHost(request);
          const message = await find(parameters.path.id);
          return sendHtml(reply, messageHtmlDocument(message), MESSAGE_HTML_CSP);
        },
      }),
    ],
  };
}
