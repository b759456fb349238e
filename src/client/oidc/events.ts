/**
 * Sign-in with providers in the client: the providers' buttons (log-in and sign-up pages), the
 * callback's error codes shown as sentences, and the account page's sign-in methods (linked
 * identities, unlink, "Link <provider>"). The start is a plain navigation to
 * `/api/auth/oauth/<id>/start`; a link asks the server for the provider's URL first (it needs the
 * access token), then navigates there. See docs/oidc.md.
 */
import type { AppState, Route } from '../shell/state.js';
import type { EventCore } from '../core.js';
import { t } from '../i18n/words.js';

export interface AuthProvider {
  id: string;
  name: string;
}

export interface Identity {
  id: string;
  provider: string;
  email: string | null;
  'created-at': string;
  'last-used-at': string | null;
}

export interface OidcState {
  /** the configured providers; undefined until loaded */
  providers?: AuthProvider[];
  /** the account's identities and whether it has a password; undefined until loaded */
  signInMethods?: { identities: Identity[]; hasPassword: boolean };
  /** identities whose unlink is under way */
  unlinking?: string[];
  /** a callback's outcome, from the URL (`?error=…&provider=…`), shown on the page it landed on */
  oauthNotice?: { route: Route; kind: 'error' | 'linked'; code: string; provider: string };
}

declare module '../shell/state.js' {
  interface AppState extends OidcState {}
}

export interface OidcIo {
  /** leaves the app for a URL (the provider's authorization page) */
  assign: (url: string) => void;
  /** replaces the current history entry's URL (the notice's query leaves the address bar) */
  replaceUrl: (path: string) => void;
}

/** The page's hidden field with the providers as JSON (src/oidc/schemas.ts, AUTH_PROVIDERS_FIELD). */
export const AUTH_PROVIDERS_FIELD = '__auth-providers';

/** The providers the server wrote into the page (the field's value); undefined when it wrote none or garbage. */
export function providersInPage(field: string | undefined): AuthProvider[] | undefined {
  if (field === undefined) return undefined;
  try {
    const parsed = JSON.parse(field) as unknown;
    return Array.isArray(parsed) ? parsed.filter((p): p is AuthProvider => typeof p?.id === 'string' && typeof p?.name === 'string') : undefined;
  } catch {
    return undefined;
  }
}

/** Where the server's callback lands (src/oidc/routes.ts): the notice's query leaves these paths. */
const LANDING_PATHS: Record<string, string> = { 'log-in': '/log-in', account: '/account' };

/** The start of a sign-in with a provider: a navigation, not a request. */
export const startPath = (providerId: string) => `/api/auth/oauth/${encodeURIComponent(providerId)}/start`;

const MESSAGES: Record<string, (provider: string) => string> = {
  'access-denied': (p) => t('You cancelled signing in with {provider}.', { provider: p }),
  'provider-error': (p) => t('{provider} refused the sign-in. Please try again.', { provider: p }),
  'invalid-state': () => t('The sign-in took too long or was started in another tab. Please try again.'),
  'sign-in-failed': (p) => t('Signing in with {provider} failed. Please try again.', { provider: p }),
  'second-factor-required': () => t('This account uses two-factor authentication: sign in with your password and code, or with a passkey.'),
  'account-locked': () => t('This account is locked. Contact support.'),
  'provider-unavailable': (p) => t('{provider} cannot be reached right now. Please try again in a moment.', { provider: p }),
  'email-not-verified': (p) =>
    t('{provider} did not confirm that your email address is verified. Verify it at {provider}, or sign up with a password.', { provider: p }),
  'email-in-use': (p) =>
    t(
      'An account with this email exists but its address is not verified yet. Log in with your password, verify the address (the link we emailed), then link {provider} from your account page.',
      { provider: p },
    ),
  'account-not-verified': (p) => t('Verify your email address first (the link we emailed), then link {provider}.', { provider: p }),
  'identity-in-use': (p) => t('This {provider} account is already linked to another account.', { provider: p }),
  'session-ended': (p) => t('Your session ended before {provider} answered. Log in and try again.', { provider: p }),
  'rate-limited': () => t('Too many sign-ups from your network. Please try again later.'),
  'server-error': () => t('Something went wrong while signing you in. Please try again.'),
  // the SAML sign-on's answers (src/sso/): the reason is in the server's log, not the URL
  'sso-failed': () =>
    t("Single sign-on failed: your identity provider's answer could not be accepted. Try again, or ask your administrator (the reason is in the log)."),
  'seat-limit': () =>
    t(
      "Your organization's plan has no free seat for a new member, so single sign-on could not add you. Ask an administrator to upgrade the plan or free a seat.",
    ),
  'sso-required': () => t('Your organization requires single sign-on: use "Sign in with SSO" with your work email.'),
};

