/**
 * The request pipeline, in this order:
 *  1. per request: a `req-id`, the start time and method/URI/server name in the log context
 *     (done in the server factory, request-context.ts, so the async context covers the whole request);
 *  2. response format from `Accept`, request format from `Content-Type`;
 *  3. body decoded by its format into `body-params` (raw bytes for routes that ask for them;
 *     body-decoding.ts);
 *  4. defaults layer: cookies, query, form parameters, static files (registered in app.ts);
 *  5. `params` = path + query + form/body, logged redacted;
 *  6. coercion of path, query and body against the route's schemas, exposed as `parameters`,
 *     and the response body checked against the schema of its status;
 *  7. every response body encoded in the negotiated format, errors included;
 *  8. compression (@fastify/compress, app.ts);
 *  9. one `api-call/response` entry per response (response-log.ts).
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TSchema } from 'typebox';
import { currentContext, type LogContext } from '../logging/context.js';
import type { Logger } from '../logging/logger.js';
import type { Redactor } from '../logging/redact.js';
import type { ResponseObserver } from '../observability/http.js';
import { FORBIDDEN_KEYS } from '../shared/forbidden-keys.js';
import { coercionPlace, isErrorBody, markErrorBody, toErrorResponse, type ErrorResponse } from './error-answers.js';
import { type ErrorLanguage, localeOf, translatedAnswer, validationBody } from './error-language.js';
import { ajvErrors, HttpError, methodNotAllowed, requestCoercion, ResponseCoercionError, SchemaRefusal } from './errors.js';
import { phrase } from '../i18n/messages.js';
import { FORMATS, isFormBody, json, negotiateResponseFormat, type Format } from './formats.js';
import { installBodyDecoders, nulRefused } from './body-decoding.js';
import { contextOf, pathOf } from './request-context.js';
import { installResponseLog } from './response-log.js';
import { callNotFound, routeDataOf } from './route-data.js';
import { ANSWERED, type RequestStep } from './request-steps.js';
import { validatorsFor } from './validators.js';
import type { ApiKeyCaller, AuthUser, RouteConfig } from './routes.js';
import { isApiRoute } from './routes.js';
import { allowedMethods } from './route-index.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** format chosen for the response body from `Accept` */
    responseFormat: Format;
    /** the decoded body (`body-params`); undefined for raw-body routes */
    bodyParams: unknown;
    /** set by the JWT middleware when a valid access token came with the request */
    user: AuthUser | undefined;
    /** set by the JWT middleware when a valid API key came with the request, on a route that takes one */
    apiKey: ApiKeyCaller | undefined;
    /** why a presented token was refused, for the 401 message */
    authFailure: string | undefined;
    /** how a `reauth` route's caller re-authenticated: its password checked, or a recent sign-in (route data `reauth`) */
    reauthenticated: 'password' | 'recent-sign-in' | undefined;
    /** the request's log context (also reachable through async context) */
    logContext: LogContext;
  }
}

const DOCUMENT_HEADERS_FIRST = Symbol('saas.documentHeadersFirst');

/**
 * Whether the reply's first headers are the document security headers, in their order (the
 * pipeline's first hook set them; plugins set theirs when sending): headers set over them then
 * keep that order, as if they had been removed and set again, without removing them.
 */
export function documentHeadersFirst(reply: FastifyReply): boolean {
  return (reply as unknown as Record<symbol, boolean>)[DOCUMENT_HEADERS_FIRST] === true;
}

/**
 * The longest request target (path and query) answered, characters: longer ones are 414
 * `uri-too-long`. Browsers and proxies handle about 8 KiB; the whole header section (URL
 * included) is limited by Node's 16 KiB, beyond which the answer is 431 (clientErrorHandler).
 */
export const MAX_URL_LENGTH = 8192;

/** The logged `params` of a request without any: one frozen object for all of them. */
const NO_PARAMS = Object.freeze({});

function isEmpty(values: unknown): boolean {
  for (const _ in values as object) return false;
  return true;
}

