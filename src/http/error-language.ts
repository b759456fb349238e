/**
 * An error answer in the reader's language (docs/i18n.md): the `message` and each field's
 * reason of a 400; `type`, `in`, paths and every other field as they were. Ajv's reasons through
 * `ajv-i18n` (which speaks every locale of the product), ours through the catalogs. English
 * answers are left as they were made: nothing to do.
 */
import type { ErrorObject } from 'ajv';
import localizeAjv from 'ajv-i18n';
import type { FastifyRequest } from 'fastify';
import type { Translator } from '../i18n/messages.js';
import { LOCALE_COOKIE, type LocaleSources, requestLocale } from '../i18n/negotiate.js';
import type { Locale } from '../shared/locales.js';
import type { ErrorResponse } from './error-answers.js';
import { ajvErrors, type CoercionPlace, type FieldError, INVALID_REQUEST, requestCoercionBody, type Words } from './errors.js';

/** `ajv-i18n`'s translators by language (its types call the CommonJS export a default one; it is the module itself) */
const LOCALIZE_AJV = localizeAjv as unknown as Record<Exclude<Locale, 'en'>, (errors: ErrorObject[]) => void>;

export interface ErrorLanguage {
  translator: Translator;
  defaultLocale: Locale;
}

/** What names a request's locale: the account (its access token's `locale`), the cookie, Accept-Language. */
export function localeSources(request: FastifyRequest): LocaleSources {
  return { account: request.user?.locale, cookie: request.cookies?.[LOCALE_COOKIE], acceptLanguage: request.headers['accept-language'] };
}

/** The request's locale: the account's, the cookie, Accept-Language, the default. */
export function localeOf(request: FastifyRequest, defaultLocale: Locale): Locale {
  return requestLocale(localeSources(request), defaultLocale);
}

/** Ajv's errors of a refused input, in `locale` (a copy: Fastify's own are left alone). */
export function validationBody(errors: readonly ErrorObject[], where: CoercionPlace, locale: Locale, translator: Translator) {
  const say = (words: Words) => translator.text(locale, words);
  const copies = errors.map((e) => ({ ...e }));
  if (locale !== 'en') {
    LOCALIZE_AJV[locale](copies);
    // some of ajv-i18n's messages come with a space around them (its Arabic ones lead with one)
    for (const e of copies) if (e.message !== undefined) e.message = e.message.trim();
  }
  return requestCoercionBody(where, ajvErrors(copies, say), say(INVALID_REQUEST[where]));
}

/**
 * The answer `toErrorResponse` made, its words in `locale`: a text with values through the
 * phrase behind it (`answer.phrases`, whether the HttpError was thrown or made for the answer).
 */
export function translatedAnswer(answer: ErrorResponse, locale: Locale, translator: Translator): ErrorResponse {
  if (locale === 'en') return answer;
  const phrases = answer.phrases;
  const say = (text: string) => translator.text(locale, phrases?.get(text) ?? text);
  const body: ErrorResponse['body'] = { ...answer.body, message: say(answer.body.message) };
  if (Array.isArray(answer.body.errors)) body.errors = (answer.body.errors as FieldError[]).map((e) => ({ ...e, message: say(e.message) }));
  return { ...answer, body };
}
