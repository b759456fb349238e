/**
 * The request pipeline, in the spec's order:
 *  1. per request: a `req-id`, the start time and method/URI/server name in the log context
 *     (done in the server factory, so the async context covers the whole request);
 *  2. response format from `Accept`, request format from `Content-Type`;
 *  3. body decoded by its format into `body-params` (raw bytes for routes that ask for them);
 *  4. defaults layer: cookies, query, form parameters, static files (registered in app.ts);
 *  5. `params` = path + query + form/body, logged redacted;
 *  6. coercion of path, query and body against the route's schemas, exposed as `parameters`,
 *     and the response body checked against the schema of its status;
 *  7. every response body encoded in the negotiated format, errors included;
 *  8. compression (@fastify/compress, app.ts);
 *  9. one `api-call/response` entry per response.
 */
import { randomUUID } from 'node:crypto';
import { parse as parseQueryString } from 'node:querystring';
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TSchema } from 'typebox';
import { isDatabaseUnavailable } from '../db/database.js';
import { currentContext, runWithContext, type LogContext } from '../logging/context.js';
import type { Logger } from '../logging/logger.js';
import { redactApiKeys } from '../logging/redact-links.js';
import type { Redactor } from '../logging/redact.js';
import { routeOf, UNMATCHED_ROUTE, type RequestWrapper, type ResponseObserver } from '../observability/http.js';
import {
  ajvErrors, HttpError, malformedBody, methodNotAllowed, requestCoercion, ResponseCoercionError, typeForStatus, unsupportedMediaType,
  type ErrorBody,
} from './errors.js';
import { forbiddenKey, MAY_HOLD_NUL, nulPath } from '../shared/codecs.js';
import { FORBIDDEN_KEYS } from '../shared/forbidden-keys.js';
import { DecodeError, FORMATS, json, negotiateResponseFormat, type Format } from './formats.js';
import type { ApiKeyCaller, AuthUser, RouteConfig } from './routes.js';
import { allowedMethods, isApiRoute } from './routes.js';
import { routeDataOf } from './route-data.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** format chosen for the response body from `Accept` */
    responseFormat: Format;
    /** the decoded body (the spec's `body-params`); undefined for raw-body routes */
    bodyParams: unknown;
    /** set by the JWT middleware when a valid access token came with the request */
    user: AuthUser | undefined;
    /** set by the JWT middleware when a valid API key came with the request, on a route that takes one */
    apiKey: ApiKeyCaller | undefined;
    /** why a presented token was refused, for the 401 message */
    authFailure: string | undefined;
    /** the request's log context (also reachable through async context) */
    logContext: LogContext;
  }
}

const CONTEXT = Symbol('saas.logContext');
const STARTED = Symbol('saas.startedAt');
const LOGGED = Symbol('saas.responseLogged');
const ERROR_BODY = Symbol('saas.errorBody');

type TrackedMessage = IncomingMessage & { [CONTEXT]?: LogContext; [STARTED]?: bigint };

function serverName(req: IncomingMessage): string {
  const host = req.headers.host ?? '';
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  const colon = host.indexOf(':');
  return (colon >= 0 ? host.slice(0, colon) : host) || 'localhost';
}

/** the method as the log context has it, without lower-casing a new string per request */
const LOWER_METHODS = new Map(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].map((m) => [m, m.toLowerCase()]));

/**
 * A server factory that gives every request its log context before Fastify sees it, and
 * runs the request inside that context, so all code for the request (ours, libraries',
 * timers, database callbacks) logs with it.
 */
export interface ServerTimeouts {
  /** the whole request, headers and body, ms */
  requestTimeoutMs: number;
  /** the request headers, ms */
  headersTimeoutMs: number;
  /** an idle keep-alive connection, ms */
  keepAliveTimeoutMs: number;
  /** a socket with no activity at all, ms */
  idleTimeoutMs: number;
}

