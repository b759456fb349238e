/** Content negotiation between the body codecs (server side). */
import Negotiator from 'negotiator';
import { FORMATS, json, type Format } from '../shared/codecs.js';
import { ownCopy } from '../shared/memo.js';

export { DecodeError, edn, FORMATS, json, transitJson, type Format } from '../shared/codecs.js';

/** Forms: decoded into flat text fields (pipeline.ts), the one request format besides the three */
export const FORM_MIME = 'application/x-www-form-urlencoded';

/**
 * Decoded form bodies: the only bodies whose values are coerced to their schema's types (a form
 * field is text whatever it means); JSON, EDN and Transit bodies are taken as typed. Marked by
 * the pipeline, read by every validator of a body (a route's, a query kind's parameters).
 */
const formBodies = new WeakSet<object>();
export const markFormBody = (fields: object): void => {
  formBodies.add(fields);
};
export const isFormBody = (body: unknown): boolean => body !== null && typeof body === 'object' && formBodies.has(body);

const BY_MIME = new Map(FORMATS.map((f) => [f.mime, f]));
const MIMES = FORMATS.map((f) => f.mime);

const negotiated = new Map<string, Format>();
// a browser's Accept is about 140 characters
const MAX_ACCEPT_LENGTH = 256;

/** The response format for an `Accept` header (q-values honoured); JSON when nothing usable. */
export function negotiateResponseFormat(accept: string | undefined): Format {
  if (!accept) return json;
  // clients send few distinct Accept values: remember the answers (bounded in count and in
  // length, like every process-lifetime cache fed by requests; see memo.ts)
  let format = negotiated.get(accept);
  if (!format) {
    const chosen = new Negotiator({ headers: { accept } }).mediaType(MIMES);
    format = (chosen && BY_MIME.get(chosen)) || json;
    if (accept.length <= MAX_ACCEPT_LENGTH) {
      if (negotiated.size >= 500) negotiated.clear();
      negotiated.set(ownCopy(accept), format);
    }
  }
  return format;
}
