/**
 * The HTTP side of metrics and tracing: one onResponse hook (and one for aborted requests)
 * that hands each answered request's method, route template, status and duration to the
 * metrics, and its route template to the request span. Nothing is installed when both are off.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { LogContext } from '../logging/context.js';

/** Called by the server factory around each request (tracing): must call `next` once, synchronously. */
export type RequestWrapper = (req: IncomingMessage, res: ServerResponse, ctx: LogContext, next: () => void) => void;

/** The label of a request no route matched (404s, and the client app's fallback page). */
export const UNMATCHED_ROUTE = 'not-found';

export interface HttpObservers {
  /** metrics: one answered (or aborted: 499) request */
  request?: (method: string, route: string, status: number, seconds: number) => void;
  /** tracing: the route template, for the request span's name */
  route?: (req: IncomingMessage, route: string) => void;
}

/** The route template of a request: bounded, never the raw URL. */
export function routeOf(request: FastifyRequest): string {
  if (request.is404) return UNMATCHED_ROUTE;
  return request.routeOptions.url ?? UNMATCHED_ROUTE;
}

export function installHttpObservers(app: FastifyInstance, observers: HttpObservers): void {
  const { request: onRequestDone, route: onRoute } = observers;
  if (!onRequestDone && !onRoute) return;
  const done = (request: FastifyRequest, status: number, ms: number) => {
    const route = routeOf(request);
    onRoute?.(request.raw, route);
    onRequestDone?.(request.method, route, status, ms / 1000);
  };
  app.addHook('onResponse', (request, reply, next) => {
    done(request, reply.statusCode, reply.elapsedTime);
    next();
  });
  // 499: the client went away before the answer (as the response log entry says)
  app.addHook('onRequestAbort', (request, next) => {
    done(request, 499, 0);
    next();
  });
}