/**
 * The server factory. Fastify applies its timeouts only to servers it creates itself, so they
 * are applied here: a client that sends its headers or body slowly, or never finishes, is
 * dropped when its time is up, checked every second.
 */
export function contextServerFactory(timeouts: ServerTimeouts, around?: RequestWrapper) {
  return (handler: (req: IncomingMessage, res: ServerResponse) => void): Server => {
    const server = createServer({
      requestTimeout: timeouts.requestTimeoutMs,
      headersTimeout: Math.min(timeouts.headersTimeoutMs, timeouts.requestTimeoutMs),
      keepAliveTimeout: timeouts.keepAliveTimeoutMs,
      connectionsCheckingInterval: 1000,
    }, contextHandler(handler, around));
    server.setTimeout(timeouts.idleTimeoutMs);
    return server;
  };
}

/** `around`: the request span when tracing is on (src/observability/tracing.ts); off, one check. */
function contextHandler(handler: (req: IncomingMessage, res: ServerResponse) => void, around: RequestWrapper | undefined) {
  return (req: TrackedMessage, res: ServerResponse) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const ctx: LogContext = {
      'req-id': randomUUID(),
      'request-method': LOWER_METHODS.get(req.method ?? 'GET') ?? (req.method ?? 'GET').toLowerCase(),
      // an API key pasted into a path must not reach the log with it
      uri: redactApiKeys(q >= 0 ? url.slice(0, q) : url),
      'server-name': serverName(req),
    };
    req[CONTEXT] = ctx;
    req[STARTED] = process.hrtime.bigint();
    if (around) runWithContext(ctx, () => around(req, res, ctx, () => handler(req, res)));
    else runWithContext(ctx, () => handler(req, res));
  };
}

export function requestIdOf(req: IncomingMessage): string {
  return (req as TrackedMessage)[CONTEXT]?.['req-id'] ?? randomUUID();
}

function elapsedMs(req: IncomingMessage): number {
  const started = (req as TrackedMessage)[STARTED];
  return started === undefined ? 0 : Number(process.hrtime.bigint() - started) / 1e6;
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q >= 0 ? url.slice(0, q) : url;
}

const FORM_MIME = 'application/x-www-form-urlencoded';
/** SCIM's media type (RFC 7644 §3.1): JSON, decoded as JSON (the directory sync routes, src/scim/) */
const SCIM_MIME = 'application/scim+json';

/**
 * The longest request target (path and query) answered, characters: longer ones are 414
 * `uri-too-long`. Browsers and proxies handle about 8 KiB; the whole header section (URL
 * included) is limited by Node's 16 KiB, beyond which the answer is 431 (clientErrorHandler).
 */
export const MAX_URL_LENGTH = 8192;

/**
 * Decoded form bodies: the only bodies whose values are coerced to their schema's types (a form
 * field is text whatever it means); JSON, EDN and Transit bodies are taken as typed.
 */
const formBodies = new WeakSet<object>();

/** Form keys are flat (`user[password]` is one key); the prototype keys are refused like in every format. */
function decodeForm(text: string): Record<string, string | string[]> {
  const fields = parseQueryString(text, '&', '=', { maxKeys: 0 });
  for (const key in fields) if (FORBIDDEN_KEYS.has(key)) throw forbiddenKey(key);
  formBodies.add(fields);
  return fields as Record<string, string | string[]>;
}

/** A form's NUL arrives percent-encoded (`%00`) or raw. */
const FORM_MAY_HOLD_NUL = /%00|\u0000/;

const nulRefused = (where: 'body' | 'query' | 'path', path: string) =>
  requestCoercion(where, [{ path, message: 'must not contain the NUL character (U+0000)' }]);

