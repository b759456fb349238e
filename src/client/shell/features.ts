/**
 * What a feature of the client is, and the router made of the features' routes. A feature
 * folder (account, orgs, billing, ...) exports one {@link Feature}: its routes (path patterns
 * and pages), its events, an event run on every page entry, and what it adds to the shell.
 * `src/client/app.ts` lists the features; this module imports none of them.
 */
import type { IconNode } from 'lucide';
import type { ComponentType } from 'preact';
import type { EventCore, EventVector } from '../core.js';
import type { Locale } from '../../shared/locales.js';
import type { AppState, Route } from './state.js';

/** Who may open a route. */
export type Access =
  /** anyone */
  | 'public'
  /** a signed-in account; a visitor without a session is sent to log in */
  | 'signed-in'
  /** a visitor's page (log-in, sign-up): a log-in there moves on to the signed-in home */
  | 'entry';

export interface RouteDef {
  name: Route;
  /** a path pattern: `/orgs/:id/audit-log` (`:name` matches one segment) */
  path: string;
  page: ComponentType;
  access: Access;
  /** the document's title (before the product's name) */
  title: string;
  /** the page shows the log-in in place when signed out (the consent page): a log-out there keeps it */
  logInInPlace?: boolean;
}

/** A link in the signed-in shell's side navigation. */
export interface NavItem {
  /** `main`: the account's own pages; `org`: the current organization's; `settings`: the account's settings; `admin`: the operator's console */
  section: 'main' | 'org' | 'settings' | 'admin';
  route: Route;
  label: string;
  /** the element id (test hooks: `nav-orgs`) */
  id?: string;
  icon?: IconNode;
  /**
   * the link's path for the state and the location's path (`at`: an organization's page names its
   * organization); undefined hides the link (no organization, not an admin)
   */
  path?: (state: AppState, at: string) => string | undefined;
  /** orders the section (low first) */
  order: number;
}

/** The browser's capabilities the features' effects use; main.ts gives the real ones, tests record them. */
export interface BrowserIo {
  /** pushes a history entry for the path */
  navigate(path: string): void;
  /** replaces the current history entry's URL (a token leaves the address bar and history) */
  replaceUrl(path: string): void;
  /** leaves the app for another page (Stripe, a sign-in provider) */
  assign(url: string): void;
  /** offers a file to the user (`text`: its content, or a Blob of it) */
  download(file: { filename: string; type: string; text: string | Blob }): void;
  /** localStorage, or nothing kept when storage is off */
  storage: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;
  /** writes to the clipboard */
  copy(text: string): Promise<void>;
  /** a hidden field the server wrote into the page (`<input type=hidden id=…>`): configuration read without a request */
  pageField(id: string): string | undefined;
  /** fetches a locale's words and puts them in use (the document's `lang` and `dir` follow) */
  loadLocale(locale: Locale): Promise<void>;
  /** the browser's preferred language among the product's (navigator.languages), else English */
  browserLocale(): Locale;
  /** keeps the visitor's language in the `locale` cookie, or forgets it (null) */
  rememberLocale(locale: Locale | null): void;
  /** the WebAuthn ceremonies: JSON options in, the credential's JSON out */
  webauthn: { register(options: unknown): Promise<unknown>; authenticate(options: unknown): Promise<unknown> };
}

export interface Feature {
  /** the folder's name */
  id: string;
  routes?: RouteDef[];
  /** registers the feature's events and effects */
  register?(core: EventCore<AppState>, io: BrowserIo): void;
  /** events run once after every feature registered, before the first render */
  init?(io: BrowserIo): EventVector[];
  /** run after every page entry (route change, or the start-up session check answered) as `[event, route, search]` */
  enter?: string;
  /** links the feature adds to the side navigation */
  nav?: NavItem[];
  /** parts the feature adds to the shell's header (the organization switcher) */
  header?: ComponentType;
  /** a control the feature adds beside the theme toggle and the account menu (the notifications bell) */
  headerTools?: ComponentType;
  /** a control the feature adds to the public pages' header, beside the theme toggle (the language menu) */
  publicTools?: ComponentType;
  /** a banner above every page of a session, rendering nothing when it has nothing to say (an impersonation's) */
  banner?: ComponentType;
  /** state fields (of the feature's slice) a log-out forgets */
  forgetOnLogOut?: string[];
}

export interface Match {
  route: Route;
  params: Record<string, string>;
}

export interface Router {
  readonly routes: readonly RouteDef[];
  /** the route of a location's path (no query); a trailing slash is ignored */
  match(path: string): Match;
  /** {@link match}'s route */
  routeOf(path: string): Route;
  /** a route's path with its parameters filled in */
  pathOf(route: Route, params?: Record<string, string>): string;
  def(route: Route): RouteDef | undefined;
}

/** `/orgs/:id` -> a RegExp with one group per parameter, and the parameters' names */
function compile(pattern: string): { re: RegExp; names: string[] } {
  const names: string[] = [];
  const source = pattern
    .split('/')
    .map((segment) => {
      if (!segment.startsWith(':')) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(segment.slice(1));
      return '([^/]+)';
    })
    .join('/');
  return { re: new RegExp(`^${source}$`), names };
}

/**
 * The router of a list of routes, in the order given (the first match wins); `fallback` is the
 * route of a path no route matches.
 */
export function createRouter(routes: readonly RouteDef[], fallback: Route): Router {
  const compiled = routes.map((r) => ({ def: r, ...compile(r.path) }));
  const byName = new Map(routes.map((r) => [r.name, r]));
  const match = (path: string): Match => {
    const clean = path.length > 1 ? path.replace(/\/+$/, '') : path;
    for (const c of compiled) {
      const m = c.re.exec(clean);
      if (!m) continue;
      const params: Record<string, string> = {};
      c.names.forEach((n, i) => {
        params[n] = decodeURIComponent(m[i + 1]);
      });
      return { route: c.def.name, params };
    }
    return { route: fallback, params: {} };
  };
  return {
    routes,
    match,
    routeOf: (path) => match(path).route,
    pathOf(route, params = {}) {
      const def = byName.get(route);
      if (!def) throw new Error(`No route ${route}`);
      return def.path.replace(/:([A-Za-z][\w-]*)/g, (_, n: string) => encodeURIComponent(params[n] ?? ''));
    },
    def: (route) => byName.get(route),
  };
}
