/** Browser entry: one core, the app's events, rendering on every state change, history routing. */
import { hasSessionHint, registerApp, routeOf, type AppState } from './app.js';
import { EventCore } from './core.js';
import { render } from './view.js';
import './style.css';

const root = document.getElementById('app')!;
const core = new EventCore<AppState>({ route: routeOf(location.pathname), toasts: [], busy: false, ready: false });

registerApp(core, {}, (path) => {
  if (location.pathname !== path) history.pushState(null, '', path);
});
core.subscribe(() => render(root, core));
window.addEventListener('popstate', () => core.dispatch(['router/changed', location.pathname]));
render(root, core);
core.dispatch(['app/start', { sessionHint: hasSessionHint(document.cookie) }]);