/** The first query or path parameter holding U+0000, as `/name`. */
function nulParameter(values: unknown): string | undefined {
  for (const key in values as Record<string, unknown>) {
    const value = (values as Record<string, unknown>)[key];
    if (key.includes('\u0000') || (typeof value === 'string' ? value.includes('\u0000') : Array.isArray(value) && value.some((v) => String(v).includes('\u0000')))) {
      return `/${key.replace(/\u0000/g, '\\u0000')}`;
    }
  }
  return undefined;
}

/**
 * The path of a request target as the router matches it: percent-decoded, the absolute form's
 * scheme and host dropped; undefined when it does not decode.
 */
function decodedPath(url: string): string | undefined {
  const path = pathOf(url.startsWith('/') ? url : url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, ''));
  try {
    return decodeURIComponent(path);
  } catch {
    return undefined;
  }
}

/** the route of @fastify/static's catch-all (http/static.ts) */
const STATIC_FILES_ROUTE = '/*';

const isApiPath = (path: string) => path === '/api' || path.startsWith('/api/');
const isDocsPath = (path: string) => path === '/openapi' || path.startsWith('/openapi/');

/** Whether a request target is an API or docs path once decoded (`/%61pi/…` is `/api/…`): never a client route or a file. */
export function isApiOrDocsTarget(url: string): boolean {
  const path = decodedPath(url);
  return path === undefined || isApiPath(path) || isDocsPath(path);
}

const COERCION_PLACE: Record<string, 'body' | 'query' | 'path' | 'headers'> = { body: 'body', querystring: 'query', params: 'path', headers: 'headers' };
const SUPPORTED_REQUEST_TYPES = [...FORMATS.map((f) => f.mime), FORM_MIME];

export interface PipelineDeps {
  log: Logger;
  redact: Redactor;
  /** shared schemas (with `$id`) that response schemas may reference */
  sharedSchemas: TSchema[];
  /** headers set on every response outside `/api` (security headers); routes may override them */
  responseHeaders?: Record<string, string>;
  /** headers set on every response under `/api` */
  apiResponseHeaders?: Record<string, string>;
  /** metrics and the request span's name (src/observability/); absent when both are off */
  observeResponse?: ResponseObserver;
}

export interface ErrorResponse {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
}

const CLIENT_ERROR_MESSAGES: Record<number, string> = {
  400: 'Bad request', 404: 'Not found', 405: 'Method not allowed', 408: 'Request timeout', 413: 'The request body is larger than allowed',
  414: 'The request URI is too long', 415: 'Unsupported media type', 431: 'The request headers are too large',
};

/** Maps anything thrown during a request to the one error body shape. */
export function toErrorResponse(err: unknown): ErrorResponse {
  if (err instanceof HttpError) return { status: err.status, body: err.body, headers: err.headers };
  if (err instanceof DecodeError) return { status: 400, body: { type: 'malformed-body', message: err.message }, headers: {} };
  if (err instanceof ResponseCoercionError) {
    return { status: 500, body: { type: 'response-coercion', message: 'The response did not match its schema' }, headers: {} };
  }
  const fe = err as Partial<FastifyError> & { validation?: ErrorObject[]; validationContext?: string };
  if (fe && Array.isArray(fe.validation)) {
    const { status, body, headers } = requestCoercion(COERCION_PLACE[fe.validationContext ?? 'body'] ?? 'body', ajvErrors(fe.validation));
    return { status, body, headers };
  }
  switch (fe?.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, body: unsupportedMediaType('', SUPPORTED_REQUEST_TYPES).body, headers: {} };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, body: { type: 'payload-too-large', message: 'The request body is larger than allowed' }, headers: {} };
    // Fastify's own messages are replaced: ours never quote the request
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, body: malformedBody('The body is empty').body, headers: {} };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { status: 400, body: malformedBody('The body does not match its Content-Length').body, headers: {} };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { status: 400, body: malformedBody('Malformed JSON').body, headers: {} };
  }
  if (isDatabaseUnavailable(err)) {
    return { status: 503, body: { type: 'service-unavailable', message: 'The database is not available; try again shortly' }, headers: { 'retry-after': '1' } };
  }
  const status = typeof fe?.statusCode === 'number' ? fe.statusCode : 500;
  if (status >= 400 && status < 500) {
    // a framework or library message may quote the request: the status says enough
    return { status, body: { type: typeForStatus(status), message: CLIENT_ERROR_MESSAGES[status] ?? 'Bad request' }, headers: {} };
  }
  const className = err instanceof Error ? err.constructor?.name || err.name : typeof err;
  return { status: 500, body: { type: 'exception', message: 'Internal server error', class: className }, headers: {} };
}

