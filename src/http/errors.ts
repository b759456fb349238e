/**
 * Errors as values: every error answer has one body shape `{type, message, ...}` and a
 * status. Handlers throw an {@link HttpError} (through the helpers below) to exit early with
 * the response it carries; anything else thrown becomes a 500 `exception` whose details stay
 * in the log.
 */
import type { ErrorObject } from 'ajv';
import { Type, type Static } from 'typebox';
import { english, msg, type Phrase, phrase } from '../i18n/messages.js';
import { DECIMAL_PATTERN } from '../shared/resource-fields.js';

/** A message: its English text, or a {@link Phrase} when it has values (src/i18n/messages.ts). */
export type Words = string | Phrase;

export const ErrorBody = Type.Object(
  {
    type: Type.String({ description: 'machine-readable error kind, e.g. `request-coercion`' }),
    message: Type.String({ description: 'human-readable explanation' }),
  },
  { $id: 'error', additionalProperties: true, description: 'Every error response has this shape, plus fields specific to its type.' },
);
export type ErrorBody = Static<typeof ErrorBody> & Record<string, unknown>;

/**
 * An answer, not a failure. A 4xx is expected (a scanner's unknown path, a missing token, a
 * form filled in wrong): it is made without capturing a stack, which would cost more than the
 * rest of such a request and is never shown (only 5xx answers are logged with their stack).
 */
export class HttpError extends Error {
  readonly body: ErrorBody;
  /** the phrases behind the body's English texts (`message`, each field's), for translating them */
  readonly phrases: ReadonlyMap<string, Phrase> | undefined;

  constructor(
    readonly status: number,
    body: ErrorInput,
    readonly headers: Record<string, string> = {},
  ) {
    const phrases = new Map<string, Phrase>();
    const text = (words: Words) => {
      if (typeof words === 'string') return words;
      const said = english(words);
      phrases.set(said, words);
      return said;
    };
    const answered: ErrorBody = { ...body, message: text(body.message) };
    if (Array.isArray(body.errors)) answered.errors = (body.errors as FieldInput[]).map((e) => ({ ...e, message: text(e.message) }));
    const limit = Error.stackTraceLimit;
    if (status < 500) Error.stackTraceLimit = 0;
    try {
      super(answered.message);
    } finally {
      Error.stackTraceLimit = limit;
    }
    this.name = 'HttpError';
    this.body = answered;
    this.phrases = phrases.size > 0 ? phrases : undefined;
  }

  /** The words behind one of the body's English texts: its phrase when it had values, else the text. */
  words(text: string): Words {
    return this.phrases?.get(text) ?? text;
  }
}

/** An error body as the code writes it: messages as {@link Words}. */
export type ErrorInput = { type: string; message: Words; errors?: FieldInput[] } & Record<string, unknown>;
export interface FieldInput {
  path: string;
  message: Words;
}

/**
 * An Error made without its constructor, for an expected answer a framework builds: a body
 * that fails its schema (Fastify's `schemaErrorFormatter`; the error handler answers from the
 * Ajv errors it carries, never from this message). It is an `Error` (its prototype) with a
 * message, and no stack: even with `Error.stackTraceLimit` at 0 the constructor
 * prepares one, which showed as the costliest step of a 400 in the profiles.
 */
export function expectedError(message: string): Error {
  // assigned, not defined: `Object.defineProperty` costs ~20 times more here; the message is
  // then enumerable, which nothing sees (the error is never serialized, only its Ajv errors)
  const err = Object.create(Error.prototype) as Error;
  err.message = message;
  return err;
}

