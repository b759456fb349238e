/**
 * How the single sign-on forms (the organization page's and the log-in page's) show a failure:
 * the server's field errors and the refusals about a field beside it, the rest in the shell's alert.
 */
import { errorsByField, type FailureBody, withFormErrors } from '../shell/form-errors.js';
import type { AppState } from '../shell/state.js';

/** The state with `form`'s field errors set (none: cleared), no longer busy. */
export function withErrors(state: AppState, form: string, fields: Record<string, string> | undefined): AppState {
  return { ...withFormErrors(state, form, fields), busy: false };
}

/** The refusals a form shows beside its field (the rest go to the shell's alert). */
const FIELD_REFUSALS = new Set(['domain-not-verified', 'domain-taken', 'domain-exists', 'too-many-domains', 'too-many-tokens', 'conflict', 'not-found']);

/** A failure as field errors of `form` (`field` for one without a path), or the shell's alert. */
export function failed(state: AppState, form: string, failure: unknown, field: string) {
  const f = failure as FailureBody;
  if (f.type === 'request-coercion' && f.errors?.length) {
    return { db: withErrors(state, form, errorsByField(f.errors, field)) };
  }
  if (f.type && FIELD_REFUSALS.has(f.type)) return { db: withErrors(state, form, { [field]: f.message ?? 'Refused' }) };
  return { db: { ...state, busy: false }, dispatch: ['request/failed', failure] };
}