interface Validators {
  /** responses, checked against their schemas as they are */
  responses: Ajv;
  /** query strings, paths and forms: text, coerced to the schema's types */
  coercing: Ajv;
  /** JSON, EDN and Transit bodies: taken as typed */
  typed: Ajv;
}

/**
 * The Ajv instances, by the shared schemas they hold. An app built again in the same process
 * with the same schemas (tests build a hundred) takes the same instances, and with them Ajv's
 * cache of what it compiled: compiling every route's schemas again cost a fifth of a test
 * file's CPU. A few sets at most are kept.
 */
const validatorSets: Array<{ schemas: TSchema[]; validators: Validators }> = [];

function validatorsFor(schemas: TSchema[]): Validators {
  const same = validatorSets.find((set) => set.schemas.length === schemas.length && set.schemas.every((schema, i) => schema === schemas[i]));
  if (same) return same.validators;
  // A query string, a path and a form hold only text, so their values are coerced to the
  // schema's types (`?limit=5` is the number 5). JSON, EDN and Transit bodies carry their own
  // types and are taken as they are: `{"slug": false}` is a boolean, refused where a string
  // is expected, never stored as "false".
  const make = (options: { coerceTypes?: 'array' | false; useDefaults?: boolean }) => {
    const instance = new Ajv({ allErrors: true, strict: false, removeAdditional: false, ...options });
    addFormats.default(instance);
    for (const schema of schemas) instance.addSchema(schema);
    return instance;
  };
  const validators = {
    responses: make({}),
    coercing: make({ coerceTypes: 'array', useDefaults: true }),
    typed: make({ coerceTypes: false, useDefaults: true }),
  };
  if (validatorSets.length >= 4) validatorSets.shift();
  validatorSets.push({ schemas: [...schemas], validators });
  return validators;
}

