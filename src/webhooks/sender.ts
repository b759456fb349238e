/**
 * One delivery attempt over HTTP(S), bounded in time and memory whatever the receiver does:
 * - the host is resolved and every address checked (address-guard.ts), then the connection is
 *   made to the checked address (the request's `lookup` answers with it; TLS still names and
 *   verifies the host), so DNS rebinding cannot reach a refused address;
 * - one budget (`timeoutMs`) covers resolving, connecting, sending, the status line and the body
 *   (read until it ends or 4 KiB arrive): a 2xx whose body is read within it succeeds. When the
 *   budget runs out the attempt ends whatever the receiver does (silent, or dripping the body a
 *   byte at a time): `timeout`, with the status code when one came, and its socket destroyed;
 * - redirects are not followed (a 3xx is a failed attempt); no keep-alive, no cookies, no proxy.
 * Errors are short codes (`timeout`, `address-not-allowed`, `dns-failed`, `connection-refused`,
 * `tls-error`, `connection-failed`, `redirect-not-followed`, `unexpected-status`), never a
 * secret: the URL is not in them.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { withSpan } from '../observability/spans.js';
import { AddressNotAllowed, allowedAddresses, bareHost, HostNotFound, pinned, type HostResolver, type ResolvedAddress } from './address-guard.js';
import { signatureHeader } from './signing.js';

/** The most of a response body read and kept. */
export const RESPONSE_LIMIT_BYTES = 4096;

export interface AttemptRequest {
  url: string;
  messageId: string;
  body: string;
  /** the live secrets: one signature each */
  secrets: readonly string[];
}

/** A guarded POST's request: its URL, headers (content-length and user-agent are added) and body. */
export interface GuardedPost {
  url: string;
  headers: Record<string, string>;
  body: Buffer;
}

export interface AttemptResult {
  ok: boolean;
  /** null when no response came */
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  /** the first 4 KiB of the body, as text; null when there was none */
  response: string | null;
}

export interface SenderOptions {
  timeoutMs: number;
  resolve: HostResolver;
  allowPrivate: boolean;
  userAgent: string;
}

class Timeout extends Error {
  constructor() {
    super('timeout');
    this.name = 'Timeout';
  }
}

const TLS_CODES = /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|ERR_OSSL|HOSTNAME_MISMATCH)/;

function errorCode(err: unknown): string {
  if (err instanceof Timeout) return 'timeout';
  if (err instanceof AddressNotAllowed) return 'address-not-allowed';
  if (err instanceof HostNotFound) return 'dns-failed';
  const code = (err as { code?: string }).code ?? '';
  if (code === 'ECONNREFUSED') return 'connection-refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns-failed';
  if (TLS_CODES.test(code) || code === 'ERR_TLS_CERT_ALTNAME_INVALID') return 'tls-error';
  return 'connection-failed';
}

const text = (chunks: Buffer[]): string | null => {
  if (chunks.length === 0) return null;
  // PostgreSQL's text holds no NUL
  return Buffer.concat(chunks)
    .subarray(0, RESPONSE_LIMIT_BYTES)
    .toString('utf8')
    .replace(/\u0000/g, '');
};

export class WebhookSender {
  constructor(private readonly options: SenderOptions) {}

  /** Makes one attempt; never throws: every way it can end is a result. */
  send(attempt: AttemptRequest): Promise<AttemptResult> {
    const timestamp = Math.floor(Date.now() / 1000);
    return this.post({
      url: attempt.url,
      body: Buffer.from(attempt.body, 'utf8'),
      headers: {
        'content-type': 'application/json',
        'webhook-id': attempt.messageId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(attempt.secrets, attempt.messageId, timestamp, attempt.body),
      },
    });
  }

  /**
   * One POST of `body` with `headers` (plus its length and the user agent) under the same rules:
   * the address guard, one budget, no redirects. What the audit log's streams send (Splunk,
   * Datadog, an HTTPS receiver) goes through here too. Never throws.
   */
  post(request: GuardedPost): Promise<AttemptResult> {
    const url = new URL(request.url);
    return withSpan('webhook send', { 'server.address': url.hostname, 'http.request.method': 'POST' }, () => this.run(url, request));
  }

  private async run(url: URL, request: GuardedPost): Promise<AttemptResult> {
    const started = performance.now();
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Timeout()), this.options.timeoutMs);
    const duration = () => Math.max(0, Math.round(performance.now() - started));
    const fail = (err: unknown, statusCode: number | null = null, response: string | null = null): AttemptResult => ({
      ok: false,
      statusCode,
      durationMs: duration(),
      error: errorCode(err),
      response,
    });
    try {
      const aborted = new Promise<never>((_, reject) => {
        controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true });
      });
      aborted.catch(() => undefined);
      const addresses = await Promise.race([allowedAddresses(bareHost(url), this.options.resolve, this.options.allowPrivate), aborted]);
      const headers = {
        ...request.headers,
        'content-length': String(request.body.length),
        'user-agent': this.options.userAgent,
      };
      const { response, statusCode } = await this.exchange(url, addresses, headers, request.body, controller.signal);
      const { chunks, ended } = await this.readSome(response, controller.signal);
      // a status without its body is no answer: the receiver may not have taken the message
      if (ended !== 'complete') return fail(ended === 'timeout' ? new Timeout() : new Error('connection-failed'), statusCode, text(chunks));
      if (statusCode >= 200 && statusCode < 300) return { ok: true, statusCode, durationMs: duration(), error: null, response: text(chunks) };
      return {
        ok: false,
        statusCode,
        durationMs: duration(),
        response: text(chunks),
        error: statusCode >= 300 && statusCode < 400 ? 'redirect-not-followed' : 'unexpected-status',
      };
    } catch (err) {
      return fail(err);
    } finally {
      clearTimeout(timer);
    }
  }

  private exchange(
    url: URL,
    addresses: ResolvedAddress[],
    headers: Record<string, string>,
    body: Buffer,
    signal: AbortSignal,
  ): Promise<{ response: IncomingMessage; statusCode: number }> {
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = request(
        {
          protocol: url.protocol,
          hostname: bareHost(url),
          port: url.port || undefined,
          path: `${url.pathname}${url.search}`,
          method: 'POST',
          headers,
          agent: false,
          lookup: pinned(addresses),
          signal,
        },
        (response) => resolve({ response, statusCode: response.statusCode ?? 0 }),
      );
      req.on('error', (err) => reject(signal.aborted ? signal.reason : err));
      req.end(body);
    });
  }

  /**
   * The body's first 4 KiB at most, and how the read ended: `complete` (it ended, or 4 KiB
   * arrived), `timeout` (the budget ran out first), `broken` (the connection failed first).
   * Whichever way, the response and its socket are destroyed.
   */
  private readSome(response: IncomingMessage, signal: AbortSignal): Promise<{ chunks: Buffer[]; ended: 'complete' | 'timeout' | 'broken' }> {
    return new Promise((resolve) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let settled = false;
      const done = (ended: 'complete' | 'timeout' | 'broken') => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', cutOff);
        response.destroy();
        resolve({ chunks, ended });
      };
      const cutOff = () => done('timeout');
      if (signal.aborted) return done('timeout');
      signal.addEventListener('abort', cutOff, { once: true });
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= RESPONSE_LIMIT_BYTES) done('complete');
      });
      response.on('end', () => done('complete'));
      response.on('error', () => done('broken'));
      response.on('close', () => done(response.complete ? 'complete' : 'broken'));
    });
  }
}
