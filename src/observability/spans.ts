/**
 * `withSpan` for outgoing calls (SMTP, Stripe, OIDC): a child span of whatever span is active
 * when tracing is on (src/observability/tracing.ts installs the runner), and a plain call of
 * `fn` when it is off. This module loads nothing of OpenTelemetry.
 */
export type SpanAttributes = Record<string, string | number | boolean>;

export interface SpanRunner {
  run<T>(name: string, attributes: SpanAttributes, fn: () => Promise<T>): Promise<T>;
}

let runner: SpanRunner | undefined;

/** Installed by the tracing component at start, removed at stop. */
export function setSpanRunner(next: SpanRunner | undefined): void {
  runner = next;
}

/**
 * Runs `fn` in a client span named `name` (e.g. `smtp send`, `stripe customers.create`); the
 * span records a thrown error and ends when `fn` settles. Without tracing: `fn()`.
 */
export function withSpan<T>(name: string, attributes: SpanAttributes, fn: () => Promise<T>): Promise<T> {
  return runner ? runner.run(name, attributes, fn) : fn();
}
