/** Content negotiation between the body codecs (server side). */
import Negotiator from 'negotiator';
import { FORMATS, json, type Format } from './codecs.js';

export { DecodeError, edn, FORMATS, json, transitJson, type Format } from './codecs.js';

const BY_MIME = new Map(FORMATS.map((f) => [f.mime, f]));
const MIMES = FORMATS.map((f) => f.mime);

/** The response format for an `Accept` header (q-values honoured); JSON when nothing usable. */
const negotiated = new Map<string, Format>();

export function negotiateResponseFormat(accept: string | undefined): Format {
  if (!accept) return json;
  // clients send few distinct Accept values: remember the answers (bounded)
  let format = negotiated.get(accept);
  if (!format) {
    const chosen = new Negotiator({ headers: { accept } }).mediaType(MIMES);
    format = (chosen && BY_MIME.get(chosen)) || json;
    if (negotiated.size >= 500) negotiated.clear();
    negotiated.set(accept, format);
  }
  return format;
}
