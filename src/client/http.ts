/**
 * The client request layer: the effects `http/api`, `http/auth-api` and `http/request`.
 *
 *   http/api       a request to this application's API: a URL `account/me` (or `:account/me`)
 *                  becomes `/api/account/me`, a string starting with `/` is used as the path;
 *                  non-GET requests carry the CSRF token from the page as `X-CSRF-Token`
 *   http/auth-api  the same, with `Authorization: Bearer <stored access token>`; a 401 refreshes
 *                  the token once (concurrent 401s share one refresh), retries the request with
 *                  the new token, and on refresh failure dispatches `router/navigate` to log-in
 *   http/request   any URL, as given: no base path, token or CSRF token
 *   http/refresh-token  `{onSuccess?, onFailure?}`: a new access token through the refresh-token
 *                  cookie, the same refresh concurrent 401s share (a long-lived request that
 *                  carries the token itself, the notification stream, renews it this way)
 *
 * A status >= 400, a network error, a time-out or an abort goes to the failure handlers.
 */
import { edn, json, transitJson } from '../shared/codecs.js';
import type { EventCore, EventVector } from './core.js';

export type ContentType = 'transit-json' | 'json' | 'form-encoded' | 'text' | 'html' | 'edn';
export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete' | 'head';

export interface HttpOptions {
  url: string;
  method?: Method;
  body?: unknown;
  headers?: Record<string, string>;
  queryParams?: Record<string, string | number | boolean | null | undefined>;
  /** authorization token; set by `http/auth-api` */
  token?: string;
  /** path inside the response body to hand to the success handlers */
  successPath?: Array<string | number>;
  /** request body type; default `transit-json` */
  contentType?: ContentType;
  /** accepted response type; default `transit-json` */
  accept?: ContentType;
  onSuccess?: EventVector;
  onFailure?: EventVector;
  onSuccessN?: EventVector[];
  onFailureN?: EventVector[];
  /** milliseconds; default from the layer's config */
  timeoutMs?: number;
  /** aborts the request */
  signal?: AbortSignal;
}

/** What a failure handler receives as its last argument. */
export interface HttpFailure {
  /** the HTTP status; 0 when no response came */
  status: number;
  /** `http-error` for status >= 400, else `network`, `timeout` or `aborted` */
  kind: 'http-error' | 'network' | 'timeout' | 'aborted';
  /** the decoded response body, when there was one */
  body?: unknown;
  message: string;
}

export interface TransportRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
}

export interface TransportResponse {
  status: number;
  contentType: string | null;
  text: string;
}

export type Transport = (request: TransportRequest) => Promise<TransportResponse>;

export const MIME: Record<ContentType, string> = {
  'transit-json': transitJson.mime,
  json: json.mime,
  'form-encoded': 'application/x-www-form-urlencoded',
  text: 'text/plain',
  html: 'text/html',
  edn: edn.mime,
};

export interface HttpLayerConfig {
  transport?: Transport;
  /** the CSRF token for non-GET requests; default: the page's `__anti-forgery-token` field */
  csrfToken?: () => string | undefined;
  getToken: () => string | undefined;
  setToken: (token: string | undefined) => void;
  /** the event that sends the user to log in */
  loginRoute?: string;
  timeoutMs?: number;
  /** the API path prefix; `/api` */
  apiBase?: string;
  /**
   * An `http/auth-api` request answered 403 `reauthentication-required` goes to this event
   * (with the request and the answer) instead of its failure events: the shell asks for the
   * password, or a new sign-in, and sends the request again (docs/sign-in.md).
   */
  reauthEvent?: string;
}

/** The default transport: `fetch`, same-origin cookies. */
export const fetchTransport: Transport = async (req) => {
  const res = await fetch(req.url, { method: req.method, headers: req.headers, body: req.body, signal: req.signal, credentials: 'same-origin' });
  return { status: res.status, contentType: res.headers.get('content-type'), text: await res.text() };
};

export function pageCsrfToken(): string | undefined {
  if (typeof document === 'undefined') return undefined;
  const field = document.getElementById('__anti-forgery-token') as HTMLInputElement | null;
  return field?.value || undefined;
}

/** `account/me` or `:account/me` -> `/api/account/me`; `/x` stays `/x`. */
export function apiUrl(url: string, apiBase = '/api'): string {
  if (url.startsWith('/') || /^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return url;
  return `${apiBase}/${url.replace(/^:/, '')}`;
}

export function withQuery(url: string, params: HttpOptions['queryParams']): string {
  if (!params) return url;
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) search.append(k, String(v));
  const qs = search.toString();
  return qs ? `${url}${url.includes('?') ? '&' : '?'}${qs}` : url;
}

export function encodeBody(body: unknown, type: ContentType): string | undefined {
  if (body === undefined) return undefined;
  if (typeof body === 'string') return body;
  switch (type) {
    case 'transit-json':
      return transitJson.encode(body);
    case 'json':
      return json.encode(body);
    case 'edn':
      return edn.encode(body);
    case 'form-encoded': {
      const form = new URLSearchParams();
      for (const [k, v] of Object.entries(body as Record<string, unknown>)) if (v !== undefined && v !== null) form.append(k, String(v));
      return form.toString();
    }
    default:
      return String(body);
  }
}

/** Decodes a response body by its Content-Type (falling back to what was asked for). */
export function decodeBody(text: string, contentType: string | null, accept: ContentType): unknown {
  if (text === '') return undefined;
  const mime = (contentType ?? MIME[accept]).split(';')[0].trim().toLowerCase();
  if (mime === transitJson.mime) return transitJson.decode(text);
  if (mime === edn.mime) return edn.decode(text);
  if (mime === json.mime || mime.endsWith('+json')) return json.decode(text);
  return text;
}

