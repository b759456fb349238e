/**
 * OpenTelemetry traces, loaded only when OTEL_EXPORTER_OTLP_ENDPOINT is set (system.ts imports
 * this module dynamically). The lightest parts that do the job: the API, the trace SDK, the
 * W3C propagator and the OTLP/HTTP exporter (JSON); no auto-instrumentation and no global
 * registration: the request span, the query spans and `withSpan` are made here, and the
 * active span travels in this component's own AsyncLocalStorage.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage } from 'node:http';
import { defaultTextMapGetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace';
import type { CompiledQuery } from 'kysely';
import type { TracingSettings } from '../config.js';
import type { QueryAround } from '../db/observed-dialect.js';
import { setTraceIds } from '../logging/context.js';
import type { RequestWrapper } from './http.js';
import { setSpanRunner, type SpanAttributes } from './spans.js';

const SPAN = Symbol('saas.requestSpan');
const ROUTE = Symbol('saas.route');

type TracedMessage = IncomingMessage & { [SPAN]?: Span; [ROUTE]?: string };

export interface TracingOptions {
  version: string;
  /** tests: where spans go instead of OTLP */
  exporter?: SpanExporter;
}

/** The first SQL keyword, upper-cased: the span name (`SELECT`), never the statement's values. */
function operationOf(sqlText: string): string {
  const m = /^\s*\(?\s*([A-Za-z]+)/.exec(sqlText);
  return m ? m[1].toUpperCase() : 'QUERY';
}

export class Tracing {
  private readonly provider: TracerProvider;
  private readonly tracer: Tracer;
  private readonly propagator = new W3CTraceContextPropagator();
  private readonly storage = new AsyncLocalStorage<Context>();

  constructor(settings: TracingSettings, options: TracingOptions) {
    const exporter = options.exporter ?? new OTLPTraceExporter({ url: `${settings.endpoint}/v1/traces`, headers: settings.headers });
    this.provider = new TracerProvider({
      resource: resourceFromAttributes({ 'service.name': settings.serviceName, 'service.version': options.version }),
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.sampleRatio) }),
      spanProcessors: [new BatchSpanProcessor({ exporter })],
    });
    this.tracer = this.provider.getTracer('saas-app', options.version);
  }

  /** Installs `withSpan` and the log context's trace ids; undone by {@link shutdown}. */
  start(): void {
    setSpanRunner({ run: (name, attributes, fn) => this.run(name, attributes, fn) });
    setTraceIds(() => this.activeIds());
  }

  private active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }

  private activeIds(): { traceId: string; spanId: string } | undefined {
    const span = trace.getSpan(this.active());
    if (!span) return undefined;
    const { traceId, spanId } = span.spanContext();
    return { traceId, spanId };
  }

  /** Runs `fn` in a child span of the active one; records a thrown error; ends when `fn` settles. */
  run<T>(name: string, attributes: SpanAttributes, fn: () => Promise<T>, kind: SpanKind = SpanKind.CLIENT): Promise<T> {
    const parent = this.active();
    const span = this.tracer.startSpan(name, { kind, attributes }, parent);
    return this.storage.run(trace.setSpan(parent, span), async () => {
      try {
        return await fn();
      } catch (err) {
        span.recordException(err instanceof Error ? err : String(err));
        span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : undefined });
        throw err;
      } finally {
        span.end();
      }
    });
  }

  /**
   * Each database statement in a span (the parameterised SQL, never the values), when a span is
   * active: a background loop's polling (the mail worker's claim) would otherwise make a trace
   * of one query every second.
   */
  readonly aroundQuery: QueryAround = (query: CompiledQuery, execute) => {
    if (!trace.getSpan(this.active())) return execute();
    const operation = operationOf(query.sql);
    return this.run(operation, { 'db.system.name': 'postgresql', 'db.operation.name': operation, 'db.query.text': query.sql }, execute);
  };

  /**
   * The request span: continues an incoming `traceparent`, is active for everything the request
   * runs, joins the request's log context, and ends when the response closes, named after the
   * route template the pipeline hands over ({@link setRoute}).
   */
  readonly wrapRequest: RequestWrapper = (req, res, ctx, next) => {
    const parent = this.propagator.extract(ROOT_CONTEXT, req.headers, defaultTextMapGetter);
    const method = req.method ?? 'GET';
    const span = this.tracer.startSpan(
      method,
      {
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': method, 'url.scheme': 'http', 'server.address': String(ctx['server-name'] ?? '') },
      },
      parent,
    );
    const { traceId, spanId } = span.spanContext();
    // also for entries written outside the request's async context (the response entry)
    ctx['trace-id'] = traceId;
    ctx['span-id'] = spanId;
    (req as TracedMessage)[SPAN] = span;
    res.once('close', () => {
      const route = (req as TracedMessage)[ROUTE];
      if (route) {
        span.updateName(`${method} ${route}`);
        span.setAttribute('http.route', route);
      }
      const status = res.writableFinished ? res.statusCode : 499;
      span.setAttribute('http.response.status_code', status);
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    this.storage.run(trace.setSpan(parent, span), next);
  };

  /** The route template of a request, for its span's name. */
  setRoute(req: IncomingMessage, route: string): void {
    (req as TracedMessage)[ROUTE] = route;
  }

  /** Exports what is buffered. */
  flush(): Promise<void> {
    return this.provider.forceFlush();
  }

  async shutdown(): Promise<void> {
    setSpanRunner(undefined);
    setTraceIds(undefined);
    await this.provider.shutdown();
  }
}
