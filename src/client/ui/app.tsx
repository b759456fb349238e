/**
 * The view's context: the core's state and dispatch, and the router (components read state and
 * dispatch events, nothing else touches the state); links that route.
 */
import { createContext, type ComponentChildren } from 'preact';
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
  return (
    <a id={id} class={className} href={href} data-route={to} aria-current={current ? 'page' : undefined} onClick={onClick}>
      {children}
    </a>
  );
}
