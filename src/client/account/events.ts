/**
 * The account lifecycle's events: the link pages (verify-email, confirm-email, reset-password),
 * forgot password, settings (name, email, password, export) and account deletion; the sessions
 * page's are in sessions-events.ts. Handlers are pure (state + event -> effects); the two browser
 * effects they need, replacing the URL and offering a download, are given to `registerAccount`
 * so tests can record them.
 */
import type { Account, AppState, Route } from '../shell/state.js';
import type { EventCore } from '../core.js';
import type { FailureBody } from '../shell/form-errors.js';
import { type FormId, fieldErrorsOf, formDone, submitting, withFieldErrors } from './forms.js';
import { msg, t } from '../i18n/words.js';

export type TokenRoute = 'verify-email' | 'confirm-email';

/** The lifecycle pages' part of the app state; every field is absent until a page sets it. */
export interface AccountPagesState {
  /** the outcome of a link page's token */
  tokenPage?: { route: TokenRoute; status: 'checking' | 'done' | 'failed'; message?: string };
  /** the reset token, taken out of the URL when the page opens */
  resetToken?: string;
  /** the forgot-password form was accepted */
  forgotSent?: boolean;
  /** the new address a confirmation was sent to */
  emailChangeSentTo?: string;
}

declare module '../shell/state.js' {
  interface AppState extends AccountPagesState {}
}

export interface AccountIo {
  /** replaces the current history entry's URL (the token leaves the address bar and history) */
  replaceUrl: (path: string) => void;
  /** offers a file to the user */
  download: (file: { filename: string; type: string; text: string }) => void;
}

/** The `token` query parameter of a location's search string. */
export function tokenOf(search: string): string | undefined {
  return new URLSearchParams(search).get('token') || undefined;
}

/** Said when a first proof of the address removed the password set before it (docs/security.md, pre-hijacking). */
export const PASSWORD_REMOVED = msg('Your address is confirmed. A password set on this account before was removed: choose a new one.');

const TOKEN_MESSAGES: Record<TokenRoute, string> = {
  'verify-email': msg('This verification link has no token. Open the link from the email again.'),
  'confirm-email': msg('This confirmation link has no token. Open the link from the email again.'),
};