/** Installs parsers, hooks and the error and not-found handlers on the root instance. */
export function installPipeline(app: FastifyInstance, deps: PipelineDeps): void {
  const { log, redact } = deps;
  const { responses: ajv, coercing, typed } = validatorsFor(deps.sharedSchemas);
  const validators = new WeakMap<object, Map<number, ValidateFunction | null>>();

  app.setValidatorCompiler(({ schema, httpPart }) => {
    if (httpPart !== 'body') return coercing.compile(schema);
    const forForm = coercing.compile(schema);
    const forTyped = typed.compile(schema);
    const validate = (data: unknown) => {
      const chosen = data !== null && typeof data === 'object' && formBodies.has(data) ? forForm : forTyped;
      const valid = chosen(data);
      validate.errors = chosen.errors;
      return valid;
    };
    validate.errors = null as ValidateFunction['errors'];
    return validate;
  });

  app.decorateRequest('responseFormat', null as unknown as Format);
  app.decorateRequest('bodyParams', undefined);
  app.decorateRequest('user', undefined);
  app.decorateRequest('apiKey', undefined);
  app.decorateRequest('authFailure', undefined);
  app.decorateRequest('logContext', null as unknown as LogContext);

  // fatal: invalid UTF-8 is a malformed body, not text with replacement characters
  const utf8 = new TextDecoder('utf-8', { fatal: true });

  // --- body decoding: our three formats and forms ---------------------------------------
  // A request for no route is answered 404 without decoding its body: its bytes are read
  // (within the body limit) and dropped, so nothing of it reaches a decoder, the redactor or
  // their caches (issue 14, item 1).
  app.removeAllContentTypeParsers();
  const decoders: [string, (text: string) => unknown][] = [
    ...FORMATS.map((f) => [f.mime, f.decode] as [string, (text: string) => unknown]), [FORM_MIME, decodeForm], [SCIM_MIME, json.decode],
  ];
  for (const [mime, decode] of decoders) {
    app.addContentTypeParser(mime, { parseAs: 'buffer' }, (request, body, done) => {
      if (request.is404) return done(null, undefined);
      if ((routeDataOf(request) as Partial<RouteConfig>).rawBody) return done(null, body);
      let value: unknown;
      try {
        const text = utf8.decode(body as Buffer);
        value = decode(text);
        // PostgreSQL stores no U+0000: refused here, in every format, rather than a 500 later
        const at = (mime === FORM_MIME ? FORM_MAY_HOLD_NUL : MAY_HOLD_NUL).test(text) ? nulPath(value) : undefined;
        if (at !== undefined) return done(nulRefused('body', at), undefined);
      } catch (err) {
        return done(err instanceof TypeError ? new DecodeError('Body is not valid UTF-8') : (err as Error), undefined);
      }
      done(null, value);
    });
  }

  // --- 1-2: context and negotiation ------------------------------------------------------
  // every object body, errors included, leaves through the negotiated encoder; a string is a
  // body its sender already encoded (HTML, the OpenAPI JSON) and goes out as it is
  const serializers = new Map(FORMATS.map((f) => [f, (payload: unknown) => (typeof payload === 'string' ? payload : f.encode(payload))]));
  const documentHeaders = deps.responseHeaders ?? {};
  const apiHeaders = deps.apiResponseHeaders ?? documentHeaders;
  // Hooks on the hot path are callback-style: an async hook costs a promise per request,
  // and every promise is tracked for the async context.
  app.addHook('onRequest', (request, reply, done) => {
    request.logContext = (request.raw as TrackedMessage)[CONTEXT] ?? currentContext() ?? {};
    const format = negotiateResponseFormat(request.headers.accept);
    request.responseFormat = format;
    reply.serializer(serializers.get(format)!);
    const api = isApiRoute(request);
    reply.headers(api ? apiHeaders : documentHeaders);
    if (request.url.length > MAX_URL_LENGTH) {
      if (!api) reply.headers(apiHeaders);
      return done(new HttpError(414, { type: 'uri-too-long', message: `The request URI is longer than ${MAX_URL_LENGTH} characters` }));
    }
    if (!api && (request.is404 || routeDataOf(request).url === STATIC_FILES_ROUTE)) {
      const path = decodedPath(request.url);
      if (path !== undefined && isApiPath(path)) {
        reply.headers(apiHeaders);
        const allow = allowedMethods(app, path);
        if (allow.length > 0 && !allow.includes(request.method)) return done(methodNotAllowed(request.method, allow));
      }
      // the static files' catch-all matched an API or docs path (a `%00`, a segment over the
      // router's limit): no file is looked up, the one 404 answers (its hooks run from here)
      if (!request.is404 && path !== undefined && (isApiPath(path) || isDocsPath(path))) {
        reply.callNotFound();
        return;
      }
    }
    done();
  });

  // --- 5: params merged and logged, redacted ---------------------------------------------
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.is404) return done();
    for (const key in request.query as object) {
      if (FORBIDDEN_KEYS.has(key)) return done(requestCoercion('query', [{ path: `/${key}`, message: 'is not allowed' }]));
    }
    const nulInQuery = nulParameter(request.query);
    if (nulInQuery) return done(nulRefused('query', nulInQuery));
    const nulInPath = nulParameter(request.params);
    if (nulInPath) return done(nulRefused('path', nulInPath));
    const config = routeDataOf(request) as Partial<RouteConfig>;
    const raw = config.rawBody === true;
    // no body at all is an empty map: the schema then names each missing field
    if (request.body === undefined && !raw && config.body) request.body = {};
    request.bodyParams = raw ? undefined : request.body;
    const body = !raw && request.body !== null && typeof request.body === 'object' && !Buffer.isBuffer(request.body) ? request.body : {};
    const params = { ...(request.params as object), ...(request.query as object), ...(body as object) };
    request.logContext.params = redact(params);
    if (log.enabled('debug')) {
      log.debug('api-call/request', `${request.method} ${pathOf(request.url)}`, {
        // both redacted: the cookie header whole, the cookies' values (their names stay)
        headers: request.headers,
        cookies: request.cookies,
      });
    }
    done();
  });

  // --- 6-7: response checked against its schema, then encoded ----------------------------
  app.addHook('preSerialization', (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, value?: unknown) => void) => {
    const format = request.responseFormat ?? json;
    if (!(reply as unknown as Record<symbol, boolean>)[ERROR_BODY]) {
      const config = routeDataOf(request) as Partial<RouteConfig>;
      const schema = config.responses?.[reply.statusCode];
      if (schema !== undefined && config.responses) {
        let perRoute = validators.get(config.responses);
        if (!perRoute) validators.set(config.responses, (perRoute = new Map()));
        let validate = perRoute.get(reply.statusCode);
        if (validate === undefined) {
          validate = schema === null ? null : ajv.compile(schema);
          perRoute.set(reply.statusCode, validate);
        }
        if (validate && !validate(payload)) return done(new ResponseCoercionError(reply.statusCode, ajvErrors(validate.errors), payload));
      }
    }
    reply.type(format.mime);
    done(null, payload);
  });

  // Serialisation is the negotiated encoder's (onRequest); Fastify's compiled serializers
  // would only be dead weight, and they drop fields instead of reporting them.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));

  // --- errors, in the negotiated format --------------------------------------------------
  // synchronous: an async handler costs a promise per error answer (most are expected 4xx)
  app.setErrorHandler((err, request, reply) => {
    const { status, body, headers } = toErrorResponse(err);
    if (err instanceof ResponseCoercionError) {
      log.error('http/response-coercion', `Response for ${request.method} ${pathOf(request.url)} broke its schema`, {
        status: err.status, errors: err.errors, body: err.responseBody,
      });
    } else if (status >= 500 && err instanceof HttpError) {
      // an answer the code chose (a setting missing, a provider down): a warning, no stack
      log.warn('http/unavailable', `${request.method} ${pathOf(request.url)} answered ${status} ${body.type}: ${body.message}`, { status, type: body.type });
    } else if (status >= 500) {
      const e = err as Error;
      log.error('http/exception', `${request.method} ${pathOf(request.url)} failed: ${e?.message ?? String(err)}`, {
        class: body.class ?? body.type, message: e?.message, stack: e?.stack,
      });
    } else if (log.enabled('debug')) {
      log.debug('http/client-error', body.message, { status, type: body.type });
    }
    (reply as unknown as Record<symbol, boolean>)[ERROR_BODY] = true;
    reply.code(status).headers(headers).send(body);
  });

  // --- 9: one entry per response, also for errors, 404s and aborted requests -------------
  const logResponse = (request: FastifyRequest, status: number, contentType: unknown) => {
    const tracked = request.raw as TrackedMessage & { [LOGGED]?: boolean };
    if (tracked[LOGGED]) return;
    tracked[LOGGED] = true;
    const elapsed = elapsedMs(request.raw);
    const ms = Math.round(elapsed * 1000) / 1000;
    log.info('api-call/response', `${request.method} ${pathOf(request.url)} => ${status}`,
      contentType ? { status, 'saas.logging/ms': ms, 'content-type': String(contentType) } : { status, 'saas.logging/ms': ms },
      { ctx: request.logContext ?? tracked[CONTEXT] });
    deps.observeResponse?.(request.raw, request.method, routeOf(request), status, elapsed / 1000);
  };
  app.addHook('onResponse', (request, reply, done) => {
    logResponse(request, reply.statusCode, reply.getHeader('content-type'));
    done();
  });
  // 499: nginx's "client closed request"; the client went away before the answer
  app.addHook('onRequestAbort', (request, done) => {
    logResponse(request, 499, undefined);
    done();
  });
}

