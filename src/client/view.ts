/** Rendering: state -> DOM. Forms dispatch events; nothing else touches the state. */
import type { EventCore } from './core.js';
import type { AppState } from './app.js';

const esc = (s: unknown) => String(s ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function field(name: string, label: string, type = 'text', extra = ''): string {
  return `<label>${label}<input name="${name}" type="${type}" ${extra}></label>`;
}

function page(state: AppState): string {
  if (!state.ready) return '<p class="muted">Loading…</p>';
  switch (state.route) {
    case 'log-in':
      return `<h1>Log in</h1>
        <form id="log-in">${field('email', 'Email', 'email', 'required autocomplete="username"')}${field('password', 'Password', 'password', 'required autocomplete="current-password"')}
        <button>Log in</button></form>
        <p>No account? <a href="/sign-up" data-route="sign-up">Sign up</a></p>`;
    case 'sign-up':
      return `<h1>Sign up</h1>
        <form id="sign-up">${field('name', 'Name', 'text', 'maxlength="100"')}${field('email', 'Email', 'email', 'required autocomplete="username"')}
        ${field('password', 'Password (8+ characters)', 'password', 'required minlength="8" maxlength="128" autocomplete="new-password"')}
        ${field('confirm-password', 'Confirm password', 'password', 'required autocomplete="new-password"')}
        <button>Create account</button></form>
        <p>Have an account? <a href="/log-in" data-route="log-in">Log in</a></p>`;
    case 'account': {
      const a = state.account;
      if (!a) return '<p class="muted">Loading account…</p>';
      const s = a.subscription;
      return `<h1>Your account</h1>
        <dl id="account">
          <dt>Email</dt><dd data-field="email">${esc(a.email)}</dd>
          <dt>Name</dt><dd data-field="name">${esc(a.name ?? '—')}</dd>
          <dt>Member since</dt><dd>${esc(new Date(a['created-at']).toLocaleDateString())}</dd>
          <dt>Subscription</dt><dd data-field="subscription">${esc(s.status)}${s.plan ? ` (${esc(s.plan)})` : ''}${s['current-period-end'] ? `, renews ${esc(new Date(s['current-period-end']).toLocaleDateString())}` : ''}</dd>
        </dl>
        <button id="reload">Reload</button> <button id="log-out" class="secondary">Log out</button>`;
    }
  }
}

const rendered = new WeakMap<HTMLElement, string>();

/**
 * Renders the state. A page is rebuilt only when what it shows changes (route, readiness,
 * account), so typed input survives busy flags and toasts; those are patched in place.
 */
export function render(root: HTMLElement, core: EventCore<AppState>): void {
  const state = core.state;
  const key = JSON.stringify([state.route, state.ready, state.account ?? null]);
  if (rendered.get(root) !== key) {
    rendered.set(root, key);
    root.innerHTML = `<main>${page(state)}</main><div class="toasts" aria-live="polite"></div>`;
    bind(root, core);
  }
  root.querySelectorAll<HTMLButtonElement>('form button').forEach((b) => { b.disabled = state.busy; });
  const toasts = root.querySelector('.toasts')!;
  const html = state.toasts.map((t) => `<div class="toast" role="alert" data-toast="${t.id}">${esc(t.message)}</div>`).join('');
  if (toasts.innerHTML !== html) {
    toasts.innerHTML = html;
    toasts.querySelectorAll<HTMLElement>('[data-toast]').forEach((t) => t.addEventListener('click', () => core.dispatch(['toast/dismiss', Number(t.dataset.toast)])));
  }
}

function bind(root: HTMLElement, core: EventCore<AppState>): void {
  const formData = (form: HTMLFormElement) => Object.fromEntries([...new FormData(form)].filter(([, v]) => v !== '').map(([k, v]) => [k, String(v)]));
  root.querySelector<HTMLFormElement>('#log-in')?.addEventListener('submit', (e) => {
    e.preventDefault();
    core.dispatch(['log-in/submit', formData(e.target as HTMLFormElement)]);
  });
  root.querySelector<HTMLFormElement>('#sign-up')?.addEventListener('submit', (e) => {
    e.preventDefault();
    core.dispatch(['sign-up/submit', formData(e.target as HTMLFormElement)]);
  });
  root.querySelector('#reload')?.addEventListener('click', () => core.dispatch(['account/load']));
  root.querySelector('#log-out')?.addEventListener('click', () => core.dispatch(['log-out']));
  root.querySelectorAll<HTMLAnchorElement>('a[data-route]').forEach((a) => a.addEventListener('click', (e) => {
    e.preventDefault();
    core.dispatch(['router/navigate', { route: a.dataset.route }]);
  }));
}
