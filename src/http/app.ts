/**
 * The Fastify application, assembled in layers: the defaults layer (cookies, forms,
 * compression, security headers, docs), the pipeline, cross-cutting request checks (JWT,
 * CSRF), the feature modules' route groups, then static files and the docs UI. The app
 * does not listen; `system.ts` does.
 */
import fastifyCompress from '@fastify/compress';
import fastifyCookie from '@fastify/cookie';
import type { IncomingMessage, ServerResponse } from 'node:http';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { TSchema } from 'typebox';
import type { Config } from '../config.js';
import { csrfStep, type CsrfService } from './csrf.js';
import { fastifyLogger } from '../logging/third-party.js';
import type { LogBackend } from '../logging/logger.js';
import type { Redactor } from '../logging/redact.js';
import type { RequestWrapper, ResponseObserver } from '../observability/http.js';
import { ErrorBody, expectedError, type Words } from './errors.js';
import { requestLocale } from '../i18n/negotiate.js';
import type { Locale } from '../shared/locales.js';
import { registerOpenApi, registerOpenApiRoutes } from './openapi.js';
import { apiSecurityHeaders, computeSecurityHeaders, type PageOrigins, securityHeaderOptions } from './security-headers.js';
import { clientErrorHandler, frameworkErrorHandler, markErrorBody } from './error-answers.js';
import { localeOf, localeSources } from './error-language.js';
import { phrase, Translator } from '../i18n/messages.js';
import { HTTP_MESSAGES } from './messages/index.js';
import { documentHeadersFirst, isApiOrDocsTarget, installPipeline } from './pipeline.js';
import { contextServerFactory, pathOf, requestIdOf, startClockIfUntracked } from './request-context.js';
import {
  isApiRoute,
  MAX_PARAM_LENGTH,
  registerRouteGroup,
  type AccountGuard,
  type ApiKeyCaller,
  type AuthUser,
  type RouteGroup,
  type UsageGate,
} from './routes.js';
import { isPlatformAdminRoute, routeGatesStep } from './route-gates.js';
import { requestSteps, type RequestStep, type StepResult } from './request-steps.js';
import { registerStatic } from './static.js';

/**
 * The user for a valid access token, the key for a valid API key, a reason for a presented but
 * invalid token, nothing without one; `refuse` answers the request at once (an API key where
 * none is taken, or an invalid one: a key is never optional).
 */
export interface AuthResult {
  user?: AuthUser;
  apiKey?: ApiKeyCaller;
  failure?: string;
  refuse?: Error;
}

export interface Authenticator {
  /**
   * Decodes the request's access token. Returns the user for a valid token, a reason for a
   * presented but invalid one, and nothing when no token came; directly when it needs no
   * cryptography (a token verified before), so the common request makes no promise.
   */
  authenticate(request: FastifyRequest): AuthResult | Promise<AuthResult>;
  /** cookies that carry credentials and so need the CSRF token on unsafe requests */
  credentialCookies: readonly string[];
}

export interface AppDeps {
  config: Config;
  logs: LogBackend;
  redact: Redactor;
  csrf: CsrfService;
  authenticator?: Authenticator;
  /** the caller's account checks of `verifiedEmail` and `reauth` routes (src/account/guard.ts) */
  accountGuard?: AccountGuard;
  /** decides `limit` routes and counts API key requests (src/http/usage-gate.ts) */
  usageGate?: UsageGate;
  /** named schemas: referenced by routes, listed under components.schemas */
  schemas: TSchema[];
  routeGroups: RouteGroup[];
  /** metrics and tracing (src/observability/); absent when both are off */
  observability?: AppObservability;
  /** hidden fields of the served page, by element id (see http/static.ts) */
  pageFields?: Record<string, string>;
  /** foreign applications mounted at their paths (the OAuth provider) */
  mounts?: Mount[];
  /** other origins the client's page loads images from and sends requests to (a bucket's), for its CSP */
  pageOrigins?: PageOrigins;
  /** the OAuth API scopes and their words, for the OpenAPI document's security scheme */
  oauthScopes?: Readonly<Record<string, string>>;
  /** every locale's messages (the features' catalogs): error answers in the reader's language */
  translator?: Translator;
}

/**
 * A foreign HTTP application (a Node request listener: the OAuth provider) answering every
 * method at `urls` (a trailing `/*` takes the subtree). The request is handed over before its
 * body is read or any API check runs (it is no `/api` route): it answers in its own protocol.
 */
