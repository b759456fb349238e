/**
 * The view's shared parts: the core in a context (components read state and dispatch events,
 * nothing else touches the state), links that route, and form fields with inline errors.
 */
import { createContext, type ComponentChildren, type InputHTMLAttributes } from 'preact';
import { useContext } from 'preact/hooks';
import type { AppState, Route } from './app.js';
import { PATHS } from './app.js';
import type { FormId } from './account/events.js';
import type { EventVector } from './core.js';

export interface AppContext {
  state: AppState;
  dispatch: (event: EventVector) => void;
}

export const App = createContext<AppContext | null>(null);

export function useApp(): AppContext {
  const ctx = useContext(App);
  if (!ctx) throw new Error('useApp outside the app');
  return ctx;
}

/** A form's fields by name, empty ones left out (the server's defaults apply). */
export function formFields(form: HTMLFormElement): Record<string, string> {
  return Object.fromEntries([...new FormData(form)].filter(([, v]) => v !== '').map(([k, v]) => [k, String(v)]));
}

/** A link to a route: a plain click routes in the app, a modified click opens the URL as usual. */
export function Link({ to, children, id }: { to: Route; children: ComponentChildren; id?: string }) {
  const { state, dispatch } = useApp();
  const onClick = (e: MouseEvent) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    dispatch(['router/navigate', { route: to }]);
  };
  return <a id={id} href={PATHS[to]} data-route={to} aria-current={state.route === to ? 'page' : undefined} onClick={onClick}>{children}</a>;
}

/** A form that hands its fields to `onSubmit`; keyed by its success count, so a success clears it. */
export function Form({ id, onSubmit, children }: { id: FormId | 'log-in' | 'sign-up'; onSubmit: (fields: Record<string, string>) => void; children: ComponentChildren }) {
  const { state } = useApp();
  const resets = state.formResets?.[id as FormId] ?? 0;
  return (
    <form
      key={resets}
      id={id}
      aria-busy={state.busy}
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit(formFields(e.currentTarget));
      }}
    >
      {children}
    </form>
  );
}

/** The input attributes the forms use. */
interface InputProps {
  type?: 'text' | 'email' | 'password';
  required?: boolean;
  autoComplete?: string;
  minLength?: number;
  maxLength?: number;
  defaultValue?: string;
  spellcheck?: boolean;
}

/** A labelled input (`#<form>-<name>`) with the server's or the client's message for it below. */
export function Field({ form, name, label, ...input }: { form: FormId | 'log-in' | 'sign-up'; name: string; label: string } & InputProps) {
  const { state } = useApp();
  const id = `${form}-${name}`;
  const error = state.fieldErrors?.[form as FormId]?.[name];
  // Preact types inputs as a union by `type`; a `type` chosen at run time needs the plain attribute map
  const attrs = { id, name, type: 'text', ...input, 'aria-invalid': error ? true : undefined, 'aria-describedby': error ? `${id}-error` : undefined } as InputHTMLAttributes<HTMLInputElement>;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input {...attrs} />
      {error && <small class="field-error" id={`${id}-error`} data-error-for={name}>{error}</small>}
    </div>
  );
}

/** A submit button, disabled while a request is under way. */
export function Submit({ children, danger }: { children: ComponentChildren; danger?: boolean }) {
  const { state } = useApp();
  return <button type="submit" class={danger ? 'danger' : undefined} disabled={state.busy}>{children}</button>;
}
