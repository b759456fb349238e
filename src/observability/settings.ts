/**
 * The observability settings (docs/observability.md): where `/metrics` is served, and where
 * traces go. Part of the shared configuration: the cluster's primary serves metrics too.
 */
import { isIP } from 'node:net';
import { ConfigError, int, list, str, type Env } from '../runtime/settings.js';

/** `METRICS_PORT` / `METRICS_HOST`: where `/metrics` is served, apart from the public port. */
export interface MetricsSettings {
  port: number;
  host: string;
}

/** The `OTEL_*` settings this project reads (docs/observability.md). */
export interface TracingSettings {
  /** OTLP/HTTP base URL, e.g. `http://127.0.0.1:4318`; traces go to `<endpoint>/v1/traces` */
  endpoint: string;
  /** extra headers for the exporter (an API key of a hosted backend) */
  headers: Record<string, string>;
  serviceName: string;
  /** share of new traces recorded, 0..1; a continued trace follows its parent's decision */
  sampleRatio: number;
}

export function metricsSettings(env: Env, appHost: string, appPort: number): MetricsSettings | undefined {
  const raw = env.METRICS_PORT?.trim();
  if (!raw) return undefined;
  const port = int(env, 'METRICS_PORT', 0, 1, 65535);
  const host = str(env, 'METRICS_HOST', '127.0.0.1').trim();
  if (host !== 'localhost' && isIP(host) === 0) throw new ConfigError('METRICS_HOST', `must be an IP address or localhost, got "${host}"`);
  // the public listener would answer /metrics' port first, or the two would fight over it
  if (port === appPort && (host === appHost || appHost === '0.0.0.0' || appHost === '::')) {
    throw new ConfigError('METRICS_PORT', `must differ from PORT (${appPort}): metrics are never served on the public listener`);
  }
  return { port, host };
}

export function tracingSettings(env: Env): TracingSettings | undefined {
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!endpoint) return undefined;
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new ConfigError('OTEL_EXPORTER_OTLP_ENDPOINT', `must be an http(s) URL such as http://127.0.0.1:4318, got "${endpoint}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError('OTEL_EXPORTER_OTLP_ENDPOINT', `must be an http(s) URL (OTLP over HTTP), got "${url.protocol}"`);
  }
  const headers: Record<string, string> = {};
  for (const pair of list(env.OTEL_EXPORTER_OTLP_HEADERS)) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new ConfigError('OTEL_EXPORTER_OTLP_HEADERS', 'must be comma-separated key=value pairs');
    headers[decodeURIComponent(pair.slice(0, eq).trim())] = decodeURIComponent(pair.slice(eq + 1).trim());
  }
  const ratioRaw = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  const sampleRatio = ratioRaw ? Number(ratioRaw) : 1;
  if (ratioRaw && !(/^(\d+\.?\d*|\.\d+)$/.test(ratioRaw) && sampleRatio <= 1)) {
    throw new ConfigError('OTEL_TRACES_SAMPLER_ARG', `must be a number from 0 to 1 (the share of traces recorded), got "${ratioRaw}"`);
  }
  return {
    endpoint: url.toString().replace(/\/+$/, ''),
    headers,
    serviceName: str(env, 'OTEL_SERVICE_NAME', 'saas-app').trim(),
    sampleRatio,
  };
}