/** The sentence for a callback's error code. */
export function oauthErrorMessage(code: string, providerName: string): string {
  return (MESSAGES[code] ?? MESSAGES['server-error'])(providerName);
}

/** The name of a provider for sentences: its button text when known, else its id. */
export function providerName(state: Pick<OidcState, 'providers'>, id: string): string {
  return state.providers?.find((p) => p.id === id)?.name ?? id;
}

/** The callback's outcome in a landing URL's query, if any. */
export function noticeOf(route: Route, search: string): OidcState['oauthNotice'] {
  const query = new URLSearchParams(search);
  const error = query.get('error');
  const provider = query.get('provider') ?? '';
  if (error && (route === 'log-in' || route === 'account')) return { route, kind: 'error', code: error, provider };
  const linked = query.get('linked');
  if (linked && route === 'account') return { route, kind: 'linked', code: 'linked', provider: linked };
  return undefined;
}

export function registerOidc(core: EventCore<AppState>, io: OidcIo): void {
  core.regFx('location/assign', (url: string) => io.assign(url));
  core.regFx('oidc/replace-url', (path: string) => io.replaceUrl(path));

  core
    .regEvent('oidc/page-enter', ({ state }, [, route, search]) => {
      const r = route as Route;
      const notice = noticeOf(r, String(search ?? ''));
      const signedIn = Boolean(state.token);
      const events: Array<[string, ...unknown[]]> = [];
      if ((r === 'log-in' || r === 'sign-up' || r === 'account' || r === 'security') && !state.providers) events.push(['providers/load']);
      if (r === 'security' && signedIn) events.push(['identities/load']);
      return {
        // a notice belongs to the page it landed on; the query leaves the URL so a reload does not repeat it
        db: { ...state, oauthNotice: notice ?? (state.oauthNotice?.route === r ? state.oauthNotice : undefined) },
        ...(notice ? { 'oidc/replace-url': LANDING_PATHS[r] } : {}),
        ...(events.length ? { dispatchN: events } : {}),
      };
    })
    .regEvent('providers/load', () => ({
      'http/api': { url: 'auth/providers', successPath: ['providers'], onSuccess: ['providers/loaded'], onFailure: ['providers/loaded', []] },
    }))
    .regEvent('providers/loaded', ({ state }, [, providers]) => ({ db: { ...state, providers: (providers as AuthProvider[] | undefined) ?? [] } }))
    .regEvent('oidc/dismiss-notice', ({ state }) => ({ db: { ...state, oauthNotice: undefined } }))

    .regEvent('identities/load', () => ({
      'http/auth-api': { url: 'account/identities', onSuccess: ['identities/loaded'], onFailure: ['request/failed'] },
    }))
    .regEvent('identities/loaded', ({ state }, [, body]) => {
      const b = body as { identities: Identity[]; 'has-password': boolean };
      return { db: { ...state, signInMethods: { identities: b.identities, hasPassword: b['has-password'] } } };
    })
    .regEvent('identities/unlink', ({ state }, [, id]) => ({
      db: { ...state, unlinking: [...(state.unlinking ?? []), id as string] },
      'http/auth-api': {
        url: `account/identities/${encodeURIComponent(id as string)}`,
        method: 'delete',
        body: {},
        onSuccess: ['identities/unlinked', id],
        onFailureN: [['request/failed'], ['identities/unlink-failed', id]],
      },
    }))
    .regEvent('identities/unlinked', ({ state }, [, id]) => ({
      db: {
        ...state,
        unlinking: state.unlinking?.filter((u) => u !== id),
        signInMethods: state.signInMethods && { ...state.signInMethods, identities: state.signInMethods.identities.filter((i) => i.id !== id) },
      },
      dispatch: ['toast/info', { message: t('Unlinked') }],
    }))
    .regEvent('identities/unlink-failed', ({ state }, [, id]) => ({ db: { ...state, unlinking: state.unlinking?.filter((u) => u !== id) } }))
    // the server keeps the flow's secrets in a cookie and answers the provider's URL
    .regEvent('identities/link', ({ state }, [, provider, password]) => ({
      db: { ...state, busy: true },
      'http/auth-api': {
        url: `/api/auth/oauth/${encodeURIComponent(provider as string)}/link`,
        method: 'post',
        body: password ? { password } : {},
        successPath: ['url'],
        onSuccess: ['identities/go-to-provider'],
        onFailureN: [['request/failed'], ['app/idle']],
      },
    }))
    .regEvent('identities/go-to-provider', (_ctx, [, url]) => ({ 'location/assign': url as string }));
}
