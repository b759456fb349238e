/**
 * Links with secrets in their query: emailed action links (`/verify-email?token=…`), OAuth
 * callbacks (`?code=…`), signed URLs (`?key=…`). Key-name redaction (redact.ts) cannot see
 * them when the whole URL is one string value (a message, an error, a `Referer`), so any
 * string that reaches the log passes through {@link redactLinkTokens} as well.
 */
import { REDACTED } from './redact.js';

// A parameter named token, code or key, or ending in _token / -token / _key / -key
// (access_token, id_token, api_key), after `?`, `&`, `&amp;` (HTML), `#` (OAuth fragments),
// or their percent-encoded forms (a link inside another link's `redirect=`). The value runs
// to the next separator.
const PARAM = /((?:[?&#;]|%3F|%26|%23)(?:[a-z0-9]*[_-])?(?:token|code|key)(?:=|%3D))((?:(?!%26|%23)[^&#\s"'<>\\])+)/gi;
// cheap pre-check: most strings have no such parameter at all
const HINT = /(token|code|key)(=|%3d)/i;

/**
 * Replaces the value of every `token`, `code` or `key` query parameter (and `*_token`,
 * `*_key`) in `text` with `[REDACTED]`; everything else is kept as it was.
 *
 * @example
 * redactLinkTokens('open https://app.example.com/verify-email?token=abc&x=1')
 * // => 'open https://app.example.com/verify-email?token=[REDACTED]&x=1'
 */
export function redactLinkTokens(text: string): string {
  if (!mayHoldLinkToken(text)) return text;
  return text.replace(PARAM, (_match, name: string) => `${name}${REDACTED}`);
}

/** True when `text` may hold a link token: the cheap test before {@link redactLinkTokens}. */
export function mayHoldLinkToken(text: string): boolean {
  return HINT.test(text);
}
