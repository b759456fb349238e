/**
 * The browser client and static files from the public directory. `index.html` is served
 * with a fresh CSRF token in its hidden `__anti-forgery-token` field; a GET for a path
 * without a file extension outside `/api` and `/openapi`, from a browser (Accept: text/html),
 * is a client-side route and gets `index.html` too.
 *
 * The public directory is the client's build output, which does not change while the server
 * runs: its files are listed once at start and `index.html` is kept in memory, so a request
 * for a path that is not a file (most of what scanners send) is answered without touching the
 * disk. Only a listed file is read, by @fastify/static's `sendFile` (ETag, Last-Modified,
 * ranges, HEAD). In dev, the listing and the page are taken again when the directory changes
 * (`npm run build:client` while the server runs).
 */
import { watch, type Dirent, type FSWatcher } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { extname, join, posix, relative, resolve, sep } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PAGE_LOCALE_FIELD, textDirection, type Locale } from '../shared/locales.js';
import { ensureSession, type CsrfService } from './csrf.js';
import { callNotFound } from './route-data.js';

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
  /** take the listing and the page again when the directory changes (dev) */
  watch?: boolean;
  /** the page's language for a request (cookie, Accept-Language, the default): its `lang`, `dir` and the client's first words */
  localeOf?: (request: FastifyRequest) => Locale;
}

/** The build's chunk of each locale's words (`/assets/words-de-<hash>.js`), by locale. */
function wordsChunks(files: Set<string>): Map<string, string> {
  const chunks = new Map<string, string>();
  for (const file of files) {
    const locale = /^\/assets\/words-([a-z]+)-[^/]+\.js$/.exec(file)?.[1];
    if (locale) chunks.set(locale, file);
  }
  return chunks;
}

/**
 * The page in `locale`: `<html lang dir>`, the field the client reads, and a preload of the
 * locale's words, fetched beside the entry rather than after it.
 */
function inLocale(html: string, locale: Locale, words: string | undefined): string {
  const preload = words ? `<link rel="modulepreload" crossorigin href="${escapeAttr(words)}">\n</head>` : '</head>';
  return html
    .replace(/<html[^>]*>/i, `<html lang="${locale}" dir="${textDirection(locale)}">`)
    .replace(/<\/head>/i, preload)
    .replace(/<body([^>]*)>/i, `<body$1>\n<input type="hidden" id="${PAGE_LOCALE_FIELD}" value="${locale}">`);
}

/** Every file under `root` (dotfiles included, as @fastify/static served them), as URL paths: `/assets/app.js`. */
async function listFiles(root: string): Promise<Set<string>> {
  const files = new Set<string>();
  let entries: Dirent[];
  try {
    entries = await readdir(root, { recursive: true, withFileTypes: true });
  } catch {
    return files; // no public directory (the client is not built): only the fallback page
  }
  for (const entry of entries) {
    if (!entry.isFile() && !entry.isSymbolicLink()) continue;
    files.add('/' + relative(root, join(entry.parentPath, entry.name)).split(sep).join('/'));
  }
  return files;
}

/** The page with the page fields in place and a function that writes a session's token into it. */
function pageTemplate(template: string, pageFields: Record<string, string>): (token: string) => string {
  const page = withPageFields(template, pageFields);
  if (page.includes(CSRF_PLACEHOLDER)) {
    const parts = page.split(CSRF_PLACEHOLDER);
    return (token) => parts.join(escapeAttr(token));
  }
  return (token) => withToken(page, token);
}

/** @fastify/static's answer to a path that is not canonical (`..`, `.`, `//`, a backslash): 403, without looking at the disk. */
function forbiddenPath(): Error {
  return Object.assign(new Error('Forbidden'), { statusCode: 403, code: 'FST_STATIC_FORBIDDEN_PATH' });
}

/**
 * The decoded path of a request (without the query), as @fastify/static decoded it: `#` and `?`
 * decoded too; null when it is not canonical (403), undefined when it cannot be decoded (404).
 */
function requestedPath(url: string): string | null | undefined {
  const q = url.indexOf('?');
  let path: string;
  try {
    const raw = q >= 0 ? url.slice(0, q) : url;
    path = decodeURI(raw.replace(/%(?:23|3f)/giu, decodeURIComponent));
  } catch {
    return undefined;
  }
  if (!path.startsWith('/')) path = '/' + path;
  return path.includes('\\') || posix.normalize(path) !== path ? null : path;
}

const isApiPath = (path: string) => path === '/api' || path.startsWith('/api/') || path === '/openapi' || path.startsWith('/openapi/');

export async function registerStatic(app: FastifyInstance, options: StaticOptions): Promise<void> {
  const root = resolve(options.publicDir);
  const indexPath = resolve(root, 'index.html');
  const pageFields = options.pageFields ?? {};
  const readPage = async () => pageTemplate(await readFile(indexPath, 'utf8').catch(() => FALLBACK_INDEX), pageFields);
  let files = await listFiles(root);
  let words = wordsChunks(files);
  let page = await readPage();

  let watcher: FSWatcher | undefined;
  if (options.watch) {
    let timer: NodeJS.Timeout | undefined;
    const reload = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        void Promise.all([listFiles(root), readPage()]).then(([f, p]) => {
          files = f;
          words = wordsChunks(f);
          page = p;
        });
      }, 100);
    };
    try {
      watcher = watch(root, { recursive: true }, reload);
      watcher.on('error', () => undefined);
    } catch {
      // no directory yet: restart the server after the first build
    }
    app.addHook('onClose', async () => watcher?.close());
  }

  async function sendIndex(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const sessionId = ensureSession(request, reply, options.secureCookies);
    const token = page(options.csrf.tokenFor(sessionId));
    const locale = options.localeOf?.(request);
    const html = locale ? inLocale(token, locale, words.get(locale)) : token;
    // the page embeds a per-session token: never cache it
    return reply.header('cache-control', 'no-store').type('text/html; charset=utf-8').send(html);
  }

  app.get('/', { schema: { hide: true } }, sendIndex);
  app.get('/index.html', { schema: { hide: true } }, sendIndex);

  // reply.sendFile only: the route below decides which paths are files
  await app.register(fastifyStatic, { root, index: false, serve: false, decorateReply: true });

  app.route({
    method: ['HEAD', 'GET'],
    url: '/*',
    schema: { hide: true },
    // a client that goes away while a file streams is not an error to answer
    errorHandler(error, request, reply) {
      if ((error as NodeJS.ErrnoException)?.code === 'ERR_STREAM_PREMATURE_CLOSE') {
        reply.request.raw.destroy();
        return;
      }
      return app.errorHandler(error, request, reply);
    },
    handler(request, reply) {
      const path = requestedPath(request.raw.url ?? '/');
      if (path === null) return reply.send(forbiddenPath());
      // API and docs paths are never files
      if (path === undefined || isApiPath(path) || !files.has(path)) return callNotFound(request, reply);
      return reply.sendFile(path);
    },
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
