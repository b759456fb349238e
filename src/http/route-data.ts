/**
 * The matched route's data (its Fastify `config`: what `routes.ts` derives from the route
 * table, plus Fastify's `url` and `method`), read once per request. Fastify builds a new
 * `routeOptions` object on every read, and the pipeline, the checks and the metrics each need
 * the data: five reads on a health request. An unmatched request has its 404 route's data.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

const ROUTE_DATA = Symbol('saas.route-data');

interface Holder {
  [ROUTE_DATA]?: RouteData;
}

/** What every route's data has; `routes.ts` and `route-gates.ts` read their own fields from it. */
export interface RouteData {
  /** the route's path template */
  url?: string;
  [field: string]: unknown;
}

export function routeDataOf(request: FastifyRequest): RouteData {
  const holder = request as unknown as Holder;
  return (holder[ROUTE_DATA] ??= (request.routeOptions.config ?? {}) as unknown as RouteData);
}

/**
 * Answers as a request for no route (Fastify's `callNotFound`, which moves the request to the
 * 404 route): the route data read so far was the matched route's, so it is read again after.
 */
export function callNotFound(request: FastifyRequest, reply: FastifyReply): void {
  (request as unknown as Holder)[ROUTE_DATA] = undefined;
  reply.callNotFound();
}
