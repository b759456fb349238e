/**
 * The account pages' forms: their ids, the server's field errors as the fields show them, and a
 * form's request started (busy, old errors gone) or done (cleared, its success counted so the
 * form is keyed afresh). The events of account/events.ts use them.
 */
import { errorsByField, type FailureBody } from '../shell/form-errors.js';
import type { AppState } from '../shell/state.js';
import { t } from '../i18n/words.js';

/** The forms whose fields can carry inline errors from the server or from a client check. */
export type FormId =
  | 'forgot-password'
  | 'reset-password'
  | 'settings-name'
  | 'settings-locale'
  | 'change-email'
  | 'change-password'
  | 'delete-account'
  | 'mfa'
  | 'two-factor-enable'
  | 'two-factor-disable'
  | 'passkey-add';

/** The server's field errors as `{field: message}`; the 409 of a taken email belongs to `new-email`. */
export function fieldErrorsOf(form: FormId, failure: FailureBody): Record<string, string> {
  const fields = errorsByField(failure.errors);
  if (form === 'change-email' && failure.type === 'conflict') fields['new-email'] ??= failure.message ?? t('That email is taken');
  return fields;
}

/** The state with `form`'s field errors set (the set `{}` clears them). */
export function withFieldErrors(state: AppState, form: FormId, fields: Record<string, string>): AppState {
  return { ...state, fieldErrors: { ...state.fieldErrors, [form]: fields } };
}

/** Ends a form's request that succeeded: not busy, its field errors gone, its success counted (the form is keyed by it, so it clears). */
export function formDone(state: AppState, form: FormId): AppState {
  const fieldErrors = { ...state.fieldErrors };
  delete fieldErrors[form];
  return { ...state, busy: false, fieldErrors, formResets: { ...state.formResets, [form]: (state.formResets?.[form] ?? 0) + 1 } };
}

/** Starts a form's request: busy, its old field errors gone. */
export function submitting(state: AppState, form: FormId): AppState {
  return { ...withFieldErrors(state, form, {}), busy: true };
}
