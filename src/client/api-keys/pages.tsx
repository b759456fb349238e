/**
 * The API keys page of an organization (`/orgs/<id>/api-keys`, admins): the live keys with
 * their last use, a form to make one (its secret shown once, with a copy button), and revoke
 * with a confirmation. It reads the state and dispatches the events of api-keys/events.ts.
 */
import { useEffect } from 'preact/hooks';
import { useApp } from '../ui/app.js';
import { Button, Submit } from '../ui/button.js';
import { Actions, Card, Stack } from '../ui/card.js';
import { ConfirmButton } from '../ui/dialog.js';
import { Alert } from '../ui/feedback.js';
import { CopyField, Field, Form, SelectField } from '../ui/field.js';
import { PageHeader } from '../ui/page-header.js';
import { Table } from '../ui/table.js';
import { apiKeysOrgIdOf, type ApiKey, type CreatedApiKey } from './events.js';
import { BackToOrg, OrgPageGate } from '../orgs/org-page.js';
import { dateOnly, dateTime } from '../ui/dates.js';
import { roleName, roleOptions } from '../orgs/roles.js';
import { t } from '../i18n/words.js';
import { rich } from '../i18n/rich.js';

/** The new key, once: a warning, the key, a copy button. */
function CreatedKey({ created }: { created: CreatedApiKey }) {
  const { dispatch } = useApp();
  return (
    <Card
      id="created-api-key"
      titleId="created-api-key-title"
      tone="highlight"
      role="alert"
      title={t('Copy the key {name} now', { name: created.name })}
      description={t(
        'It will not be shown again: only a hash of it is kept. Store it where your program reads its secrets; if it is lost, revoke it and make another.',
      )}
    >
      <div class="flex flex-wrap gap-2 sm:flex-nowrap">
        <CopyField id="new-api-key" label={t('The new API key')} value={created.key} />
        <Button id="copy-api-key" onClick={() => dispatch(['api-keys/copy'])}>
          {t('Copy')}
        </Button>
      </div>
      <Actions>
        <Button id="close-api-key" variant="secondary" onClick={() => dispatch(['api-keys/close-created'])}>
          {t('I have stored it')}
        </Button>
      </Actions>
    </Card>
  );
}

function KeyRow({ apiKey }: { apiKey: ApiKey }) {
  const { state, dispatch } = useApp();
  return (
    <tr data-api-key={apiKey.id} data-prefix={apiKey.prefix}>
      <td>
        {apiKey.name}
        <br />
        <code class="text-muted">sk_{apiKey.prefix}_…</code>
      </td>
      <td>{roleName(apiKey.role)}</td>
      <td>{dateOnly(apiKey['created-at'])}</td>
      <td data-field="last-used-at">{dateTime(apiKey['last-used-at'], t('never'))}</td>
      <td>
        <ConfirmButton
          variant="secondary"
          class="revoke-api-key"
          disabled={state.busy}
          title={t('Revoke the key {name}?', { name: apiKey.name })}
          message={t('Programs using it are refused from this moment.')}
          confirmLabel={t('Revoke')}
          onConfirm={() => dispatch(['api-keys/revoke', apiKey.id])}
        >
          {t('Revoke')}
        </ConfirmButton>
      </td>
    </tr>
  );
}

export function ApiKeysPage() {
  const { state, dispatch } = useApp();
  const id = apiKeysOrgIdOf(location.pathname);
  const page = state.apiKeysPage?.orgId === id ? state.apiKeysPage : undefined;
  // each visit starts afresh (and forgets a key shown on the last one)
  useEffect(() => {
    if (id) dispatch(['api-keys/open', id]);
  }, [id]);
  if (!id || page?.status === 'missing') return <OrgPageGate title={t('API keys')} missing />;
  if (!page?.org) return <OrgPageGate title={t('API keys')} />;
  const org = page.org;
  const back = <BackToOrg org={org} />;
  if (org.role === 'member') {
    return (
      <>
        <PageHeader title={t('API keys')} back={back} />
        <Alert id="api-keys-forbidden" tone="error">
          {t('Only admins and owners manage the API keys of {name}.', { name: org.name })}
        </Alert>
      </>
    );
  }
  return (
    <>
      <PageHeader
        title={t('API keys of {name}', { name: org.name })}
        id="api-keys-title"
        back={back}
        description={rich("A key lets a program act in this organization with the key's role: send it as <0/>.", [<code>Authorization: Bearer sk_…</code>])}
      />
      <Stack>
        {page.created && <CreatedKey created={page.created} />}
        <Card title={t('Keys')} id="api-keys-card">
          <Table
            id="api-keys"
            caption={t('API keys of {name}', { name: org.name })}
            headers={[t('Key'), t('Role'), t('Created'), t('Last used'), '']}
            rows={page.keys}
            loadingText={t('Loading keys…')}
            empty={t('No keys yet.')}
            emptyId="no-api-keys"
            render={(k) => <KeyRow key={k.id} apiKey={k} />}
          />
        </Card>
        <Card title={t('Create a key')} id="create-api-key-card">
          <Form id="create-api-key" resetKey={page.formResets} onSubmit={(f) => dispatch(['api-keys/create', f])}>
            <Field form="create-api-key" id="api-key-name" name="name" label={t('Name')} required maxLength={100} hint={t('What it is for, e.g. CI deploys')} />
            <SelectField id="api-key-role" name="role" form="create-api-key" label={t('Role')} options={roleOptions(['member', 'admin'])} />
            <Submit>{t('Create key')}</Submit>
          </Form>
        </Card>
      </Stack>
    </>
  );
}
