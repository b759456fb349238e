/**
 * The HTTP side of metrics and tracing. The pipeline's one response hook (src/http/pipeline.ts),
 * which already writes the `api-call/response` entry exactly once per request (answered, aborted:
 * 499, or refused by the router), hands the same request to a {@link ResponseObserver}: no
 * hook of its own, no second clock reading. Nothing is called when both are off.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyRequest } from 'fastify';
import type { LogContext } from '../logging/context.js';
import { routeDataOf } from '../http/route-data.js';

/** Called by the server factory around each request (tracing): must call `next` once, synchronously. */
export type RequestWrapper = (req: IncomingMessage, res: ServerResponse, ctx: LogContext, next: () => void) => void;

/** One finished request: its method, route template (bounded, never the raw URL), status and duration. */
export type ResponseObserver = (req: IncomingMessage, method: string, route: string, status: number, seconds: number) => void;

/** The label of a request no route matched (404s, the client app's fallback page, URLs the router refused). */
export const UNMATCHED_ROUTE = 'not-found';

/** The route template of a request: bounded, never the raw URL. */
export function routeOf(request: FastifyRequest): string {
  if (request.is404) return UNMATCHED_ROUTE;
  return routeDataOf(request).url ?? UNMATCHED_ROUTE;
}
