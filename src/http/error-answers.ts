/**
 * Every answer that is an error, in the one error shape: what anything thrown during a request
 * maps to (`toErrorResponse`), the router's own refusals (`frameworkErrorHandler`) and the
 * requests Node's parser refuses before Fastify sees them (`clientErrorHandler`).
 */
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ErrorObject } from 'ajv';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../db/database.js';
import { msg, type Phrase, phrase } from '../i18n/messages.js';
import type { Logger } from '../logging/logger.js';
import { redactApiKeys } from '../logging/redact-links.js';
import { UNMATCHED_ROUTE, type ResponseObserver } from '../observability/http.js';
import {
  ajvErrors,
  HttpError,
  malformedBody,
  requestCoercionBody,
  ResponseCoercionError,
  typeForStatus,
  unsupportedMediaType,
  type CoercionPlace,
  type ErrorBody,
  type Words,
} from './errors.js';
import { DecodeError, FORM_MIME, FORMATS, negotiateResponseFormat } from './formats.js';
import { contextOf, elapsedMs, pathOf } from './request-context.js';

const ERROR_BODY = Symbol('saas.errorBody');

/** Marks a reply's body as an error body: the response schema check leaves it alone. */
export function markErrorBody(reply: FastifyReply): void {
  (reply as unknown as Record<symbol, boolean>)[ERROR_BODY] = true;
}

export function isErrorBody(reply: FastifyReply): boolean {
  return (reply as unknown as Record<symbol, boolean>)[ERROR_BODY] === true;
}

const COERCION_PLACE: Record<string, CoercionPlace> = { body: 'body', querystring: 'query', params: 'path', headers: 'headers' };
/** Where Fastify's `validationContext` says a refused input was. */
export const coercionPlace = (context: string | undefined): CoercionPlace => COERCION_PLACE[context ?? 'body'] ?? 'body';
const SUPPORTED_REQUEST_TYPES = [...FORMATS.map((f) => f.mime), FORM_MIME];

export interface ErrorResponse {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
  /** the phrases behind the body's English texts (an {@link HttpError}'s), for translating them (error-language.ts) */
  phrases?: ReadonlyMap<string, Phrase>;
}

/** An HttpError's answer, the phrases behind its texts with it: an id with values is its phrase's, not the English text. */
const answerOf = (err: HttpError): ErrorResponse => ({ status: err.status, body: err.body, headers: err.headers, phrases: err.phrases });

/**
 * The reasons of a malformed body that the codecs write themselves (src/shared/codecs.ts, edn.ts,
 * transit.ts), each a message; another reason (V8's JSON parser's words) stays as it was written.
 */
const DECODE_REASONS: ReadonlySet<string> = new Set([
  msg('unexpected end of input'),
  msg('unexpected character'),
  msg('unterminated string'),
  msg('bad unicode escape'),
  msg('bad escape'),
  msg('unclosed map'),
  msg('unclosed list'),
  msg('unclosed vector'),
  msg('unclosed set'),
  msg('unexpected closing bracket'),
  msg('map with an odd number of forms'),
  msg('map keys must be keywords, strings or numbers'),
  msg('bad keyword'),
  msg('bad number'),
  msg('no value'),
  msg('bad character'),
  msg('bad symbolic value'),
  msg('bad tag'),
  msg('bad #inst'),
  msg('bad #uuid'),
  msg('more than one top-level value'),
  msg('bad special number'),
  msg('unknown cache code'),
  msg('map with an odd number of entries'),
  msg('cmap needs an array'),
  msg('UUIDs as two longs are not supported'),
  msg('a tag without a value'),
]);
const FORBIDDEN_KEY_REASON = /^forbidden key "(.{1,20})"$/;

/** A decoding's reason as words: the codecs' own a message, a parser's as it is (data). */
function decodeReason(reason: string): Words {
  const key = FORBIDDEN_KEY_REASON.exec(reason)?.[1];
  if (key !== undefined) return phrase('forbidden key "{key}"', { key });
  return DECODE_REASONS.has(reason) ? phrase(reason) : reason;
}

/** The 400 `malformed-body` of a body that did not decode, its words from the codec's data (the English text as the codec wrote it). */
function malformedAnswer(err: DecodeError): ErrorResponse {
  const { format, line, column, reason, key } = err.problem;
  let words: Words = err.message;
  if (key !== undefined) words = phrase('Forbidden key "{key}"', { key });
  else if (format !== undefined && reason !== undefined && line !== undefined && column !== undefined)
    words = phrase('Malformed {format} at line {line}, column {column}: {reason}', { format, line, column, reason: decodeReason(reason) });
  else if (format !== undefined && reason !== undefined) words = phrase('Malformed {format}: {reason}', { format, reason: decodeReason(reason) });
  else if (format !== undefined) words = phrase('Malformed {format}', { format });
  return answerOf(malformedBody(words));
}

export const CLIENT_ERROR_MESSAGES: Record<number, string> = {
  400: msg('Bad request'),
  404: msg('Not found'),
  405: msg('Method not allowed'),
  408: msg('Request timeout'),
  413: msg('The request body is larger than allowed'),
  414: msg('The request URI is too long'),
  415: msg('Unsupported media type'),
  431: msg('The request headers are too large'),
};

