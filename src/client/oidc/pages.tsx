/**
 * Provider sign-in's parts of the pages: the "Log in with …" links (log-in, sign-up), the
 * callback's outcome as a sentence, and the security page's sign-in methods.
 */
import { Link, useApp } from '../ui/app.js';
import { Button, buttonClass } from '../ui/button.js';
import { Actions, Card } from '../ui/card.js';
import { ConfirmButton } from '../ui/dialog.js';
import { Alert } from '../ui/feedback.js';
import { Field } from '../ui/field.js';
import { Table } from '../ui/table.js';
import type { Route } from '../shell/state.js';
import { oauthErrorMessage, providerName, startPath } from './events.js';
import { dateOnly } from '../ui/dates.js';
import { t } from '../i18n/words.js';
import { rich } from '../i18n/rich.js';

/** One link per configured provider; nothing while none is configured. */
export function ProviderButtons({ action }: { action: 'log-in' | 'sign-up' }) {
  const { state } = useApp();
  const providers = state.providers ?? [];
  if (providers.length === 0) return null;
  return (
    <div id="providers" class="space-y-2">
      <p class="text-center text-sm text-muted">{t('or')}</p>
      {providers.map((p) => (
        <a key={p.id} class={buttonClass('secondary', 'provider w-full')} data-provider={p.id} href={startPath(p.id)}>
          {action === 'log-in' ? t('Log in with {provider}', { provider: p.name }) : t('Sign up with {provider}', { provider: p.name })}
        </a>
      ))}
    </div>
  );
}

/** What the provider's callback said, on the page it landed on. */
export function OauthNotice({ route }: { route: Route }) {
  const { state, dispatch } = useApp();
  const notice = state.oauthNotice;
  if (!notice || notice.route !== route) return null;
  const name = providerName(state, notice.provider);
  const error = notice.kind === 'error';
  return (
    <Alert id="oauth-notice" tone={error ? 'error' : 'success'} data-code={notice.code}>
      {error ? (
        oauthErrorMessage(notice.code, name)
      ) : (
        <>
          {name} {rich('is linked: you can sign in with it from now on. <0>Your sign-in methods</0>.', [(text) => <Link to="security">{text}</Link>])}
        </>
      )}{' '}
      <Button variant="link" onClick={() => dispatch(['oidc/dismiss-notice'])}>
        {t('Dismiss')}
      </Button>
    </Alert>
  );
}

/** The account's ways to sign in: its password, its linked providers (unlink), and the providers to link. */
export function SignInMethods() {
  const { state, dispatch } = useApp();
  const methods = state.signInMethods;
  const providers = state.providers ?? [];
  const unlinking = new Set(state.unlinking);
  // the last way to sign in cannot go (the server answers 409 too)
  const lastWay = Boolean(methods && !methods.hasPassword && methods.identities.length === 1);
  return (
    <Card
      id="sign-in-methods"
      titleId="sign-in-methods-title"
      title={t('Sign-in methods')}
      description={t('Your password and the providers linked to your account.')}
    >
      {!methods ? (
        <p class="text-muted">{t('Loading sign-in methods…')}</p>
      ) : (
        <>
          <p id="password-method" data-has-password={String(methods.hasPassword)}>
            {t('Password:')}{' '}
            {methods.hasPassword
              ? t('set')
              : rich('none yet. To set one, use <0>Forgot password</0>: we email you a link.', [
                  (text) => (
                    <Link to="forgot-password" id="set-password-link">
                      {text}
                    </Link>
                  ),
                ])}
          </p>
          <Table
            id="identities"
            caption={t('Linked providers')}
            headers={[t('Provider'), t('Email there'), t('Linked'), '']}
            rows={methods.identities}
            empty={t('No provider is linked.')}
            render={(i) => (
              <tr key={i.id} data-identity={i.id} data-provider={i.provider}>
                <td>{providerName(state, i.provider)}</td>
                <td data-field="email">{i.email ?? '—'}</td>
                <td>{dateOnly(i['created-at'])}</td>
                <td>
                  <ConfirmButton
                    variant="secondary"
                    class="unlink"
                    disabled={unlinking.has(i.id) || lastWay}
                    title={t('Unlink {state}?', { state: providerName(state, i.provider) })}
                    message={t('You will no longer sign in with it.')}
                    confirmLabel={t('Unlink')}
                    onConfirm={() => dispatch(['identities/unlink', i.id])}
                  >
                    {t('Unlink')}
                  </ConfirmButton>
                  {lastWay && <span class="sr-only"> {t('(your only way to sign in: set a password or link another provider first)')}</span>}
                </td>
              </tr>
            )}
          />
        </>
      )}
      {providers.length > 0 && (
        // linking adds a way in: an account with a password confirms it (the server asks; without one, a recent sign-in)
        <form
          id="link-provider"
          class="mt-4 space-y-3"
          onSubmit={(e) => {
            e.preventDefault();
            const provider = ((e as SubmitEvent).submitter as HTMLButtonElement | null)?.value;
            const password = (e.currentTarget.elements.namedItem('password') as HTMLInputElement | null)?.value;
            if (provider) dispatch(['identities/link', provider, password]);
          }}
        >
          {methods?.hasPassword && (
            <Field form="link-provider" name="password" label={t('Your password (to link a provider)')} type="password" autoComplete="current-password" />
          )}
          <Actions>
            {providers.map((p) => (
              <Button key={p.id} type="submit" name="provider" value={p.id} variant="secondary" data-link-provider={p.id} disabled={state.busy}>
                {t('Link')} {p.name}
              </Button>
            ))}
          </Actions>
        </form>
      )}
    </Card>
  );
}
