/**
 * The view's shared parts: the core in a context (components read state and dispatch events,
 * nothing else touches the state), links that route, and form fields with inline errors.
 */
import { createContext, type ComponentChildren, type InputHTMLAttributes } from 'preact';
import { useContext } from 'preact/hooks';
import type { EventVector } from '../core.js';
import type { Router } from '../shell/features.js';
import type { AppState, Route } from '../shell/state.js';

export interface AppContext {
  state: AppState;
  dispatch: (event: EventVector) => void;
  router: Router;
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

/** true for a plain left click: the app routes it; a modified click opens the URL as usual */
export function plainClick(e: MouseEvent): boolean {
  return e.button === 0 && !e.metaKey && !e.ctrlKey && !e.shiftKey && !e.altKey;
}

/** A link to a route: `to` a route without parameters, or `path` for one with them. */
export function Link({ to, path, children, id, class: className }: { to: Route; path?: string; children: ComponentChildren; id?: string; class?: string }) {
  const { state, dispatch, router } = useApp();
  const href = path ?? router.pathOf(to);
  const onClick = (e: MouseEvent) => {
    if (!plainClick(e)) return;
    e.preventDefault();
    dispatch(['router/navigate', { route: to, path }]);
  };
  const current = state.route === to && (!path || typeof location === 'undefined' || location.pathname + location.search === path);
  return <a id={id} class={className} href={href} data-route={to} aria-current={current ? 'page' : undefined} onClick={onClick}>{children}</a>;
}

/** A form that hands its fields to `onSubmit`; keyed by its success count, so a success clears it. */
export function Form({ id, onSubmit, children }: { id: string; onSubmit: (fields: Record<string, string>) => void; children: ComponentChildren }) {
  const { state } = useApp();
  const resets = state.formResets?.[id] ?? 0;
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
export function Field({ form, name, label, ...input }: { form: string; name: string; label: string } & InputProps) {
  const { state } = useApp();
  const id = `${form}-${name}`;
  const error = state.fieldErrors?.[form]?.[name];
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