/**
 * Errors the router raises before any route or hook runs (a malformed URL, a path parameter
 * over the length limit): answered in the one error shape, in the negotiated format, with the
 * API headers, and logged like any response.
 */
export function frameworkErrorHandler(log: Logger, headers: Record<string, string>, observeResponse?: ResponseObserver) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const status = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : error.statusCode && error.statusCode < 500 ? error.statusCode : 400;
    const format = negotiateResponseFormat(request.headers.accept);
    const body = { type: typeForStatus(status), message: status === 414 ? 'A path segment is too long' : 'Malformed request URL' };
    const ctx = (request.raw as TrackedMessage)[CONTEXT] ?? {};
    reply.raw.once('finish', () => {
      const elapsed = elapsedMs(request.raw);
      log.info('api-call/response', `${request.method} ${pathOf(request.url)} => ${status}`,
        { status, 'saas.logging/ms': Math.round(elapsed * 1000) / 1000, 'content-type': format.mime }, { ctx });
      observeResponse?.(request.raw, request.method, UNMATCHED_ROUTE, status, elapsed / 1000);
    });
    reply.code(status).headers(headers).type(format.mime).serializer(() => format.encode(body)).send(body);
  };
}

/**
 * Requests Node's parser refuses before Fastify sees them (headers over the 16 KiB limit, a
 * request line alone over it, a malformed request, a client too slow to send its headers):
 * answered in the one error shape (JSON: no `Accept` was read) with the API headers, and
 * logged like any response, the path without its query and cut to 200 characters.
 */
