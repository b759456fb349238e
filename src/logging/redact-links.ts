/**
 * Secrets inside text, where key-name redaction (redact.ts) cannot see them because the whole
 * thing is one string value (a message, an error, a `Referer`): links with secrets in their
 * query (emailed action links `/verify-email?token=…`, OAuth callbacks `?code=…`, signed URLs
 * `?key=…`) and API keys (`sk_…`, ours and any other service's). Every string that reaches the
 * log passes through {@link redactText}.
 */
/** What a redacted value is replaced by (the specification's text). */
export const REDACTED = '[REDACTED]';

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

// `sk_<prefix>_<rest>` (ours; Stripe's `sk_live_…`): the prefix stays, it names the key and is not
// secret; `sk_` and 16 or more key characters without a second underscore: all of it
const API_KEY = /\bsk_(?:([0-9A-Za-z]{1,16})_[0-9A-Za-z_-]+|[0-9A-Za-z-]{16,}[0-9A-Za-z_-]*)/g;

/**
 * Replaces the secret part of every API key in `text` (`sk_<prefix>_…`) with `[REDACTED]`.
 *
 * @example
 * redactApiKeys('Bearer sk_AbCd1234_s3cr3t')
 * // => 'Bearer sk_AbCd1234_[REDACTED]'
 */
export function redactApiKeys(text: string): string {
  if (!text.includes('sk_')) return text;
  return text.replace(API_KEY, (_match, prefix: string | undefined) => (prefix ? `sk_${prefix}_${REDACTED}` : `sk_${REDACTED}`));
}

/** True when `text` may hold a secret {@link redactText} removes: the cheap test before it. */
export function mayHoldSecret(text: string): boolean {
  return text.includes('sk_') || HINT.test(text);
}

/** Link tokens and API keys in `text` replaced with `[REDACTED]`. */
export function redactText(text: string): string {
  return redactApiKeys(redactLinkTokens(text));
}
