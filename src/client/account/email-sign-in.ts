/**
 * Email sign-in's events (docs/sign-in.md): asking for a message from the log-in page, typing
 * its code, and the `/auth/email` page the message's link opens (its token sent once and taken
 * out of the URL). Both end like a log-in: tokens, or the second step of a two-factor account.
 */
import type { EventCore } from '../core.js';
import type { AppState } from '../shell/state.js';
import { PASSWORD_REMOVED } from './events.js';
import { t } from '../i18n/words.js';

/** This part of the app state: absent until the visitor asks for an email sign-in or opens a link. */
export interface EmailSignInState {
  emailSignIn?: { step: 'ask' | 'sent' | 'checking' | 'failed'; email?: string; message?: string };
}

declare module '../shell/state.js' {
  interface AppState extends EmailSignInState {}
}

export function registerEmailSignIn(core: EventCore<AppState>): void {
  core
    .regEvent('email-sign-in/ask', ({ state }) => ({ db: { ...state, emailSignIn: { step: 'ask' } } }))
    .regEvent('email-sign-in/cancel', ({ state }) => ({ db: { ...state, emailSignIn: undefined } }))
    .regEvent('email-sign-in/start', ({ state }, [, form]) => {
      const email = ((form as { email?: string }).email ?? '').trim();
      return {
        db: { ...state, busy: true },
        'http/api': {
          url: 'auth/email/start',
          method: 'post',
          body: { email },
          onSuccess: ['email-sign-in/sent', email],
          onFailureN: [['request/failed'], ['app/idle']],
        },
      };
    })
    .regEvent('email-sign-in/sent', ({ state }, [, email]) => ({ db: { ...state, busy: false, emailSignIn: { step: 'sent', email: email as string } } }))
    .regEvent('email-sign-in/code', ({ state }, [, form]) => {
      const email = state.emailSignIn?.email;
      if (!email) return;
      return {
        db: { ...state, busy: true },
        'http/api': {
          url: 'auth/email/verify',
          method: 'post',
          body: { email, code: ((form as { code?: string }).code ?? '').replace(/\s/g, '') },
          onSuccess: ['email-sign-in/answered'],
          onFailure: ['email-sign-in/failed'],
        },
      };
    })
    // the link's page: the token is sent once and leaves the address bar
    .regEvent('email-sign-in/open', ({ state }, [, search]) => {
      const token = new URLSearchParams(String(search ?? '')).get('token');
      if (!token)
        return state.emailSignIn?.step === 'checking' || state.emailSignIn?.step === 'failed' ? undefined : { db: { ...state, emailSignIn: { step: 'ask' } } };
      return {
        db: { ...state, busy: true, emailSignIn: { step: 'checking' } },
        'http/api': { url: 'auth/email/verify', method: 'post', body: { token }, onSuccess: ['email-sign-in/answered'], onFailure: ['email-sign-in/failed'] },
        'url/replace': '/auth/email',
      };
    })
    .regEvent('email-sign-in/answered', ({ state }, [, response]) => {
      const resetToken = (response as { 'password-reset-token'?: string })['password-reset-token'];
      if (!resetToken) return { db: { ...state, emailSignIn: undefined }, dispatch: ['log-in/answered', response] };
      // this first proof removed a password set before it (maybe by someone else): signed in, then set one now, as a reset link does
      return {
        db: { ...state, emailSignIn: undefined, resetToken },
        dispatchN: [
          ['log-in/answered', response],
          ['toast/info', { message: t(PASSWORD_REMOVED) }],
          ['router/navigate', { route: 'reset-password' }],
        ],
      };
    })
    .regEvent('email-sign-in/failed', ({ state }, [, failure]) => {
      const f = failure as { type?: string; message?: string };
      if (f.type === 'invalid-code') return { db: { ...state, busy: false }, dispatch: ['toast/error', { message: f.message ?? t('The code is wrong') }] };
      const message =
        f.type === 'invalid-token' ? t('This sign-in link is invalid, already used or expired. Ask for a new one.') : (f.message ?? t('The sign-in failed.'));
      return { db: { ...state, busy: false, emailSignIn: { step: 'failed', message } } };
    });
}
