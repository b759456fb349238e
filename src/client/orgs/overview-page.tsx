/**
 * An organization's overview (`/orgs/<id>`): your role, its plan, its members' count, links to
 * its administration for admins, and leaving or deleting it.
 */
import { apiKeysPath } from '../api-keys/events.js';
import { auditPath } from '../audit/events.js';
import { billingPath } from '../billing/events.js';
import { useApp } from '../ui/app.js';
import { Avatar } from '../ui/avatar.js';
import { Button, ButtonLink } from '../ui/button.js';
import { Actions, Card, Stack } from '../ui/card.js';
import { ConfirmButton } from '../ui/dialog.js';
import { FileUpload, IMAGE_TYPES } from '../ui/file-upload.js';
import { PageHeader } from '../ui/page-header.js';
import { webhooksPath } from '../webhooks/events.js';
import { membersPath, type Organization } from './events.js';
import { OrgPageGate } from './org-page.js';
import { loadingOrg, useOrgPage } from './path-org.js';
import { t } from '../i18n/words.js';
import { rank, roleName } from './roles.js';

/** The logo (admins): the current one (or the initials), a new one uploaded at once, removal. */
function LogoCard({ org }: { org: Organization }) {
  const { state, dispatch } = useApp();
  const going = ['starting', 'sending', 'completing'].includes(state.uploads?.['logo-upload']?.phase ?? '');
  return (
    <Card title={t('Logo')} id="org-logo-card" description={t('Shown to every member, in the organization switcher.')}>
      <div class="flex flex-wrap items-start gap-4">
        <Avatar
          id="logo-current"
          image={org.logo}
          name={org.name}
          size="lg"
          square
          alt={org.logo ? t('The logo of {name}', { name: org.name }) : t('No logo yet: the initials')}
        />
        <div class="min-w-0 flex-1 space-y-3">
          <FileUpload
            id="logo-upload"
            label={org.logo ? t('Upload a new logo') : t('Upload a logo')}
            accept={IMAGE_TYPES}
            hint={t('PNG, JPEG or WebP. It is cropped to a square.')}
            request={{ purpose: 'organization-logo', organizationId: org.id, onDone: ['org/logo-changed', org.id] }}
          />
          {org.logo && (
            <Button id="remove-logo" variant="secondary" disabled={state.busy || going} onClick={() => dispatch(['org/remove-logo'])}>
              {t('Remove logo')}
            </Button>
          )}
        </div>
      </div>
    </Card>
  );
}

/** An organization's overview: who you are in it, its plan, where to go. */
export function OrgPage() {
  const { state, dispatch } = useApp();
  const { id, page } = useOrgPage();
  if (!id || page?.status === 'missing') return <OrgPageGate title={t('Organization')} missing />;
  if (!page?.org) return loadingOrg(t('Organization'));
  const org = page.org;
  const admin = rank(org.role) >= rank('admin');
  const s = org.subscription;
  const me = page.members?.find((m) => m['account-id'] === state.account?.id);
  const owners = page.members?.filter((m) => m.role === 'owner').length ?? 0;
  const lastOwner = me?.role === 'owner' && owners === 1;
  return (
    <>
      <PageHeader
        title={org.name}
        id="org-name"
        data-org={org.id}
        data-role={org.role}
        description={
          <>
            {org.personal ? t('Your personal organization. ') : ''}
            {t('Your role:')} <strong id="org-role">{roleName(org.role)}</strong>
          </>
        }
      />
      <Stack>
        <Stack columns={2}>
          <Card title={t('Plan')} id="org-plan-card">
            <p id="org-plan">
              {t('Plan:')} <strong>{t('{plan, select, none {none} other {{plan}}}', { plan: s?.plan ?? 'none' })}</strong>
              {s && s.status !== 'none' ? ` (${s.status})` : ''}
            </p>
            <Actions>
              <ButtonLink to="org-billing" path={billingPath(org.id)} id="org-billing" variant="secondary">
                {t('Billing')}
              </ButtonLink>
            </Actions>
          </Card>
          <Card title={t('Members')} id="org-members-card">
            <p>{page.members ? t('{count, plural, one {# member} other {# members}}', { count: page.members.length }) : t('Loading members…')}</p>
            <Actions>
              <ButtonLink to="org-members" path={membersPath(org.id)} id="org-members-link" variant="secondary">
                {admin ? t('Members and invitations') : t('Members')}
              </ButtonLink>
            </Actions>
          </Card>
        </Stack>
        {admin && <LogoCard org={org} />}
        {admin && (
          <Card title={t('Administration')} id="org-admin-card">
            <Actions>
              <ButtonLink to="org-api-keys" path={apiKeysPath(org.id)} id="org-api-keys-link" variant="secondary">
                {t('API keys')}
              </ButtonLink>
              <ButtonLink to="org-webhooks" path={webhooksPath(org.id)} id="org-webhooks-link" variant="secondary">
                {t('Webhooks')}
              </ButtonLink>
              <ButtonLink to="org-audit" path={auditPath(org.id)} id="audit-log-link" variant="secondary">
                {t('Audit log')}
              </ButtonLink>
            </Actions>
          </Card>
        )}
        {!org.personal && (
          <Card title={org.role === 'owner' ? t('Leave or delete') : t('Leave')} tone="danger" id="org-danger-card">
            <Actions>
              {me && (
                <ConfirmButton
                  id="leave-org"
                  variant="secondary"
                  disabled={state.busy || lastOwner}
                  title={t('Leave {name}?', { name: org.name })}
                  message={lastOwner ? t('Make another member owner first.') : t('You lose access to it until someone invites you again.')}
                  confirmLabel={t('Leave')}
                  onConfirm={() => dispatch(['org/remove', me['account-id']])}
                >
                  {t('Leave')}
                </ConfirmButton>
              )}
              {org.role === 'owner' && (
                <ConfirmButton
                  id="delete-org"
                  disabled={state.busy}
                  title={t('Delete {name}?', { name: org.name })}
                  message={t('It is deleted for every member, with its API keys and audit log. This cannot be undone.')}
                  confirmLabel={t('Delete organization')}
                  onConfirm={() => dispatch(['org/delete'])}
                >
                  {t('Delete organization')}
                </ConfirmButton>
              )}
            </Actions>
            {lastOwner && <p class="text-muted">{t('You are its only owner: make another member owner before you leave.')}</p>}
          </Card>
        )}
      </Stack>
    </>
  );
}