/** Maps anything thrown during a request to the one error body shape. */
export function toErrorResponse(err: unknown): ErrorResponse {
  if (err instanceof HttpError) return answerOf(err);
  if (err instanceof DecodeError) return malformedAnswer(err);
  if (err instanceof ResponseCoercionError) {
    return { status: 500, body: { type: 'response-coercion', message: 'The response did not match its schema' }, headers: {} };
  }
  const fe = err as Partial<FastifyError> & { validation?: ErrorObject[]; validationContext?: string };
  if (fe && Array.isArray(fe.validation)) {
    // the body alone: an HttpError would only be made to be taken apart here
    return { status: 400, body: requestCoercionBody(coercionPlace(fe.validationContext), ajvErrors(fe.validation)), headers: {} };
  }
  switch (fe?.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { ...answerOf(unsupportedMediaType(SUPPORTED_REQUEST_TYPES)), headers: {} };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, body: { type: 'payload-too-large', message: 'The request body is larger than allowed' }, headers: {} };
    // Fastify's own messages are replaced: ours never quote the request
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, body: malformedBody('The body is empty').body, headers: {} };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { status: 400, body: malformedBody('The body does not match its Content-Length').body, headers: {} };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { status: 400, body: malformedBody('Malformed JSON').body, headers: {} };
  }
  if (isDatabaseUnavailable(err)) {
    return { status: 503, body: { type: 'service-unavailable', message: 'The database is not available; try again shortly' }, headers: { 'retry-after': '1' } };
  }
  const status = typeof fe?.statusCode === 'number' ? fe.statusCode : 500;
  if (status >= 400 && status < 500) {
    // a framework or library message may quote the request: the status says enough
    return { status, body: { type: typeForStatus(status), message: CLIENT_ERROR_MESSAGES[status] ?? 'Bad request' }, headers: {} };
  }
  const className = err instanceof Error ? err.constructor?.name || err.name : typeof err;
  return { status: 500, body: { type: 'exception', message: 'Internal server error', class: className }, headers: {} };
}

/**
 * Errors the router raises before any route or hook runs (a malformed URL, a path parameter
 * over the length limit): answered in the one error shape, in the negotiated format, with the
 * API headers, and logged like any response.
 */
export function frameworkErrorHandler(log: Logger, headers: Record<string, string>, observeResponse?: ResponseObserver) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const status = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : error.statusCode && error.statusCode < 500 ? error.statusCode : 400;
    const format = negotiateResponseFormat(request.headers.accept);
    const body = { type: typeForStatus(status), message: status === 414 ? 'A path segment is too long' : 'Malformed request URL' };
    const ctx = contextOf(request.raw) ?? {};
    reply.raw.once('finish', () => {
      const elapsed = elapsedMs(request.raw);
      log.info(
        'api-call/response',
        `${request.method} ${pathOf(request.url)} => ${status}`,
        { status, 'saas.logging/ms': Math.round(elapsed * 1000) / 1000, 'content-type': format.mime },
        { ctx },
      );
      observeResponse?.(request.raw, request.method, UNMATCHED_ROUTE, status, elapsed / 1000);
    });
    reply
      .code(status)
      .headers(headers)
      .type(format.mime)
      .serializer(() => format.encode(body))
      .send(body);
  };
}

/**
 * Requests Node's parser refuses before Fastify sees them (headers over the 16 KiB limit, a
 * request line alone over it, a malformed request, a client too slow to send its headers):
 * answered in the one error shape (JSON: no `Accept` was read) with the API headers, and
 * logged like any response, the path without its query and cut to 200 characters.
 */
export function clientErrorHandler(log: Logger, headers: Record<string, string>) {
  return (error: Error, socket: Socket): void => {
    const err = error as NodeJS.ErrnoException & { rawPacket?: unknown };
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const packet = Buffer.isBuffer(err.rawPacket) ? err.rawPacket : undefined;
    const raw = packet ? packet.toString('latin1', 0, Math.min(packet.length, 16 * 1024 + 1)) : '';
    let status = 400;
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') status = 408;
    else if (err.code === 'HPE_HEADER_OVERFLOW') status = raw.includes('\r\n') || raw === '' ? 431 : 414; // no line ended: the request line itself
    const body = JSON.stringify({ type: typeForStatus(status), message: CLIENT_ERROR_MESSAGES[status] ?? 'Bad request' });
    const line = /^([A-Z]{1,20}) (\S{1,200})/.exec(raw);
    const method = line?.[1] ?? '-';
    const path = line ? redactApiKeys(pathOf(line[2])) : '-';
    log.info(
      'api-call/response',
      `${method} ${path} => ${status}`,
      { status, 'content-type': 'application/json', reason: err.code ?? 'client-error' },
      { ctx: { 'req-id': randomUUID(), 'request-method': method.toLowerCase(), uri: path } },
    );
    if (socket.writable) {
      const head = Object.entries({ ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), connection: 'close' })
        .map(([name, value]) => `${name}: ${value}`)
        .join('\r\n');
      socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${head}\r\n\r\n${body}`);
    }
    socket.destroy();
  };
}
