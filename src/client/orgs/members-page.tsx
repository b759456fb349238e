/**
 * An organization's members page (`/orgs/<id>/members`): the members with their roles, changed
 * or removed as far as the server would allow, and, for admins, inviting and the pending
 * invitations.
 */
import { useApp } from '../ui/app.js';
import { Avatar } from '../ui/avatar.js';
import { Submit } from '../ui/button.js';
import { Card, Stack } from '../ui/card.js';
import { ConfirmButton } from '../ui/dialog.js';
import { Badge } from '../ui/feedback.js';
import { Field, Form, SelectField } from '../ui/field.js';
import { PageHeader } from '../ui/page-header.js';
import { Table } from '../ui/table.js';
import type { Organization, OrgRole } from './events.js';
import type { Member } from './org-page-events.js';
import { BackToOrg, OrgPageGate } from './org-page.js';
import { loadingOrg, useOrgPage } from './path-org.js';
import { ROLES, rank, roleName, roleOptions } from './roles.js';
import { t } from '../i18n/words.js';
import { dateOnly } from '../ui/dates.js';

function MemberRow({ member, me, myRole, owners }: { member: Member; me: string | undefined; myRole: OrgRole; owners: number }) {
  const { state, dispatch } = useApp();
  const self = member['account-id'] === me;
  // what the server allows: admins manage admins and members; owners also owners; the last owner stays
  const canManage = rank(myRole) >= rank('admin') && (member.role !== 'owner' || myRole === 'owner');
  const lastOwner = member.role === 'owner' && owners === 1;
  const choices = ROLES.filter((r) => r !== 'owner' || myRole === 'owner');
  return (
    <tr data-member={member['account-id']} data-email={member.email} data-role={member.role}>
      <td>
        <div class="flex items-center gap-3">
          <Avatar image={member.avatar} name={member.name || member.email} size="md" />
          <div class="min-w-0">
            {member.name ?? '—'}
            <br />
            <span class="text-muted">{member.email}</span>
            {self && (
              <>
                {' '}
                <Badge>{t('you')}</Badge>
              </>
            )}
          </div>
        </div>
      </td>
      <td>
        {canManage && !lastOwner ? (
          <div class="member-role-field max-w-36">
            <SelectField
              id={`role-${member['account-id']}`}
              label={t('Role of {email}', { email: member.email })}
              srOnlyLabel
              value={member.role}
              disabled={state.busy}
              options={roleOptions(choices)}
              onChange={(role) => dispatch(['org/change-role', member['account-id'], role])}
            />
          </div>
        ) : (
          <span data-field="role">{roleName(member.role)}</span>
        )}
      </td>
      <td>
        {!self && canManage && (
          <ConfirmButton
            variant="secondary"
            class="remove-member"
            disabled={state.busy || lastOwner}
            title={t('Remove {email}?', { email: member.email })}
            message={t('They lose access to the organization at once.')}
            confirmLabel={t('Remove')}
            onConfirm={() => dispatch(['org/remove', member['account-id']])}
          >
            {t('Remove')}
          </ConfirmButton>
        )}
      </td>
    </tr>
  );
}

function Invitations({ org }: { org: Organization }) {
  const { state, dispatch } = useApp();
  const page = state.orgPage!;
  return (
    <>
      <Card
        title={t('Invite someone')}
        id="invite-card"
        titleId="invite-title"
        description={t('They get an email with a link; it works for one address, once.')}
      >
        <Form id="invite" resetKey={state.orgFormResets?.invite ?? 0} onSubmit={(f) => dispatch(['org/invite', f])}>
          <Field form="invite" name="email" label={t('Email')} type="email" required maxLength={254} />
          <SelectField
            id="invite-role"
            name="role"
            form="invite"
            label={t('Role')}
            options={roleOptions(ROLES.filter((r) => r !== 'owner' || org.role === 'owner'))}
          />
          <Submit>{t('Send invitation')}</Submit>
        </Form>
      </Card>
      <Card title={t('Pending invitations')} id="invitations-card">
        <Table
          id="invitations"
          caption={t('Pending invitations')}
          headers={[t('Email'), t('Role'), t('Expires'), '']}
          rows={page.invitations}
          empty={t('None.')}
          emptyId="no-invitations"
          render={(i) => (
            <tr key={i.id} data-invitation={i.id} data-email={i.email}>
              <td>{i.email}</td>
              <td>{roleName(i.role)}</td>
              <td>{dateOnly(i['expires-at'])}</td>
              <td>
                <ConfirmButton
                  variant="secondary"
                  class="revoke-invitation"
                  disabled={state.busy}
                  title={t('Revoke the invitation to {email}?', { email: i.email })}
                  message={t('Its link stops working.')}
                  confirmLabel={t('Revoke')}
                  onConfirm={() => dispatch(['org/revoke', i.id])}
                >
                  {t('Revoke')}
                </ConfirmButton>
              </td>
            </tr>
          )}
        />
      </Card>
    </>
  );
}

/** An organization's members (roles, removal) and, for admins, its invitations. */
export function OrgMembersPage() {
  const { state } = useApp();
  const { id, page } = useOrgPage();
  if (!id || page?.status === 'missing') return <OrgPageGate title={t('Members')} missing />;
  if (!page?.org) return loadingOrg(t('Members'));
  const org = page.org;
  const owners = page.members?.filter((m) => m.role === 'owner').length ?? 0;
  return (
    <>
      <PageHeader
        title={t('Members')}
        description={
          <>
            {t('of {name} · your role:', { name: org.name })} <strong id="org-role">{roleName(org.role)}</strong>
          </>
        }
        back={<BackToOrg org={org} />}
      />
      <Stack>
        <Card title={t('Members')} id="members-card">
          <Table
            id="members"
            caption={t('Members of {name}', { name: org.name })}
            headers={[t('Member'), t('Role'), '']}
            rows={page.members}
            loadingText={t('Loading members…')}
            empty={t('No members.')}
            render={(m) => <MemberRow key={m['account-id']} member={m} me={state.account?.id} myRole={org.role} owners={owners} />}
          />
        </Card>
        {rank(org.role) >= rank('admin') && <Invitations org={org} />}
      </Stack>
    </>
  );
}
