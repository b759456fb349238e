/**
 * The request log context: one mutable object per request, reachable through async context
 * from any code that runs for that request, whether or not it holds the request object.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface LogContext {
  'req-id'?: string;
  'request-method'?: string;
  uri?: string;
  'server-name'?: string;
  params?: unknown;
  user?: { id: string; email: string };
  [key: string]: unknown;
}

const storage = new AsyncLocalStorage<LogContext>();

/** Runs `fn` with `ctx` as the current context (and everything it starts asynchronously). */
export function runWithContext<T>(ctx: LogContext, fn: () => T): T {
  return storage.run(ctx, fn);
}

export function currentContext(): LogContext | undefined {
  return storage.getStore();
}

/** Adds keys to the current context; a no-op outside a request. */
export function addToContext(patch: Partial<LogContext>): void {
  const ctx = storage.getStore();
  if (ctx) Object.assign(ctx, patch);
}

/** The active span's ids; installed by the tracing component, undefined while tracing is off. */
export type TraceIdsSource = () => { traceId: string; spanId: string } | undefined;

let traceIdsSource: TraceIdsSource | undefined;

export function setTraceIds(source: TraceIdsSource | undefined): void {
  traceIdsSource = source;
}

/**
 * The context an entry is written with: `ctx`, plus `trace-id` and `span-id` of the span active
 * where the entry is made (a query's, an SMTP send's), when tracing is on. Off, it is `ctx`.
 */
export function withTraceIds(ctx: LogContext): LogContext {
  if (traceIdsSource === undefined) return ctx;
  const ids = traceIdsSource();
  if (!ids || (ctx['span-id'] === ids.spanId && ctx['trace-id'] === ids.traceId)) return ctx;
  return { ...ctx, 'trace-id': ids.traceId, 'span-id': ids.spanId };
}
