/**
 * The pages of a person (docs/oauth.md): the consent page of an app's sign-in request
 * (`/authorize/<uid>`: signs in with the product's own log-in first, two-factor included, then
 * shows the app, its organization and the scopes in words, Allow and Deny; an app the product has
 * not reviewed is named with its host, under a warning) and the account's connected apps
 * (`/settings/connected-apps`: what was granted, revoke).
 */
import { useEffect } from 'preact/hooks';
import { scopeWords } from './scope-words.js';
import { LogInPage } from '../account/auth-pages.js';
import { useApp } from '../ui/app.js';
import { Button } from '../ui/button.js';
import { Actions, Card, Narrow, Stack } from '../ui/card.js';
import { ConfirmButton } from '../ui/dialog.js';
import { Alert, Badge } from '../ui/feedback.js';
import { PageHeader } from '../ui/page-header.js';
import { Table } from '../ui/table.js';
import { authorizeUidOf, type ConnectedApp, type Interaction } from './events.js';
import { dateOnly, dateTime } from '../ui/dates.js';
import { t } from '../i18n/words.js';
import { rich } from '../i18n/rich.js';

/** The scopes in the consent screen's words (a feature's declared scope in its own; an unknown one as it is). */
export function ScopeList({ scopes, id }: { scopes: string[]; id: string }) {
  const { state } = useApp();
  return (
    <ul id={id} class="list-disc space-y-1 ps-5 text-sm">
      {scopes.map((s) => (
        <li key={s} data-scope={s}>
          {scopeWords(s, state.declaredScopes)}
        </li>
      ))}
    </ul>
  );
}

/**
 * A connected app's name, and below it where it comes from: an organization's app names its
 * organization; an unreviewed one its host (its name is only its own word) and "Not reviewed".
 */
export function ConnectedAppName({ app }: { app: ConnectedApp }) {
  return (
    <>
      {app.name}
      <br />
      {app.reviewed ? (
        <span class="text-sm text-muted">{app.organization ? app.organization.name : t('No organization')}</span>
      ) : (
        <span class="text-sm text-muted" data-field="unreviewed">
          {app.host ? `${app.host} · ` : ''}
          <Badge tone="warning">{t('Not reviewed')}</Badge>
        </span>
      )}
    </>
  );
}

/** Ends a grant after asking: the connected apps' and the AI assistants' pages. */
export function RevokeAppButton({ app, verb, title, message, ...props }: { app: ConnectedApp; verb: string; title: string; message: string; class: string }) {
  const { state, dispatch } = useApp();
  return (
    <ConfirmButton
      variant="secondary"
      class={props.class}
      disabled={state.busy}
      title={title}
      message={message}
      confirmLabel={verb}
      onConfirm={() => dispatch(['connected-apps/revoke', app.id])}
    >
      {verb}
    </ConfirmButton>
  );
}

function Consent({ interaction }: { interaction: Interaction }) {
  const { state, dispatch } = useApp();
  const { client } = interaction;
  const product = state.product?.name ?? t('This product');
  // an unreviewed client's name is its own word: its host comes with it wherever it is named
  const named = !client.reviewed && client.host ? `${client.name} (${client.host})` : client.name;
  return (
    <Narrow>
      <PageHeader title={t('Allow {named} to use your account?', { named })} id="consent-title" />
      <Card id="consent-card" titleId="consent-app" title={client.name}>
        <p class="text-sm" id="consent-organization">
          {client.organization
            ? t('An app of the organization {name}.', { name: client.organization.name })
            : client.host
              ? t('It describes itself at {host}, and belongs to no organization here.', { host: client.host })
              : t('It registered itself, and belongs to no organization here.')}
        </p>
        {!client.reviewed && (
          <Alert id="consent-unreviewed" tone="warning">
            {rich(
              '<0>{product} has not reviewed this app:</0> anyone can publish an app under any name. Allow it only if you trust it and you started this connection yourself.',
              [(text) => <strong>{text}</strong>],
              { product },
            )}
          </Alert>
        )}
        <p class="text-sm">{t('It asks to:')}</p>
        <ScopeList scopes={interaction.scopes} id="consent-scopes" />
        {interaction['login-required'] && (
          <p class="text-sm" id="consent-login-required">
            {t('{name} asks you to confirm that it is you: Allow asks for your password again.', { name: client.name })}
          </p>
        )}
        <p class="text-sm text-muted">{t('You can disconnect it at any time from Account, Connected apps.')}</p>
        <Actions>
          <Button id="consent-deny" variant="secondary" disabled={state.busy} onClick={() => dispatch(['authorize/answer', false])}>
            {t('Deny')}
          </Button>
          <Button id="consent-allow" disabled={state.busy} onClick={() => dispatch(['authorize/answer', true])}>
            {t('Allow')}
          </Button>
        </Actions>
      </Card>
    </Narrow>
  );
}

export function AuthorizePage() {
  const { state, dispatch } = useApp();
  const uid = authorizeUidOf(location.pathname);
  const page = state.authorizePage?.uid === uid ? state.authorizePage : undefined;
  const signedIn = Boolean(state.token);
  useEffect(() => {
    if (uid && signedIn) dispatch(['authorize/open', uid]);
  }, [uid, signedIn]);
  if (!state.ready)
    return (
      <p class="text-sm text-muted" role="status">
        {t('Loading…')}
      </p>
    );
  // the product's own sign-in (two-factor, SSO, locked accounts: every rule holds); the page stays
  if (!signedIn) return <LogInPage />;
  if (!uid || page?.status === 'missing')
    return (
      <Narrow>
        <PageHeader title={t('Sign-in request')} />
        <Alert id="authorize-missing" tone="error">
          {t('This sign-in request is unknown, finished or expired. Go back to the app and start again.')}
        </Alert>
      </Narrow>
    );
  if (page?.status === 'ready' && page.interaction?.['consent-required']) return <Consent interaction={page.interaction} />;
  return (
    <Narrow>
      <PageHeader title={t('Sign-in request')} />
      <p class="text-sm text-muted" role="status" id="authorize-status">
        {page?.status === 'leaving' || page?.interaction ? t('Taking you back to the app…') : t('Loading…')}
      </p>
    </Narrow>
  );
}

export function ConnectedAppsPage() {
  const { state, dispatch } = useApp();
  useEffect(() => {
    dispatch(['connected-apps/load']);
  }, []);
  return (
    <>
      <PageHeader title={t('Connected apps')} description={t('Apps you allowed to use your account. Disconnect one and it loses access at once.')} />
      <Stack>
        <Card>
          <Table
            id="connected-apps"
            caption={t('Your connected apps')}
            headers={[t('App'), t('Access'), t('Connected'), t('Last used'), '']}
            rows={state.connectedApps}
            loadingText={t('Loading connected apps…')}
            empty={t('No app is connected to your account.')}
            emptyId="no-connected-apps"
            render={(app) => (
              <tr key={app.id} data-connected-app={app.id}>
                <td>
                  <ConnectedAppName app={app} />
                </td>
                <td>
                  <ScopeList scopes={app.scopes} id={`scopes-${app.id}`} />
                </td>
                <td>{dateOnly(app['created-at'])}</td>
                <td>{dateTime(app['last-used-at'], t('never'))}</td>
                <td>
                  <RevokeAppButton
                    app={app}
                    class="revoke-connected-app"
                    verb={t('Disconnect')}
                    title={t('Disconnect {name}?', { name: app.name })}
                    message={t('Its access ends at once; it must ask you again to come back.')}
                  />
                </td>
              </tr>
            )}
          />
        </Card>
      </Stack>
    </>
  );
}