export function clientErrorHandler(log: Logger, headers: Record<string, string>) {
  return (error: Error, socket: Socket): void => {
    const err = error as NodeJS.ErrnoException & { rawPacket?: unknown };
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const packet = Buffer.isBuffer(err.rawPacket) ? err.rawPacket : undefined;
    const raw = packet ? packet.toString('latin1', 0, Math.min(packet.length, 16 * 1024 + 1)) : '';
    let status = 400;
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') status = 408;
    else if (err.code === 'HPE_HEADER_OVERFLOW') status = raw.includes('\r\n') || raw === '' ? 431 : 414; // no line ended: the request line itself
    const body = JSON.stringify({ type: typeForStatus(status), message: CLIENT_ERROR_MESSAGES[status] ?? 'Bad request' });
    const line = /^([A-Z]{1,20}) (\S{1,200})/.exec(raw);
    const method = line?.[1] ?? '-';
    const path = line ? redactApiKeys(pathOf(line[2])) : '-';
    log.info('api-call/response', `${method} ${path} => ${status}`, { status, 'content-type': 'application/json', reason: err.code ?? 'client-error' },
      { ctx: { 'req-id': randomUUID(), 'request-method': method.toLowerCase(), uri: path } });
    if (socket.writable) {
      const head = Object.entries({ ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), connection: 'close' })
        .map(([name, value]) => `${name}: ${value}`).join('\r\n');
      socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${head}\r\n\r\n${body}`);
    }
    socket.destroy();
  };
}

/** Sends an error body in the negotiated format (for handlers outside the route table). */
export function sendError(reply: FastifyReply, error: HttpError): FastifyReply {
  (reply as unknown as Record<symbol, boolean>)[ERROR_BODY] = true;
  return reply.code(error.status).headers(error.headers).send(error.body);
}

