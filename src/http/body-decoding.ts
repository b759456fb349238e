/**
 * Step 3 of the pipeline (pipeline.ts): request bodies decoded by their format (our three and
 * forms, SCIM's JSON) into `body-params`; raw bytes for the routes that ask for them.
 */
import { parse as parseQueryString } from 'node:querystring';
import type { FastifyInstance } from 'fastify';
import { forbiddenKey, MAY_HOLD_NUL, nulPath } from '../shared/codecs.js';
import { msg } from '../i18n/messages.js';
import { FORBIDDEN_KEYS } from '../shared/forbidden-keys.js';
import { requestCoercion } from './errors.js';
import { DecodeError, FORM_MIME, FORMATS, json, markFormBody } from './formats.js';
import { routeDataOf } from './route-data.js';
import type { RouteConfig } from './routes.js';

/** SCIM's media type (RFC 7644 §3.1): JSON, decoded as JSON (the directory sync routes, src/scim/) */
const SCIM_MIME = 'application/scim+json';

/** Form keys are flat (`user[password]` is one key); the prototype keys are refused like in every format. */
function decodeForm(text: string): Record<string, string | string[]> {
  const fields = parseQueryString(text, '&', '=', { maxKeys: 0 });
  for (const key in fields) if (FORBIDDEN_KEYS.has(key)) throw forbiddenKey(key);
  markFormBody(fields);
  return fields as Record<string, string | string[]>;
}

/** A form's NUL arrives percent-encoded (`%00`) or raw. */
const FORM_MAY_HOLD_NUL = /%00|\u0000/;

/** 400 for a value holding U+0000, which PostgreSQL cannot store */
export const nulRefused = (where: 'body' | 'query' | 'path', path: string) =>
  requestCoercion(where, [{ path, message: 'must not contain the NUL character (U+0000)' }]);

/** Installs the decoders on the root instance (every other content type is 415). */
export function installBodyDecoders(app: FastifyInstance): void {
  // fatal: invalid UTF-8 is a malformed body, not text with replacement characters
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  // A request for no route is answered 404 without decoding its body: its bytes are read
  // (within the body limit) and dropped, so nothing of it reaches a decoder, the redactor or
  // their caches.
  app.removeAllContentTypeParsers();
  const decoders: [string, (text: string) => unknown][] = [
    ...FORMATS.map((f) => [f.mime, f.decode] as [string, (text: string) => unknown]),
    [FORM_MIME, decodeForm],
    [SCIM_MIME, json.decode],
  ];
  for (const [mime, decode] of decoders) {
    app.addContentTypeParser(mime, { parseAs: 'buffer' }, (request, body, done) => {
      if (request.is404) return done(null, undefined);
      if ((routeDataOf(request) as Partial<RouteConfig>).rawBody) return done(null, body);
      let value: unknown;
      try {
        const text = utf8.decode(body as Buffer);
        value = decode(text);
        // PostgreSQL stores no U+0000: refused here, in every format, rather than a 500 later
        const at = (mime === FORM_MIME ? FORM_MAY_HOLD_NUL : MAY_HOLD_NUL).test(text) ? nulPath(value) : undefined;
        if (at !== undefined) return done(nulRefused('body', at), undefined);
      } catch (err) {
        return done(err instanceof TypeError ? new DecodeError(msg('Body is not valid UTF-8')) : (err as Error), undefined);
      }
      done(null, value);
    });
  }
}