export function registerAccount(core: EventCore<AppState>, io: AccountIo): void {
  core.regFx('url/replace', (path: string) => io.replaceUrl(path));
  core.regFx('download', (file: { filename: string; type: string; text: string }) => io.download(file));

  core
    // entering a page (after the start-up session check): per-page state is reset, the page's data asked for
    .regEvent('page/enter', ({ state }, [, route, search]) => {
      const r = route as Route;
      const db: AppState = { ...state, fieldErrors: {}, forgotSent: false, emailChangeSentTo: undefined };
      switch (r) {
        case 'verify-email':
        case 'confirm-email':
          return { db, dispatch: ['token-page/open', r, search] };
        case 'reset-password':
          return { db, dispatch: ['reset-password/open', search] };
        case 'email-sign-in':
          return { db, dispatch: ['email-sign-in/open', search] };
        case 'sessions':
          return { db: { ...db, sessions: undefined }, dispatch: ['sessions/load'] };
        default:
          return { db };
      }
    })

    // verify-email and confirm-email: the token is sent once and taken out of the URL
    .regEvent('token-page/open', ({ state }, [, route, search]) => {
      const r = route as TokenRoute;
      const token = tokenOf(String(search ?? ''));
      if (!token) {
        // the page re-entered after the token left the URL keeps its outcome
        if (state.tokenPage?.route === r) return;
        return { db: { ...state, tokenPage: { route: r, status: 'failed', message: t(TOKEN_MESSAGES[r]) } } };
      }
      return {
        db: { ...state, tokenPage: { route: r, status: 'checking' } },
        'http/api': { url: `account/${r}`, method: 'post', body: { token }, onSuccess: ['token-page/done', r], onFailure: ['token-page/failed', r] },
        'url/replace': `/${r}`,
      };
    })
    .regEvent('token-page/done', ({ state }, [, route, answer]) => {
      const { 'password-reset-token': resetToken, ...a } = answer as Account & { 'password-reset-token'?: string };
      const db: AppState = {
        ...state,
        tokenPage: { route: route as TokenRoute, status: 'done' },
        // the signed-in account is the one verified: show its new state at once
        account: state.account && state.account.id === a.id ? a : state.account,
      };
      // this first proof removed a password set before it (maybe by someone else): set one now, as a reset link does
      if (resetToken)
        return {
          db: { ...db, resetToken },
          dispatchN: [
            ['toast/info', { message: t(PASSWORD_REMOVED) }],
            ['router/navigate', { route: 'reset-password' }],
          ],
        };
      return { db };
    })
    .regEvent('token-page/failed', ({ state }, [, route, failure]) => {
      const f = failure as FailureBody;
      const message = f.type === 'invalid-token' ? t('This link is invalid, already used or expired.') : (f.message ?? t('The link could not be checked.'));
      return { db: { ...state, tokenPage: { route: route as TokenRoute, status: 'failed', message } } };
    })

    // forgot and reset password
    .regEvent('forgot-password/submit', ({ state }, [, form]) => ({
      db: submitting(state, 'forgot-password'),
      'http/api': {
        url: 'account/forgot-password',
        method: 'post',
        body: { email: (form as { email?: string }).email ?? '' },
        onSuccess: ['forgot-password/sent'],
        onFailure: ['form/failed', 'forgot-password'],
      },
    }))
    .regEvent('forgot-password/sent', ({ state }) => ({ db: { ...formDone(state, 'forgot-password'), forgotSent: true } }))
    .regEvent('reset-password/open', ({ state }, [, search]) => {
      const token = tokenOf(String(search ?? ''));
      // re-entered without a token (it already left the URL): keep the one taken
      if (!token) return;
      return { db: { ...state, resetToken: token }, 'url/replace': '/reset-password' };
    })
    .regEvent('reset-password/submit', ({ state }, [, form]) => {
      const f = form as { password?: string; 'confirm-password'?: string };
      if (f.password !== f['confirm-password'])
        return { db: withFieldErrors(state, 'reset-password', { 'confirm-password': t('The passwords do not match') }) };
      return {
        db: submitting(state, 'reset-password'),
        'http/api': {
          url: 'account/reset-password',
          method: 'post',
          body: { token: state.resetToken ?? '', password: f.password ?? '' },
          onSuccess: ['reset-password/done'],
          onFailure: ['form/failed', 'reset-password'],
        },
      };
    })
    .regEvent('reset-password/done', ({ state }) => ({
      db: { ...formDone(state, 'reset-password'), resetToken: undefined },
      // a reset ends every session, this browser's too (a first proof's landing page may be signed in)
      dispatchN: [
        ['toast/info', { message: t('Your password was changed. Log in with the new one.') }],
        state.account ? ['auth/logged-out'] : ['router/navigate', { route: 'log-in' }],
      ],
    }))

    // settings
    .regEvent('settings/save-name', ({ state }, [, form]) => ({
      db: submitting(state, 'settings-name'),
      'http/auth-api': {
        url: 'account/me',
        method: 'patch',
        body: { name: ((form as { name?: string }).name ?? '').trim() },
        onSuccess: ['settings/name-saved'],
        onFailure: ['form/failed', 'settings-name'],
      },
    }))
    .regEvent('settings/name-saved', ({ state }, [, account]) => ({
      db: { ...formDone(state, 'settings-name'), account: account as Account },
      dispatch: ['toast/info', { message: t('Name saved') }],
    }))
    .regEvent('settings/save-locale', ({ state }, [, form]) => ({
      db: submitting(state, 'settings-locale'),
      'http/auth-api': {
        url: 'account/me',
        method: 'patch',
        // empty: follow the browser
        body: { locale: (form as { locale?: string }).locale || null },
        onSuccess: ['settings/locale-saved'],
        onFailure: ['form/failed', 'settings-locale'],
      },
    }))
    .regEvent('settings/locale-saved', ({ state }, [, account]) => ({
      db: { ...formDone(state, 'settings-locale'), account: account as Account },
      // the toast once the new words are in, so that it is said in the language just chosen
      dispatch: ['locale/account-changed', ['settings/locale-said']],
      // a new access token carries the new language, which the API's answers follow
      'http/api': { url: 'account/refresh', method: 'post', body: {}, onSuccess: ['auth/logged-in', { quiet: true }], onFailure: ['app/idle'] },
    }))
    .regEvent('settings/locale-said', () => ({ dispatch: ['toast/info', { message: t('Language saved') }] }))
    .regEvent('settings/change-email', ({ state }, [, form]) => {
      const f = form as { password?: string; 'new-email'?: string };
      return {
        db: { ...submitting(state, 'change-email'), emailChangeSentTo: undefined },
        'http/auth-api': {
          url: 'account/change-email',
          method: 'post',
          body: { password: f.password ?? '', 'new-email': f['new-email'] ?? '' },
          onSuccess: ['settings/email-requested', f['new-email']],
          onFailure: ['form/failed', 'change-email'],
        },
      };
    })
    .regEvent('settings/email-requested', ({ state }, [, newEmail]) => ({
      db: { ...formDone(state, 'change-email'), emailChangeSentTo: newEmail as string },
      dispatch: ['toast/info', { message: t('Check your new inbox for a confirmation link') }],
    }))
    .regEvent('settings/change-password', ({ state }, [, form]) => {
      const f = form as { 'current-password'?: string; password?: string; 'confirm-password'?: string };
      if (f.password !== f['confirm-password'])
        return { db: withFieldErrors(state, 'change-password', { 'confirm-password': t('The passwords do not match') }) };
      return {
        db: submitting(state, 'change-password'),
        'http/auth-api': {
          url: 'account/change-password',
          method: 'post',
          body: { 'current-password': f['current-password'] ?? '', password: f.password ?? '' },
          onSuccess: ['settings/password-changed'],
          onFailure: ['form/failed', 'change-password'],
        },
      };
    })
    .regEvent('settings/password-changed', ({ state }) => ({
      db: formDone(state, 'change-password'),
      dispatch: ['toast/info', { message: t('Password changed; your other sessions were ended') }],
    }))

    // the picture: uploaded by the profile's upload control (shell/uploads.ts), which reloads the account; removed here
    .regEvent('avatar/remove', ({ state }) => ({
      db: { ...state, busy: true },
      'http/auth-api': {
        url: 'account/avatar',
        method: 'delete',
        onSuccessN: [['app/idle'], ['account/load'], ['toast/info', { message: t('Picture removed') }]],
        // none to remove (another tab did): the account shows what is there
        onFailureN: [['request/failed'], ['app/idle'], ['account/load']],
      },
    }))

    // export: the JSON the server gives, offered as a file
    .regEvent('account/export', ({ state }) => ({
      db: { ...state, busy: true },
      'http/auth-api': { url: 'account/export', accept: 'json', onSuccess: ['account/exported'], onFailureN: [['request/failed'], ['app/idle']] },
    }))
    .regEvent('account/exported', ({ state }, [, data]) => ({
      db: { ...state, busy: false },
      download: { filename: `account-export-${new Date().toISOString().slice(0, 10)}.json`, type: 'application/json', text: JSON.stringify(data, null, 2) },
    }))

    // deletion: typed confirmation (the account's email) and the password
    .regEvent('account/delete', ({ state }, [, form]) => {
      const f = form as { 'confirm-email'?: string; password?: string };
      const email = state.account?.email ?? '';
      if ((f['confirm-email'] ?? '').trim().toLowerCase() !== email.toLowerCase() || email === '') {
        return { db: withFieldErrors(state, 'delete-account', { 'confirm-email': `Type ${email} to confirm` }) };
      }
      return {
        db: submitting(state, 'delete-account'),
        'http/auth-api': {
          url: 'account/delete',
          method: 'post',
          body: { password: f.password ?? '' },
          onSuccess: ['account/deleted'],
          onFailure: ['form/failed', 'delete-account'],
        },
      };
    })
    .regEvent('account/deleted', ({ state }) => ({
      db: { ...formDone(state, 'delete-account'), token: undefined, account: undefined, sessions: undefined },
      dispatchN: [
        ['toast/info', { message: t('Your account was deleted') }],
        ['router/navigate', { route: 'log-in' }],
      ],
    }))

    // the unverified-account banner
    .regEvent('verification/resend', ({ state }) => ({
      db: { ...state, busy: true },
      'http/auth-api': {
        url: 'account/resend-verification',
        method: 'post',
        body: {},
        onSuccess: ['verification/resent'],
        onFailureN: [['request/failed'], ['app/idle']],
      },
    }))
    .regEvent('verification/resent', ({ state }) => ({
      db: { ...state, busy: false },
      dispatch: ['toast/info', { message: t('A new verification link is on its way to {email}', { email: state.account?.email ?? 'your inbox' }) }],
    }))

    // a form's request failed: the server's field errors beside the fields, the message as a toast
    .regEvent('form/failed', ({ state }, [, form, failure]) => ({
      db: { ...withFieldErrors(state, form as FormId, fieldErrorsOf(form as FormId, failure as FailureBody)), busy: false },
      dispatch: ['request/failed', failure],
    }));
}