/** Early exit with 400 and the given body (`{type, message, ...}`). */
export function badRequest(body: ErrorInput): HttpError {
  return new HttpError(400, body);
}
/** 400 `invalid-token`: an emailed link's token that is unknown, already used or expired (one answer for all three). */
export function invalidToken(message: Words = 'This link is invalid, was already used or has expired'): HttpError {
  return new HttpError(400, { type: 'invalid-token', message });
}
export function unauthorized(message: Words = 'Authentication required', extra: Record<string, unknown> = {}): HttpError {
  return new HttpError(401, { type: 'unauthorized', message, ...extra }, { 'www-authenticate': 'Bearer' });
}
/** 402 `payment-required`: the organization's subscription is not active (or trialing) on one of `plans`. */
export function paymentRequired(message: Words, plans: readonly string[], extra: Record<string, unknown> = {}): HttpError {
  return new HttpError(402, { type: 'payment-required', message, plans: [...plans], ...extra });
}
export function forbidden(message: Words = 'Forbidden', extra: Record<string, unknown> = {}): HttpError {
  return new HttpError(403, { type: 'forbidden', message, ...extra });
}
export function notFound(message: Words = 'Not found', extra: Record<string, unknown> = {}): HttpError {
  return new HttpError(404, { type: 'not-found', message, ...extra });
}
/** 405 `method-not-allowed`: the path is a route's, under other methods (`Allow` lists them). */
export function methodNotAllowed(method: string, allow: readonly string[]): HttpError {
  return new HttpError(
    405,
    {
      type: 'method-not-allowed',
      message: phrase('{method} is not allowed here; use {allowed}', { method, allowed: allow.join(', ') }),
      allow: [...allow],
    },
    { allow: allow.join(', ') },
  );
}
export function conflict(message: Words, extra: Record<string, unknown> = {}): HttpError {
  return new HttpError(409, { type: 'conflict', message, ...extra });
}
export function tooManyRequests(retryAfterSeconds: number, message: Words = 'Too many attempts; try again later'): HttpError {
  const retry = Math.max(1, Math.ceil(retryAfterSeconds));
  return new HttpError(429, { type: 'rate-limited', message, 'retry-after': retry }, { 'retry-after': String(retry) });
}
export function serviceUnavailable(message: Words = 'The service is temporarily unavailable'): HttpError {
  return new HttpError(503, { type: 'service-unavailable', message }, { 'retry-after': '1' });
}
export function malformedBody(message: Words): HttpError {
  return new HttpError(400, { type: 'malformed-body', message });
}
/** The request's Content-Type has no decoder here; the answer names those there are, not the one sent (request input is never quoted). */
export function unsupportedMediaType(supported: readonly string[]): HttpError {
  return new HttpError(415, {
    type: 'unsupported-media-type',
    message: phrase("The request's Content-Type is not supported; use one of {supported}", { supported: supported.join(', ') }),
    supported: [...supported],
  });
}

export interface FieldError {
  path: string;
  message: string;
}

/**
 * Ajv's errors as `{path, message}` with JSON-pointer paths naming the field (`/email`). Ajv's
 * own messages are as Ajv wrote them (`ajv-i18n` translates them first: src/http/error-language.ts);
 * ours go through `say`, English by default.
 */