export interface Mount {
  urls: string[];
  /**
   * `clientAddress`: the request's client address (TRUST_PROXY applied), for its rate limits;
   * `app`: the application, for a mount that runs its routes in-process (the MCP server's tools);
   * `say`: a text of its answers in the request's language (docs/i18n.md), `account` the locale
   * of the account a token it verified names
   */
  handle(request: IncomingMessage, response: ServerResponse, clientAddress: string, app: FastifyInstance, say: Say): void;
}

/** A message in a mounted application's request's language; `locale`: that language (a page's `lang`). */
export interface Say {
  (words: Words, account?: string | null): string;
  locale(account?: string | null): Locale;
}

export interface AppObservability {
  /** each finished request (metrics; the request span's name) */
  observeResponse?: ResponseObserver;
  /** the request span around each request (tracing on) */
  aroundRequest?: RequestWrapper;
}

/**
 * Fastify's trust setting for TRUST_PROXY. A hop count becomes a function: Fastify takes a bare
 * number as "trust nothing"; proxy-addr's rule is that hop `i` (0 = the socket) is trusted when
 * `i < hops`, so the address is the entry `hops` from the right of X-Forwarded-For.
 */
function trustProxyOf(setting: Config['trustProxy']): false | string[] | ((address: string, hop: number) => boolean) {
  if (typeof setting !== 'number') return setting;
  return (_address, hop) => hop < setting;
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, logs } = deps;
  const apiHeaders = apiSecurityHeaders(config.secureCookies);
  const app = Fastify({
    frameworkErrors: frameworkErrorHandler(logs.logger('saas.http'), apiHeaders, deps.observability?.observeResponse),
    clientErrorHandler: clientErrorHandler(logs.logger('saas.http'), apiHeaders),
    loggerInstance: fastifyLogger(logs),
    // one api-call/response entry per request comes from the pipeline instead
    logController: new LogController({ disableRequestLogging: true }),
    serverFactory: contextServerFactory(
      {
        requestTimeoutMs: config.requestTimeoutMs,
        headersTimeoutMs: config.headersTimeoutMs,
        keepAliveTimeoutMs: config.keepAliveTimeoutMs,
        idleTimeoutMs: config.idleTimeoutMs,
      },
      deps.observability?.aroundRequest,
    ),
    genReqId: requestIdOf,
    bodyLimit: config.bodyLimit,
    trustProxy: trustProxyOf(config.trustProxy),
    // the drain (http/drain.ts) answers requests arriving while the server stops, and closes
    // connections itself: Fastify would answer them 503, and destroy connections not yet read
    return503OnClosing: false,
    forceCloseConnections: false,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    ajv: { customOptions: { allErrors: true, coerceTypes: 'array', removeAdditional: false, useDefaults: true } },
    // a failed validation is an expected 400: no stack, no message text (the answer is built from its Ajv errors)
    schemaErrorFormatter: (_errors, dataVar) => expectedError(`Invalid request ${dataVar}`),
  });

  // --- defaults layer ---
  // cookies are parsed by the first request step below, not by a hook of the plugin's own
  await app.register(fastifyCookie, { secret: config.sessionSecret, hook: false });
  const securityHeaders = computeSecurityHeaders(securityHeaderOptions(config.secureCookies, deps.pageOrigins));
  // a body under 1 KiB goes as it is: compressing it costs more than the bytes it saves (error bodies, health, /me)
  await app.register(fastifyCompress, { global: true, encodings: ['br', 'gzip', 'deflate'], threshold: 1024 });
  await registerOpenApi(app, { version: config.version, scopes: deps.oauthScopes ?? {} });
  for (const schema of [ErrorBody, ...deps.schemas]) app.addSchema(schema);

  // --- pipeline ---
  const language = { translator: deps.translator ?? new Translator([HTTP_MESSAGES]), defaultLocale: config.defaultLocale };
  const pipelineStep = installPipeline(app, {
    log: logs.logger('saas.http'),
    redact: deps.redact,
    sharedSchemas: [ErrorBody, ...deps.schemas],
    responseHeaders: securityHeaders,
    apiResponseHeaders: apiHeaders,
    observeResponse: deps.observability?.observeResponse,
    language,
    bearerChallenge: {
      missing: `Bearer resource_metadata="${config.appUrl}/.well-known/oauth-protected-resource/api"`,
      invalid: `Bearer error="invalid_token", resource_metadata="${config.appUrl}/.well-known/oauth-protected-resource/api"`,
    },
  });

  // --- request checks ---
  const authenticator = deps.authenticator;
  // JWT middleware: wraps the whole /api group; claims (or the API key's id) go into the log context
  const jwtStep: RequestStep = (request) => {
    if (!authenticator || !request.headers.authorization || !isApiRoute(request)) return undefined;
    const apply = ({ user, apiKey, failure, refuse }: AuthResult): StepResult => {
      // on a platform admin route the gate answers every caller who is not one (route-gates.ts)
      if (refuse && !isPlatformAdminRoute(request)) return refuse;
      if (user) {
        request.user = user;
        request.logContext.user = { id: user.id, email: user.email, ...(user.actor ? { actor: user.actor } : {}) };
      } else if (apiKey) {
        request.apiKey = apiKey;
        request.logContext['api-key'] = { id: apiKey.id, prefix: apiKey.prefix, 'organization-id': apiKey.organizationId };
      } else if (failure || refuse) {
        request.authFailure = failure ?? refuse?.message;
      }
      return undefined;
    };
    const result = authenticator.authenticate(request);
    return result instanceof Promise ? result.then(apply) : apply(result);
  };
  // what a path without a route answers, headers included (whichever hook set some before): also a
  // platform admin route's answer to anyone else (route-gates.ts)
  // an error body, not a document: the API's headers (no-store) over the document's, whatever path was asked for
  // (the document's order, the API's values): removing headers costs more than the rest of a 404,
  // so only when another set came first
  const unmatchedBlock = { ...securityHeaders, ...apiHeaders };
  const unmatchedNames = Object.keys(unmatchedBlock);
  const unmatchedHeaders = (reply: FastifyReply) => {
    if (!documentHeadersFirst(reply)) for (const name of unmatchedNames) reply.removeHeader(name);
    reply.headers(unmatchedBlock);
  };
  const unmatched = (request: FastifyRequest, reply: FastifyReply) => {
    unmatchedHeaders(reply);
    // notFound()'s body, sent as it is (in the reader's language): an expected answer makes no Error
    markErrorBody(reply);
    const words = phrase('No route for {method} {path}', { method: request.method, path: pathOf(request.url) });
    reply.code(404).send({ type: 'not-found', message: language.translator.text(localeOf(request, language.defaultLocale), words) });
  };
  // the first step: an in-process request (an MCP tool call's route) starts its clock here
  const cookieStep: RequestStep = (request) => {
    startClockIfUntracked(request.raw);
    const header = request.headers.cookie;
    request.cookies = header ? app.parseCookie(header) : {};
    return undefined;
  };
  // one onRequest hook for every check before the route's own, in order (request-steps.ts): the
  // route gates after the JWT middleware and before everything else (CSRF, the body)
  app.addHook(
    'onRequest',
    requestSteps([
      cookieStep,
      pipelineStep,
      jwtStep,
      routeGatesStep({ headers: unmatchedHeaders, answer: unmatched }),
      csrfStep(deps.csrf, {
        credentialCookies: deps.authenticator?.credentialCookies ?? [],
        allowedOrigins: [config.appUrl, ...config.allowedOrigins],
      }),
    ]),
  );

  // --- routes ---
  for (const group of deps.routeGroups) registerRouteGroup(app, group, deps.accountGuard, deps.usageGate, language);
  for (const mount of deps.mounts ?? []) {
    for (const url of mount.urls) {
      app.route({
        method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
        url,
        // its own protocol's checks (a token request comes from another site's server or page)
        config: { csrf: false, mount: true },
        // documented by the mounted application itself (its discovery document)
        schema: { hide: true },
        // handed over before the body is read: the mounted application reads it
        onRequest: (request, reply, _done) => {
          reply.hijack();
          const sources = localeSources(request);
          const locale = (account?: string | null) => requestLocale({ ...sources, account: account ?? sources.account }, language.defaultLocale);
          const say: Say = Object.assign((words: Words, account?: string | null) => language.translator.text(locale(account), words), { locale });
          mount.handle(request.raw, reply.raw, request.ip, app, say);
        },
        handler: () => undefined,
      });
    }
  }
  // the document describes every route; public by default (a starter's users read it), and
  // OPENAPI_DOCS=off for deployments that would rather not publish the API's shape
  if (config.openapiDocs) await registerOpenApiRoutes(app);
  await registerStatic(app, {
    publicDir: config.publicDir,
    csrf: deps.csrf,
    secureCookies: config.secureCookies,
    pageFields: deps.pageFields,
    watch: config.env === 'dev',
    localeOf: (request) => localeOf(request, language.defaultLocale),
  });

  // synchronous for the unmatched answer (an async handler costs a promise per 404); the page's
  // promise is Fastify's to await
  app.setNotFoundHandler((request, reply) => {
    if (app.isClientRoute(request) && !isApiOrDocsTarget(request.url)) return app.sendIndex(request, reply);
    unmatched(request, reply);
  });

  return app;
}
