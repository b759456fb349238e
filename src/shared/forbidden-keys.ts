/**
 * Map keys refused in every format (JSON, EDN, Transit, form bodies, query strings), at any
 * depth, after decoding, escapes included: assigning them to a plain object can reach the
 * prototype chain, and no API field is called so.
 */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);