export function ajvErrors(errors: readonly ErrorObject[] | null | undefined, say: (words: Words) => string = english): FieldError[] {
  const messageOf = (e: ErrorObject) => {
    const words = e.keyword === 'pattern' ? PATTERN_WORDS.get(String((e.params as { pattern?: string }).pattern)) : undefined;
    return words ? say(words) : (e.message ?? say('is invalid'));
  };
  const list = errors ?? [];
  // a union's branches each say why a value failed them, then the union says none matched: one
  // entry for the place says it (the allowed values of a choice, else the one branch that is not null)
  const unions = new Set(list.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  // a format says in words what a pattern beside it says in a regular expression (an email address)
  const formats = new Set(list.filter((e) => e.keyword === 'format').map((e) => e.instancePath));
  const answers: FieldError[] = [];
  for (const e of list) {
    if (unions.has(e.instancePath) && e.keyword !== 'anyOf') continue;
    if (e.keyword === 'pattern' && formats.has(e.instancePath)) continue;
    const { missingProperty, additionalProperty } = e.params as { missingProperty?: string; additionalProperty?: string };
    const at = e.instancePath.split('/').map(namedSegment).join('/');
    if (e.keyword === 'anyOf') answers.push({ path: at || '/', message: unionMessage(list, e.instancePath, messageOf, say) });
    else if (additionalProperty !== undefined && !FIELD_NAME.test(additionalProperty))
      answers.push({ path: at || '/', message: say('has a field that is not allowed') });
    else {
      const field = missingProperty ?? additionalProperty;
      answers.push({ path: field ? `${at}/${field}` : at || '/', message: additionalProperty ? say('is not allowed') : messageOf(e) });
    }
  }
  return answers;
}

/** A string schema's `pattern` for "not only spaces"; its error reads as words, not as the pattern. */
export const NOT_BLANK = '\\S';

/** Patterns whose errors read as words, not as the regular expression. */
const PATTERN_WORDS = new Map([
  [NOT_BLANK, msg('must not be blank')],
  [DECIMAL_PATTERN, msg('must be a decimal number, with at most 30 digits before the point and 10 after')],
]);

/** Why a value matched no branch of the union at `place`, in one message. */
function unionMessage(list: readonly ErrorObject[], place: string, messageOf: (e: ErrorObject) => string, say: (words: Words) => string): string {
  const branches = list.filter((e) => e.instancePath === place && e.keyword !== 'anyOf');
  const allowed = branches.filter((e) => e.keyword === 'const').map((e) => JSON.stringify((e.params as { allowedValue?: unknown }).allowedValue));
  if (allowed.length > 0 && allowed.length === branches.length) return say(phrase('must be one of {allowed}', { allowed: allowed.join(', ') }));
  // a branch of another type says nothing of this value; one that took the type says what is wrong with it
  const reasons = branches.filter((e) => e.keyword !== 'type');
  if (reasons.length === 1) return messageOf(reasons[0]);
  const notNull = branches.filter((e) => !(e.keyword === 'type' && (e.params as { type?: string }).type === 'null'));
  return notNull.length === 1 ? messageOf(notNull[0]) : say('matches none of the allowed forms');
}

/**
 * What an error's path may name of the request's own keys (an unknown field, a map's key): a
 * field-like name. Anything else is not quoted back: a form body sent without `=` is one key
 * holding the whole text, a password included.
 */
const FIELD_NAME = /^[\w.:@~-]{1,64}$/;
const namedSegment = (segment: string) => (segment === '' || FIELD_NAME.test(segment) ? segment : '*');

export type CoercionPlace = 'body' | 'query' | 'path' | 'headers';

/** The body of a 400 `request-coercion` (for the error handler, which answers without making an HttpError). */
export const INVALID_REQUEST: Record<CoercionPlace, string> = {
  body: msg('Invalid request body'),
  query: msg('Invalid request query'),
  path: msg('Invalid request path'),
  headers: msg('Invalid request headers'),
};

export function requestCoercionBody(where: CoercionPlace, errors: FieldError[], message = INVALID_REQUEST[where]): ErrorBody {
  return { type: 'request-coercion', message, in: where, errors };
}

/** 400 `request-coercion`: the input at `where` failed its schema. */
export function requestCoercion(where: CoercionPlace, errors: FieldInput[], message: Words = INVALID_REQUEST[where]): HttpError {
  return new HttpError(400, { type: 'request-coercion', message, in: where, errors });
}

/** A {@link requestCoercion} from Ajv's errors, kept so that the answer step says their reasons in the reader's language. */
export class SchemaRefusal extends HttpError {
  constructor(
    readonly where: CoercionPlace,
    readonly validation: readonly ErrorObject[],
    message: Words = INVALID_REQUEST[where],
  ) {
    super(400, { type: 'request-coercion', message, in: where, errors: ajvErrors(validation) });
  }
}

/** Thrown by response validation: the body is logged, never sent. */
export class ResponseCoercionError extends Error {
  constructor(
    readonly status: number,
    readonly errors: FieldError[],
    readonly responseBody: unknown,
  ) {
    super(`Response body for status ${status} does not match its schema`);
    this.name = 'ResponseCoercionError';
  }
}

const STATUS_TYPES: Record<number, string> = {
  400: 'bad-request',
  401: 'unauthorized',
  402: 'payment-required',
  403: 'forbidden',
  404: 'not-found',
  405: 'method-not-allowed',
  406: 'not-acceptable',
  408: 'request-timeout',
  409: 'conflict',
  413: 'payload-too-large',
  414: 'uri-too-long',
  415: 'unsupported-media-type',
  429: 'rate-limited',
  431: 'headers-too-large',
  503: 'service-unavailable',
};

/** The error `type` for a status when nothing more specific is known. */
export function typeForStatus(status: number): string {
  return STATUS_TYPES[status] ?? (status >= 500 ? 'exception' : 'bad-request');
}
