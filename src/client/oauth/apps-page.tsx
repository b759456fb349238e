/**
 * An organization's OAuth apps page (`/orgs/<id>/oauth-apps`, admins): the apps with their client
 * ids, redirect URIs and scopes, a form to register one, a confidential app's secret shown once
 * (after registration or rotation), and deletion with a confirmation.
 */
import { useEffect } from 'preact/hooks';
import { ALL_SCOPES } from '../../shared/oauth-scopes.js';
import { scopeWords } from './scope-words.js';
import { useApp } from '../ui/app.js';
import { Button, Submit } from '../ui/button.js';
import { Actions, Card, Stack } from '../ui/card.js';
import { ConfirmButton } from '../ui/dialog.js';
import { Alert } from '../ui/feedback.js';
import { CheckboxGroup, CopyField, Field, Form, TextAreaField } from '../ui/field.js';
import { PageHeader } from '../ui/page-header.js';
import { Table } from '../ui/table.js';
import { oauthAppsOrgIdOf, type OAuthApp } from './events.js';
import { BackToOrg, OrgPageGate } from '../orgs/org-page.js';
import { t } from '../i18n/words.js';

function Secret({ secret }: { secret: { name: string; 'client-id': string; value: string } }) {
  const { dispatch } = useApp();
  return (
    <Card
      id="oauth-app-secret"
      titleId="oauth-app-secret-title"
      tone="highlight"
      role="alert"
      title={t('Copy the secret of {name} now', { name: secret.name })}
      description={t("It will not be shown again: only a hash of it is kept. Give it to the app's server with its client id.")}
    >
      <p class="text-sm">
        {t('Client id:')} <code id="oauth-app-secret-client-id">{secret['client-id']}</code>
      </p>
      <div class="flex flex-wrap gap-2 sm:flex-nowrap">
        <CopyField id="new-client-secret" label={t('The client secret')} value={secret.value} />
        <Button id="copy-client-secret" onClick={() => dispatch(['oauth-apps/copy'])}>
          {t('Copy')}
        </Button>
      </div>
      <Actions>
        <Button id="close-client-secret" variant="secondary" onClick={() => dispatch(['oauth-apps/close-secret'])}>
          {t('I have stored it')}
        </Button>
      </Actions>
    </Card>
  );
}

function AppRow({ app }: { app: OAuthApp }) {
  const { state, dispatch } = useApp();
  return (
    <tr data-oauth-app={app.id}>
      <td>
        {app.name}
        <br />
        <code class="text-sm text-muted">{app['client-id']}</code>
      </td>
      <td>{app.confidential ? t('Confidential') : t('Public (PKCE)')}</td>
      <td class="max-w-56 break-words text-sm">{app['redirect-uris'].join(' ')}</td>
      <td class="text-sm">{app.scopes.join(' ')}</td>
      <td class="space-y-2">
        {app.confidential && (
          <ConfirmButton
            variant="secondary"
            class="rotate-client-secret"
            disabled={state.busy}
            title={t('Rotate the secret of {name}?', { name: app.name })}
            message={t('The current secret stops working at once.')}
            confirmLabel={t('Rotate')}
            onConfirm={() => dispatch(['oauth-apps/rotate', app.id])}
          >
            {t('Rotate secret')}
          </ConfirmButton>
        )}
        <ConfirmButton
          variant="secondary"
          class="delete-oauth-app"
          disabled={state.busy}
          title={t('Delete {name}?', { name: app.name })}
          message={t('Everyone who connected it loses it at once.')}
          confirmLabel={t('Delete')}
          onConfirm={() => dispatch(['oauth-apps/delete', app.id])}
        >
          {t('Delete')}
        </ConfirmButton>
      </td>
    </tr>
  );
}

function CreateApp({ resetKey }: { resetKey: number }) {
  const { state, dispatch } = useApp();
  return (
    <Card title={t('Register an app')} id="create-oauth-app-card">
      <Form id="create-oauth-app" resetKey={resetKey} onSubmit={(f, data) => dispatch(['oauth-apps/create', f, data])}>
        <Field
          form="create-oauth-app"
          id="oauth-app-name"
          name="name"
          label={t('Name')}
          required
          maxLength={100}
          hint={t('People see it on the consent screen')}
        />
        <TextAreaField
          form="create-oauth-app"
          id="oauth-app-redirect-uris"
          name="redirect-uris"
          label={t('Redirect URIs')}
          rows={3}
          required
          hint={t('One per line: https, or http on localhost / 127.0.0.1; a request must name one exactly')}
        />
        <div class="flex items-start gap-2 text-sm">
          <input id="oauth-app-confidential" type="checkbox" name="confidential" class="mt-0.5 h-4 w-4 accent-primary" />
          <label for="oauth-app-confidential">{t('Confidential: the app runs on a server that keeps a secret')}</label>
        </div>
        <CheckboxGroup
          form="create-oauth-app"
          id="oauth-app-scopes"
          name="scopes"
          legend={t('Scopes it may ask')}
          options={[...ALL_SCOPES, ...Object.keys(state.declaredScopes ?? {})].map((s) => ({
            value: s,
            label: (
              <>
                <code>{s}</code>: {scopeWords(s, state.declaredScopes)}
              </>
            ),
          }))}
        />
        <Submit>{t('Register app')}</Submit>
      </Form>
    </Card>
  );
}

export function OAuthAppsPage() {
  const { state, dispatch } = useApp();
  const id = oauthAppsOrgIdOf(location.pathname);
  const page = state.oauthAppsPage?.orgId === id ? state.oauthAppsPage : undefined;
  useEffect(() => {
    if (id) dispatch(['oauth-apps/open', id]);
  }, [id]);
  if (!id || page?.status === 'missing') return <OrgPageGate title={t('OAuth apps')} missing />;
  if (!page?.org) return <OrgPageGate title={t('OAuth apps')} />;
  const org = page.org;
  const back = <BackToOrg org={org} />;
  if (org.role === 'member')
    return (
      <>
        <PageHeader title={t('OAuth apps')} back={back} />
        <Alert id="oauth-apps-forbidden" tone="error">
          {t('Only admins and owners manage the OAuth apps of {name}.', { name: org.name })}
        </Alert>
      </>
    );
  return (
    <>
      <PageHeader
        title={t('OAuth apps of {name}', { name: org.name })}
        id="oauth-apps-title"
        back={back}
        description={t("Apps that offer “Sign in with” this product and use its API on a person's behalf, with their consent.")}
      />
      <Stack>
        {page.secret && <Secret secret={page.secret} />}
        <Card title={t('Apps')} id="oauth-apps-card">
          <Table
            id="oauth-apps"
            caption={t('OAuth apps of {name}', { name: org.name })}
            headers={[t('App'), t('Type'), t('Redirect URIs'), t('Scopes'), '']}
            rows={page.apps}
            loadingText={t('Loading apps…')}
            empty={t('No apps yet.')}
            emptyId="no-oauth-apps"
            render={(a) => <AppRow key={a.id} app={a} />}
          />
        </Card>
        <CreateApp resetKey={page.formResets} />
      </Stack>
    </>
  );
}
