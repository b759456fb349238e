/**
 * The client, composed: the list of features, and the router made of their routes. Adding a
 * page is a feature folder (its events, pages and `feature.ts`) and one line in FEATURES;
 * docs/client.md walks through it.
 */
import { account } from './account/feature.js';
import { admin } from './admin/feature.js';
import { apiKeys } from './api-keys/feature.js';
import { assistants } from './assistants/feature.js';
import { audit } from './audit/feature.js';
import { billing } from './billing/feature.js';
import type { EventCore } from './core.js';
import { languages } from './languages/feature.js';
import { notifications } from './notifications/feature.js';
import { oauth } from './oauth/feature.js';
import { oidc } from './oidc/feature.js';
import { orgs } from './orgs/feature.js';
import { site } from './site/feature.js';
import { sso } from './sso/feature.js';
import { registerShell, type ShellHttp, type ShellOptions } from './shell/events.js';
import { createRouter, type BrowserIo, type Feature } from './shell/features.js';
import type { AppState } from './shell/state.js';
import { usage } from './usage/feature.js';
import { webhooks } from './webhooks/feature.js';

export type { Account, AppState, Route } from './shell/state.js';

export const FEATURES: readonly Feature[] = [
  site,
  account,
  orgs,
  apiKeys,
  webhooks,
  audit,
  billing,
  usage,
  oidc,
  sso,
  admin,
  oauth,
  assistants,
  notifications,
  languages,
];

/** the route of a path no feature knows: the site's 404 page */
const FALLBACK = 'not-found';

export const router = createRouter(
  FEATURES.flatMap((f) => f.routes ?? []),
  FALLBACK,
);

/** The route of a location's path (no query); a trailing slash is ignored; unknown paths: `not-found`. */
export const routeOf = (path: string) => router.routeOf(path);

export const SHELL: ShellOptions = {
  router,
  home: 'account',
  logIn: 'log-in',
  forgetOnLogOut: FEATURES.flatMap((f) => f.forgetOnLogOut ?? []),
  logInInPlace: FEATURES.flatMap((f) => (f.routes ?? []).filter((r) => r.logInInPlace).map((r) => r.name)),
};

/** Registers the shell's events on a core (the features' own: {@link registerFeatures}); `navigate` changes the browser's location. */
export function registerApp(core: EventCore<AppState>, http: ShellHttp, navigate: (path: string) => void): void {
  registerShell(core, http, navigate, SHELL);
}

/** Registers every feature's events, then runs their start-up events. */
export function registerFeatures(core: EventCore<AppState>, io: BrowserIo): void {
  for (const f of FEATURES) f.register?.(core, io);
  for (const f of FEATURES) for (const event of f.init?.(io) ?? []) core.dispatchSync(event);
}
