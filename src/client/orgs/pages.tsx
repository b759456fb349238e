/**
 * Your organizations as a whole: the switcher in the header, the organizations page (list,
 * create) and the invitation landing page. One organization's pages are overview-page.tsx and
 * members-page.tsx (their events: org-page-events.ts). They read the state and dispatch the
 * events of orgs/events.ts.
 */
import { useApp } from '../ui/app.js';
import { Avatar } from '../ui/avatar.js';
import { Button, ButtonLink, Submit } from '../ui/button.js';
import { Actions, Card, Narrow, Stack } from '../ui/card.js';
import { Alert } from '../ui/feedback.js';
import { Field, Form, SelectField } from '../ui/field.js';
import { PageHeader } from '../ui/page-header.js';
import { currentOrgIdOf } from './current-org.js';
import { orgPath } from './events.js';
import { roleName } from './roles.js';
import { t } from '../i18n/words.js';

/**
 * The organization switcher: the current organization (the page's, else the one kept across
 * visits), with its logo when it has one. A native select, for its keyboard and screen reader
 * behaviour everywhere; its options cannot hold images, so the logo is the chosen one's.
 */
export function OrgSwitcher() {
  const { state, dispatch } = useApp();
  if (!state.orgs?.length) return null;
  const current = currentOrgIdOf(state, typeof location === 'undefined' ? '' : location.pathname);
  const org = state.orgs.find((o) => o.id === current);
  return (
    <div class="flex w-full items-center gap-2 md:w-64">
      {org?.logo && <Avatar id="org-switcher-logo" image={org.logo} name={org.name} square />}
      <div class="min-w-0 flex-1">
        <SelectField
          id="org-switcher"
          label={t('Organization')}
          srOnlyLabel
          value={current}
          options={state.orgs.map((o) => ({ value: o.id, label: o.personal ? t('{name} (personal)', { name: o.name }) : o.name }))}
          onChange={(id) => dispatch(['orgs/select', id])}
        />
      </div>
    </div>
  );
}

export function OrgsPage() {
  const { state, dispatch } = useApp();
  return (
    <>
      <PageHeader title={t('Organizations')} description={t('Each organization has its own members, API keys, audit log and billing.')} />
      <Stack>
        <Card title={t('Your organizations')} id="org-list-card">
          {!state.orgs ? (
            <p class="text-muted" role="status">
              {t('Loading organizations…')}
            </p>
          ) : (
            <ul id="org-list" class="divide-y divide-line">
              {state.orgs.map((o) => (
                <li key={o.id} data-org-role={o.role} class="flex flex-wrap items-center gap-2 py-2">
                  <Avatar image={o.logo} name={o.name} size="md" square />
                  <a
                    href={orgPath(o.id)}
                    data-org={o.id}
                    onClick={(e) => {
                      if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
                      e.preventDefault();
                      dispatch(['orgs/select', o.id]);
                    }}
                  >
                    {o.name}
                  </a>
                  <span class="ms-auto text-muted">
                    {o.personal ? t('personal · ') : ''}
                    {roleName(o.role)}
                  </span>
                </li>
              ))}
            </ul>
          )}
        </Card>
        <Card title={t('Create an organization')} id="create-org-card">
          <Form id="create-org" resetKey={state.orgFormResets?.['create-org'] ?? 0} onSubmit={(f) => dispatch(['orgs/create', f])}>
            <Field form="create-org" name="name" label={t('Name')} required maxLength={100} />
            <Submit>{t('Create organization')}</Submit>
          </Form>
        </Card>
      </Stack>
    </>
  );
}

export function AcceptInvitationPage() {
  const { state, dispatch } = useApp();
  const page = state.invitationPage;
  const status = page?.status ?? 'accepting';
  const bad = status === 'failed' || status === 'mismatch';
  return (
    <Narrow>
      <PageHeader title={t('Invitation')} />
      <Alert id="invitation-status" data-status={status} tone={bad ? 'error' : status === 'unverified' ? 'warning' : 'info'}>
        {status === 'needs-session'
          ? t('You were invited to an organization. Log in, or sign up with the address the invitation was sent to, to accept it.')
          : status === 'accepting'
            ? t('Accepting the invitation…')
            : page?.message}
      </Alert>
      {status === 'needs-session' && (
        <Actions>
          <ButtonLink to="log-in" id="invitation-log-in" variant="secondary">
            {t('Log in')}
          </ButtonLink>
          <ButtonLink to="sign-up" id="invitation-sign-up">
            {t('Sign up')}
          </ButtonLink>
        </Actions>
      )}
      {status === 'unverified' && (
        <Actions>
          <Button id="invitation-retry" disabled={state.busy} onClick={() => dispatch(['invitation/accept'])}>
            {t('Try again')}
          </Button>
        </Actions>
      )}
      {/* another account is signed in: trying again cannot work; the invitation waits through the log-out for the right one */}
      {status === 'mismatch' && (
        <Actions>
          <Button id="invitation-log-out" variant="secondary" disabled={state.busy} onClick={() => dispatch(['log-out'])}>
            {t('Log out to accept with the invited address')}
          </Button>
        </Actions>
      )}
    </Narrow>
  );
}
