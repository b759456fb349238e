/**
 * The pages of a person (docs/oauth.md): the consent page of an app's sign-in request
 * (`/authorize/<uid>`: signs in with the product's own log-in first, two-factor included, then
 * shows the app, its organization and the scopes in words, Allow and Deny) and the account's
 * connected apps (`/settings/connected-apps`: what was granted, revoke).
 */
import { useEffect } from 'preact/hooks';
import { SCOPE_WORDS } from '../../shared/oauth-scopes.js';
import { LogInPage } from '../account/auth-pages.js';
import { useApp } from '../ui/app.js';
import { Button } from '../ui/button.js';
import { Actions, Card, Narrow, Stack } from '../ui/card.js';
import { ConfirmButton } from '../ui/dialog.js';
import { Alert } from '../ui/feedback.js';
import { PageHeader } from '../ui/page-header.js';
import { Table } from '../ui/table.js';
import { authorizeUidOf, type Interaction } from './events.js';
import { dateOnly, dateTime } from '../ui/dates.js';

function ScopeList({ scopes, id }: { scopes: string[]; id: string }) {
  const { state } = useApp();
  return (
    <ul id={id} class="list-disc space-y-1 pl-5 text-sm">
      {scopes.map((s) => (
        <li key={s} data-scope={s}>
          {SCOPE_WORDS[s] ?? state.declaredScopes?.[s] ?? s}
        </li>
      ))}
    </ul>
  );
}

function Consent({ interaction }: { interaction: Interaction }) {
  const { state, dispatch } = useApp();
  const { client } = interaction;
  return (
    <Narrow>
      <PageHeader title={`Allow ${client.name} to use your account?`} id="consent-title" />
      <Card id="consent-card" titleId="consent-app" title={client.name}>
        <p class="text-sm" id="consent-organization">
          {client.organization ? `An app of the organization ${client.organization.name}.` : 'This app belongs to no organization: it registered itself.'}
        </p>
        <p class="text-sm">It asks to:</p>
        <ScopeList scopes={interaction.scopes} id="consent-scopes" />
        {interaction['login-required'] && (
          <p class="text-sm" id="consent-login-required">
            {client.name} asks you to confirm that it is you: Allow asks for your password again.
          </p>
        )}
        <p class="text-sm text-muted">You can disconnect it at any time from Settings, Connected apps.</p>
        <Actions>
          <Button id="consent-deny" variant="secondary" disabled={state.busy} onClick={() => dispatch(['authorize/answer', false])}>
            Deny
          </Button>
          <Button id="consent-allow" disabled={state.busy} onClick={() => dispatch(['authorize/answer', true])}>
            Allow
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
        Loading…
      </p>
    );
  // the product's own sign-in (two-factor, SSO, locked accounts: every rule holds); the page stays
  if (!signedIn) return <LogInPage />;
  if (!uid || page?.status === 'missing')
    return (
      <Narrow>
        <PageHeader title="Sign-in request" />
        <Alert id="authorize-missing" tone="error">
          This sign-in request is unknown, finished or expired. Go back to the app and start again.
        </Alert>
      </Narrow>
    );
  if (page?.status === 'ready' && page.interaction?.['consent-required']) return <Consent interaction={page.interaction} />;
  return (
    <Narrow>
      <PageHeader title="Sign-in request" />
      <p class="text-sm text-muted" role="status" id="authorize-status">
        {page?.status === 'leaving' || page?.interaction ? 'Taking you back to the app…' : 'Loading…'}
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
      <PageHeader title="Connected apps" description="Apps you allowed to use your account. Disconnect one and it loses access at once." />
      <Stack>
        <Card>
          <Table
            id="connected-apps"
            caption="Your connected apps"
            headers={['App', 'Access', 'Connected', 'Last used', '']}
            rows={state.connectedApps}
            loadingText="Loading connected apps…"
            empty="No app is connected to your account."
            emptyId="no-connected-apps"
            render={(app) => (
              <tr key={app.id} data-connected-app={app.id}>
                <td>
                  {app.name}
                  <br />
                  <span class="text-sm text-muted">{app.organization ? app.organization.name : 'No organization'}</span>
                </td>
                <td>
                  <ScopeList scopes={app.scopes} id={`scopes-${app.id}`} />
                </td>
                <td>{dateOnly(app['created-at'])}</td>
                <td>{dateTime(app['last-used-at'], 'never')}</td>
                <td>
                  <ConfirmButton
                    variant="secondary"
                    class="revoke-connected-app"
                    disabled={state.busy}
                    title={`Disconnect ${app.name}?`}
                    message="Its access ends at once; it must ask you again to come back."
                    confirmLabel="Disconnect"
                    onConfirm={() => dispatch(['connected-apps/revoke', app.id])}
                  >
                    Disconnect
                  </ConfirmButton>
                </td>
              </tr>
            )}
          />
        </Card>
      </Stack>
    </>
  );
}
