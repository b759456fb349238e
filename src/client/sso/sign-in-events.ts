/**
 * The log-in page's "Sign in with SSO": the email's organization sends the browser to its
 * identity provider (the `location/assign` effect, another feature's); docs/sso.md.
 */
import type { EventCore } from '../core.js';
import type { FailureBody } from '../shell/form-errors.js';
import type { AppState } from '../shell/state.js';
import { failed, withErrors } from './form-failures.js';
import { t } from '../i18n/words.js';

export const SSO_SIGN_IN_FORM = 'sso-sign-in';

export function registerSsoSignIn(core: EventCore<AppState>): void {
  core
    .regEvent('sso/start', ({ state }, [, form]) => ({
      db: { ...withErrors(state, SSO_SIGN_IN_FORM, undefined), busy: true },
      'http/api': {
        url: 'auth/sso/start',
        method: 'post',
        body: { email: ((form as { email?: string }).email ?? '').trim() },
        successPath: ['url'],
        onSuccess: ['sso/go'],
        onFailure: ['sso/start-failed'],
      },
    }))
    .regEvent('sso/go', (_ctx, [, url]) => ({ 'location/assign': url as string }))
    .regEvent('sso/start-failed', ({ state }, [, failure]) => {
      const f = failure as FailureBody;
      if (f.type === 'sso-not-configured')
        return { db: withErrors(state, SSO_SIGN_IN_FORM, { email: t('Single sign-on is not set up for this address: log in another way.') }) };
      return failed(state, SSO_SIGN_IN_FORM, failure, 'email');
    });
}