/** The first query or path parameter holding U+0000, as `/name`. */
function nulParameter(values: unknown): string | undefined {
  for (const key in values as Record<string, unknown>) {
    const value = (values as Record<string, unknown>)[key];
    if (
      key.includes('\u0000') ||
      (typeof value === 'string' ? value.includes('\u0000') : Array.isArray(value) && value.some((v) => String(v).includes('\u0000')))
    ) {
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
  /**
   * The `WWW-Authenticate` of a 401 (RFC 6750 §3.1, RFC 9728): `missing` without a token,
   * `invalid` when the request presented one that failed (bad signature, expired, revoked,
   * another audience), which MCP and OAuth clients read to refresh or sign in again.
   */
  bearerChallenge?: { missing: string; invalid: string };
  /** error answers in the reader's language (docs/i18n.md); absent: English */
  language?: ErrorLanguage;
}

/**
 * Installs parsers, hooks and the error and not-found handlers on the root instance. Returns the
 * first of the request steps (context, negotiation, the URI's length, a wrong method), which the
 * app runs in its one `onRequest` hook before the other checks (request-steps.ts).
 */
export function installPipeline(app: FastifyInstance, deps: PipelineDeps): RequestStep {
  const { log, redact } = deps;
  const { responses: ajv, coercing, typed } = validatorsFor(deps.sharedSchemas);
  const validators = new WeakMap<object, Map<number, ValidateFunction | null>>();

  app.setValidatorCompiler(({ schema, httpPart }) => {
    if (httpPart !== 'body') return coercing.compile(schema);
    const forForm = coercing.compile(schema);
    const forTyped = typed.compile(schema);
    const validate = (data: unknown) => {
      const chosen = isFormBody(data) ? forForm : forTyped;
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
  app.decorateRequest('reauthenticated', undefined);
  app.decorateRequest('logContext', null as unknown as LogContext);

  installBodyDecoders(app);

  // --- 1-2: context and negotiation ------------------------------------------------------
  // every object body, errors included, leaves through the negotiated encoder; a string is a
  // body its sender already encoded (HTML, the OpenAPI JSON) and goes out as it is
  // --- 9: one entry per response (response-log.ts) --------------------------------------
  installResponseLog(app, log, deps.observeResponse);

  const serializers = new Map(FORMATS.map((f) => [f, (payload: unknown) => (typeof payload === 'string' ? payload : f.encode(payload))]));
  const documentHeaders = deps.responseHeaders ?? {};
  const apiHeaders = deps.apiResponseHeaders ?? documentHeaders;
  // Hooks on the hot path are callback-style: an async hook costs a promise per request,
  // and every promise is tracked for the async context.
  const contextAndNegotiation: RequestStep = (request, reply) => {
    request.logContext = contextOf(request.raw) ?? currentContext() ?? {};
    const format = negotiateResponseFormat(request.headers.accept);
    request.responseFormat = format;
    reply.serializer(serializers.get(format)!);
    const api = isApiRoute(request);
    reply.headers(api ? apiHeaders : documentHeaders);
    if (!api) (reply as unknown as Record<symbol, boolean>)[DOCUMENT_HEADERS_FIRST] = true;
    if (request.url.length > MAX_URL_LENGTH) {
      if (!api) reply.headers(apiHeaders);
      return new HttpError(414, { type: 'uri-too-long', message: phrase('The request URI is longer than {max} characters', { max: MAX_URL_LENGTH }) });
    }
    if (!api && (request.is404 || routeDataOf(request).url === STATIC_FILES_ROUTE)) {
      const path = decodedPath(request.url);
      if (path !== undefined && isApiPath(path)) {
        reply.headers(apiHeaders);
        const allow = allowedMethods(app, path);
        if (allow.length > 0 && !allow.includes(request.method)) return methodNotAllowed(request.method, allow);
      }
      // the static files' catch-all matched an API or docs path (a `%00`, a segment over the
      // router's limit): no file is looked up, the one 404 answers (its hooks run from here)
      if (!request.is404 && path !== undefined && (isApiPath(path) || isDocsPath(path))) {
        callNotFound(request, reply);
        return ANSWERED;
      }
    }
    return undefined;
  };

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
    const body = !raw && request.body !== null && typeof request.body === 'object' && !Buffer.isBuffer(request.body) ? request.body : undefined;
    // most requests have no parameters at all (health, /me, a list's first page): nothing to merge or redact
    request.logContext.params =
      isEmpty(request.params) && isEmpty(request.query) && isEmpty(body)
        ? NO_PARAMS
        : redact({ ...(request.params as object), ...(request.query as object), ...(body as object) });
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
    if (!isErrorBody(reply)) {
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
    const { status, body, headers } = inReadersLanguage(request, err, toErrorResponse(err), deps.language);
    if (err instanceof ResponseCoercionError) {
      log.error('http/response-coercion', `Response for ${request.method} ${pathOf(request.url)} broke its schema`, {
        status: err.status,
        errors: err.errors,
        body: err.responseBody,
      });
    } else if (status >= 500 && err instanceof HttpError) {
      // an answer the code chose (a setting missing, a provider down): a warning, no stack
      log.warn('http/unavailable', `${request.method} ${pathOf(request.url)} answered ${status} ${body.type}: ${body.message}`, { status, type: body.type });
    } else if (status >= 500) {
      const e = err as Error;
      log.error('http/exception', `${request.method} ${pathOf(request.url)} failed: ${e?.message ?? String(err)}`, {
        class: body.class ?? body.type,
        message: e?.message,
        stack: e?.stack,
      });
    } else if (log.enabled('debug')) {
      log.debug('http/client-error', body.message, { status, type: body.type });
    }
    markErrorBody(reply);
    reply
      .code(status)
      .headers(
        status === 401 && deps.bearerChallenge && headers['www-authenticate'] === 'Bearer'
          ? {
              ...headers,
              // another scheme than Bearer (Basic…) is no token at all (RFC 6750 §3.1): no error attribute
              'www-authenticate':
                request.authFailure !== undefined && /^bearer /i.test(request.headers.authorization ?? '')
                  ? deps.bearerChallenge.invalid
                  : deps.bearerChallenge.missing,
            }
          : headers,
      )
      .send(body);
  });

  return contextAndNegotiation;
}

/** The answer's words in the request's locale: a refused input's reasons made again from Ajv's errors, anything else translated. */
function inReadersLanguage(request: FastifyRequest, err: unknown, answer: ErrorResponse, language: ErrorLanguage | undefined): ErrorResponse {
  if (!language) return answer;
  const locale = localeOf(request, language.defaultLocale);
  if (locale === 'en') return answer;
  const fe = err as { validation?: ErrorObject[]; validationContext?: string };
  if (err instanceof SchemaRefusal) {
    const body = validationBody(err.validation, err.where, locale, language.translator);
    return { ...answer, body: { ...body, message: language.translator.text(locale, err.words(err.body.message)) } };
  }
  if (Array.isArray(fe.validation)) return { ...answer, body: validationBody(fe.validation, coercionPlace(fe.validationContext), locale, language.translator) };
  return translatedAnswer(answer, locale, language.translator);
}
