/**
 * Step 9 of the pipeline (pipeline.ts): one `api-call/response` entry per response, errors,
 * 404s and abandoned requests included, and the response's metrics and span name.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from '../logging/logger.js';
import { routeOf, type ResponseObserver } from '../observability/http.js';
import { contextOf, elapsedMs, pathOf } from './request-context.js';

const LOGGED = Symbol('saas.responseLogged');

export function installResponseLog(app: FastifyInstance, log: Logger, observeResponse: ResponseObserver | undefined): void {
  const logResponse = (request: FastifyRequest, status: number, contentType: unknown) => {
    const tracked = request.raw as IncomingMessage & { [LOGGED]?: boolean };
    if (tracked[LOGGED]) return;
    tracked[LOGGED] = true;
    const elapsed = elapsedMs(tracked);
    const ms = Math.round(elapsed * 1000) / 1000;
    const data = contentType ? { status, 'saas.logging/ms': ms, 'content-type': String(contentType) } : { status, 'saas.logging/ms': ms };
    log.info('api-call/response', `${request.method} ${pathOf(request.url)} => ${status}`, data, { ctx: request.logContext ?? contextOf(tracked) });
    observeResponse?.(tracked, request.method, routeOf(request), status, elapsed / 1000);
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