function getIn(value: unknown, path: Array<string | number> | undefined): unknown {
  let v = value;
  for (const key of path ?? []) v = v === null || v === undefined ? undefined : (v as Record<string | number, unknown>)[key];
  return v;
}

type Outcome = { ok: true; status: number; body: unknown } | { ok: false; failure: HttpFailure };

/** Installs the three effects on an event core. */
export function installHttp<S>(core: EventCore<S>, config: HttpLayerConfig): void {
  const transport = config.transport ?? fetchTransport;
  const csrfToken = config.csrfToken ?? pageCsrfToken;
  const apiBase = config.apiBase ?? '/api';
  let refreshing: Promise<boolean> | null = null;

  async function send(opts: HttpOptions, url: string, extras: { csrf: boolean; token?: string }): Promise<Outcome> {
    const method = (opts.method ?? 'get').toUpperCase();
    const contentType = opts.contentType ?? 'transit-json';
    const accept = opts.accept ?? 'transit-json';
    const headers: Record<string, string> = { accept: MIME[accept], ...opts.headers };
    const body = method === 'GET' || method === 'HEAD' ? undefined : encodeBody(opts.body, contentType);
    if (body !== undefined) headers['content-type'] = MIME[contentType];
    const token = extras.token ?? opts.token;
    if (token) headers.authorization = `Bearer ${token}`;
    if (extras.csrf && method !== 'GET' && method !== 'HEAD') {
      const csrf = csrfToken();
      if (csrf) headers['x-csrf-token'] = csrf;
    }
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(
      () => {
        timedOut = true;
        controller.abort();
      },
      opts.timeoutMs ?? config.timeoutMs ?? 30_000,
    );
    const onAbort = () => controller.abort();
    opts.signal?.addEventListener('abort', onAbort);
    try {
      const res = await transport({ url: withQuery(url, opts.queryParams), method, headers, body, signal: controller.signal });
      let decoded: unknown;
      try {
        decoded = decodeBody(res.text, res.contentType, accept);
      } catch {
        decoded = res.text;
      }
      if (res.status >= 400) {
        const message = (decoded as { message?: unknown } | undefined)?.message;
        return {
          ok: false,
          failure: { status: res.status, kind: 'http-error', body: decoded, message: typeof message === 'string' ? message : `HTTP ${res.status}` },
        };
      }
      return { ok: true, status: res.status, body: decoded };
    } catch (err) {
      const kind = timedOut ? 'timeout' : opts.signal?.aborted ? 'aborted' : 'network';
      return {
        ok: false,
        failure: {
          status: 0,
          kind,
          message: kind === 'network' ? `Network error: ${(err as Error).message}` : `Request ${kind === 'timeout' ? 'timed out' : 'aborted'}`,
        },
      };
    } finally {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** One refresh for all concurrent 401s; resolves true when a new token was stored. */
  function refreshToken(): Promise<boolean> {
    refreshing ??= send({ url: 'account/refresh', method: 'post', body: {} }, apiUrl('account/refresh', apiBase), { csrf: true })
      .then((outcome) => {
        const token = outcome.ok ? (outcome.body as { 'access-token'?: string } | undefined)?.['access-token'] : undefined;
        config.setToken(token);
        return Boolean(token);
      })
      .finally(() => {
        refreshing = null;
      });
    return refreshing;
  }

  function finish(opts: HttpOptions, outcome: Outcome): void {
    if (outcome.ok) {
      const value = getIn(outcome.body, opts.successPath);
      for (const e of [opts.onSuccess, ...(opts.onSuccessN ?? [])]) if (e) core.dispatch([...e, value] as EventVector);
    } else {
      const value = outcome.failure.body ?? outcome.failure;
      for (const e of [opts.onFailure, ...(opts.onFailureN ?? [])]) if (e) core.dispatch([...e, value] as EventVector);
    }
  }

  core.regFx('http/request', (opts: HttpOptions) => {
    void send(opts, opts.url, { csrf: false }).then((o) => finish(opts, o));
  });

  core.regFx('http/api', (opts: HttpOptions) => {
    void send(opts, apiUrl(opts.url, apiBase), { csrf: true }).then((o) => finish(opts, o));
  });

  core.regFx('http/refresh-token', (opts: { onSuccess?: EventVector; onFailure?: EventVector }) => {
    void refreshToken().then((stored) => {
      const next = stored ? opts.onSuccess : opts.onFailure;
      if (next) core.dispatch(next);
    });
  });

  core.regFx('http/auth-api', (opts: HttpOptions) => {
    const url = apiUrl(opts.url, apiBase);
    void (async () => {
      const sent = config.getToken();
      let outcome = await send(opts, url, { csrf: true, token: sent });
      const now = config.getToken();
      if (!outcome.ok && outcome.failure.status === 401 && sent !== undefined && now !== sent) {
        // the token changed meanwhile: a log-out forgot it (the failure stands), or another
        // request's refresh replaced it (the request goes again with the new one)
        if (now !== undefined) outcome = await send(opts, url, { csrf: true, token: now });
      } else if (!outcome.ok && outcome.failure.status === 401) {
        if (await refreshToken()) {
          // retried once: a second 401 is a failure, not another refresh
          outcome = await send(opts, url, { csrf: true, token: config.getToken() });
        } else {
          core.dispatch(['router/navigate', { route: config.loginRoute ?? 'log-in' }]);
        }
      }
      if (
        !outcome.ok &&
        outcome.failure.status === 403 &&
        config.reauthEvent &&
        (outcome.failure.body as { type?: string } | undefined)?.type === 'reauthentication-required'
      ) {
        core.dispatch([config.reauthEvent, opts, outcome.failure.body]);
        return;
      }
      finish(opts, outcome);
    })();
  });
}
