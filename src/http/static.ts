/**
 * The browser client and static files from the public directory. `index.html` is served
 * with a fresh CSRF token in its hidden `__anti-forgery-token` field; a GET for a path
 * without a file extension outside `/api` and `/openapi`, from a browser (Accept: text/html),
 * is a client-side route and gets `index.html` too.
 */
import { readFile, stat } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ensureSession, type CsrfService } from './csrf.js';

export const CSRF_PLACEHOLDER = '__CSRF_TOKEN__';

const FALLBACK_INDEX = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>SaaS</title></head>
<body>
<input type="hidden" id="__anti-forgery-token" value="${CSRF_PLACEHOLDER}">
<main><h1>The browser client is not built</h1><p>Run <code>npm run build</code>, then reload. The API is at <a href="/openapi">/openapi</a>.</p></main>
</body></html>`;

function escapeAttr(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

function withToken(template: string, token: string): string {
  if (template.includes(CSRF_PLACEHOLDER)) return template.split(CSRF_PLACEHOLDER).join(escapeAttr(token));
  const field = `<input type="hidden" id="__anti-forgery-token" value="${escapeAttr(token)}">`;
  return template.replace(/<body([^>]*)>/i, `<body$1>\n${field}`);
}

/** `pageFields` as hidden inputs right after `<body>`: facts the client needs before any request. */
function withPageFields(template: string, fields: Record<string, string>): string {
  const inputs = Object.entries(fields).map(([id, value]) => `<input type="hidden" id="${escapeAttr(id)}" value="${escapeAttr(value)}">`);
  return inputs.length === 0 ? template : template.replace(/<body([^>]*)>/i, `<body$1>\n${inputs.join('\n')}`);
}

export interface StaticOptions {
  publicDir: string;
  csrf: CsrfService;
  secureCookies: boolean;
  /**
   * More hidden fields for the page, by element id: configuration the client reads at start
   * instead of asking for it (the sign-in providers: a first visit to the log-in page makes no request)
   */
  pageFields?: Record<string, string>;
}

export async function registerStatic(app: FastifyInstance, options: StaticOptions): Promise<void> {
  const root = resolve(options.publicDir);
  const indexPath = resolve(root, 'index.html');
  let cached: { mtimeMs: number; text: string } | undefined;

  async function indexTemplate(): Promise<string> {
    try {
      const st = await stat(indexPath);
      if (!cached || cached.mtimeMs !== st.mtimeMs) cached = { mtimeMs: st.mtimeMs, text: await readFile(indexPath, 'utf8') };
      return cached.text;
    } catch {
      return FALLBACK_INDEX;
    }
  }

  async function sendIndex(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const sessionId = ensureSession(request, reply, options.secureCookies);
    const html = withToken(withPageFields(await indexTemplate(), options.pageFields ?? {}), options.csrf.tokenFor(sessionId));
    // the page embeds a per-session token: never cache it
    return reply.header('cache-control', 'no-store').type('text/html; charset=utf-8').send(html);
  }

  app.get('/', { schema: { hide: true } }, sendIndex);
  app.get('/index.html', { schema: { hide: true } }, sendIndex);

  await app.register(fastifyStatic, {
    root, index: false, wildcard: true, serve: true, decorateReply: false,
    // API and docs paths are never files: answer their 404 without touching the disk
    allowedPath: (path) => !path.startsWith('/api/') && !path.startsWith('/openapi/'),
  });

  app.decorate('isClientRoute', (request: FastifyRequest): boolean => {
    if (request.method !== 'GET') return false;
    const path = request.url.split('?')[0];
    if (path === '/api' || path.startsWith('/api/') || path === '/openapi' || path.startsWith('/openapi/')) return false;
    if (extname(path) !== '') return false;
    return (request.headers.accept ?? '').includes('text/html');
  });
  app.decorate('sendIndex', sendIndex);
}

declare module 'fastify' {
  interface FastifyInstance {
    isClientRoute(request: FastifyRequest): boolean;
    sendIndex(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply>;
  }
}
