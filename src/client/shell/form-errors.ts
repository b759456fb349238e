/**
 * A form's field errors, the shell's `fieldErrors[<form id>]` that the `ui/field.tsx` fields show
 * beside themselves: the failure body a refused request carries, the field a server error names,
 * and the state with a form's errors set or cleared. The features' events share these.
 */
import type { AppState } from './state.js';

/** The body of a refused request: its type, its message, and for a `request-coercion` the fields' errors. */
export interface FailureBody {
  type?: string;
  message?: string;
  errors?: Array<{ path: string; message: string }>;
}

/** `/events/2` -> `events`: the field a server error names (nested paths name their first segment; none: `fallback`). */
export const fieldOf = (path: string, fallback = 'form') => path.replace(/^\//, '').split('/')[0] || fallback;

/** A refused request's errors as `{field: message}`, each field's first (`fallback` for a path naming none). */
export function errorsByField(errors: FailureBody['errors'], fallback?: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const e of errors ?? []) fields[fieldOf(e.path, fallback)] ??= e.message;
  return fields;
}

/** The state with `form`'s field errors set (none: cleared). */
export function withFormErrors(state: AppState, form: string, fields: Record<string, string> | undefined): AppState {
  const fieldErrors = { ...state.fieldErrors };
  if (fields) fieldErrors[form] = fields;
  else delete fieldErrors[form];
  return { ...state, fieldErrors };
}
