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
