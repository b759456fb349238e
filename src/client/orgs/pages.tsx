/**
 * Organization pages: the switcher in the header, the organizations page (list, create), an
 * organization's overview and its members and invitations, and the invitation landing page.
 * They read the state and dispatch the events of orgs/events.ts.
 */
import { useEffect } from 'preact/hooks';
import { apiKeysPath } from '../api-keys/events.js';
import { auditPath } from '../audit/events.js';
import { billingPath } from '../billing/events.js';
import { Link, useApp } from '../ui/app.js';
import { Button, ButtonLink, Submit } from '../ui/button.js';
import { Actions, Card, Narrow, Stack } from '../ui/card.js';
import { ConfirmButton } from '../ui/dialog.js';
import { Alert, Badge } from '../ui/feedback.js';
import { Field, Form, SelectField } from '../ui/field.js';
import { PageHeader } from '../ui/page-header.js';
import { Table } from '../ui/table.js';
import { webhooksPath } from '../webhooks/events.js';
import { membersPath, orgIdInPath, orgPath, type Member, type Organization, type OrgRole } from './events.js';

const ROLES: OrgRole[] = ['member', 'admin', 'owner'];
const rank = (role: OrgRole) => ROLES.indexOf(role);
const roleOptions = (roles: OrgRole[]) => roles.map((r) => ({ value: r, label: r }));

/** The organization switcher: the current organization, kept across visits. */
export function OrgSwitcher() {
  const { state, dispatch } = useApp();
  if (!state.orgs?.length) return null;
  return (
    <div class="w-full md:w-56">
      <SelectField
        id="org-switcher"
        label="Organization"
        srOnlyLabel
        value={state.currentOrg}
        options={state.orgs.map((o) => ({ value: o.id, label: `${o.name}${o.personal ? ' (personal)' : ''}` }))}
        onChange={(id) => dispatch(['orgs/select', id])}
      />
    </div>
  );
}

/** The organization of the page's path, loaded once per organization (the overview and the members page share it). */
function useOrgPage() {
  const { state, dispatch } = useApp();
  const id = orgIdInPath(location.pathname);
  const page = state.orgPage?.id === id ? state.orgPage : undefined;
  // the page follows the path (switcher, links, back and forward)
  useEffect(() => {
    if (id && state.orgPage?.id !== id) dispatch(['org/open', id]);
  }, [id]);
  return { id, page };
}

function Missing({ title }: { title: string }) {
  return (
    <>
      <PageHeader title={title} />
      <Alert id="org-missing" tone="error">
        This organization does not exist, or you are not a member. <Link to="orgs">Your organizations</Link>
      </Alert>
    </>
  );
}

export function OrgsPage() {
  const { state, dispatch } = useApp();
  return (
    <>
      <PageHeader title="Organizations" description="Each organization has its own members, API keys, audit log and billing." />
      <Stack>
        <Card title="Your organizations" id="org-list-card">
          {!state.orgs ? (
            <p class="text-muted" role="status">
              Loading organizations…
            </p>
          ) : (
            <ul id="org-list" class="divide-y divide-line">
              {state.orgs.map((o) => (
                <li key={o.id} data-org-role={o.role} class="flex flex-wrap items-center justify-between gap-2 py-2">
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
                  <span class="text-muted">
                    {o.personal ? 'personal · ' : ''}
                    {o.role}
                  </span>
                </li>
              ))}
            </ul>
          )}
        </Card>
        <Card title="Create an organization" id="create-org-card">
          <Form id="create-org" resetKey={state.orgFormResets?.['create-org'] ?? 0} onSubmit={(f) => dispatch(['orgs/create', f])}>
            <Field form="create-org" name="name" label="Name" required maxLength={100} />
            <Submit>Create organization</Submit>
          </Form>
        </Card>
      </Stack>
    </>
  );
}

/** An organization's overview: who you are in it, its plan, where to go. */
export function OrgPage() {
  const { state, dispatch } = useApp();
  const { id, page } = useOrgPage();
  if (!id || page?.status === 'missing') return <Missing title="Organization" />;
  if (!page?.org)
    return (
      <>
        <PageHeader title="Organization" />
        <p class="text-sm text-muted" role="status">
          Loading organization…
        </p>
      </>
    );
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
            {org.personal ? 'Your personal organization. ' : ''}Your role: <strong id="org-role">{org.role}</strong>
          </>
        }
      />
      <Stack>
        <Stack columns={2}>
          <Card title="Plan" id="org-plan-card">
            <p id="org-plan">
              Plan: <strong>{s?.plan ?? 'none'}</strong>
              {s && s.status !== 'none' ? ` (${s.status})` : ''}
            </p>
            <Actions>
              <ButtonLink to="org-billing" path={billingPath(org.id)} id="org-billing" variant="secondary">
                Billing
              </ButtonLink>
            </Actions>
          </Card>
          <Card title="Members" id="org-members-card">
            <p>{page.members ? `${page.members.length} member${page.members.length === 1 ? '' : 's'}` : 'Loading members…'}</p>
            <Actions>
              <ButtonLink to="org-members" path={membersPath(org.id)} id="org-members-link" variant="secondary">
                {admin ? 'Members and invitations' : 'Members'}
              </ButtonLink>
            </Actions>
          </Card>
        </Stack>
        {admin && (
          <Card title="Administration" id="org-admin-card">
            <Actions>
              <ButtonLink to="org-api-keys" path={apiKeysPath(org.id)} id="org-api-keys-link" variant="secondary">
                API keys
              </ButtonLink>
              <ButtonLink to="org-webhooks" path={webhooksPath(org.id)} id="org-webhooks-link" variant="secondary">
                Webhooks
              </ButtonLink>
              <ButtonLink to="org-audit" path={auditPath(org.id)} id="audit-log-link" variant="secondary">
                Audit log
              </ButtonLink>
            </Actions>
          </Card>
        )}
        {!org.personal && (
          <Card title="Leave or delete" tone="danger" id="org-danger-card">
            <Actions>
              {me && (
                <ConfirmButton
                  id="leave-org"
                  variant="secondary"
                  disabled={state.busy || lastOwner}
                  title={`Leave ${org.name}?`}
                  message={lastOwner ? 'Make another member owner first.' : 'You lose access to it until someone invites you again.'}
                  confirmLabel="Leave"
                  onConfirm={() => dispatch(['org/remove', me['account-id']])}
                >
                  Leave
                </ConfirmButton>
              )}
              {org.role === 'owner' && (
                <ConfirmButton
                  id="delete-org"
                  disabled={state.busy}
                  title={`Delete ${org.name}?`}
                  message="It is deleted for every member, with its API keys and audit log. This cannot be undone."
                  confirmLabel="Delete organization"
                  onConfirm={() => dispatch(['org/delete'])}
                >
                  Delete organization
                </ConfirmButton>
              )}
            </Actions>
            {lastOwner && <p class="text-muted">You are its only owner: make another member owner before you leave.</p>}
          </Card>
        )}
      </Stack>
    </>
  );
}

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
        {member.name ?? '—'}
        <br />
        <span class="text-muted">{member.email}</span>
        {self && (
          <>
            {' '}
            <Badge>you</Badge>
          </>
        )}
      </td>
      <td>
        {canManage && !lastOwner ? (
          <div class="member-role-field max-w-36">
            <SelectField
              id={`role-${member['account-id']}`}
              label={`Role of ${member.email}`}
              srOnlyLabel
              value={member.role}
              disabled={state.busy}
              options={roleOptions(choices)}
              onChange={(role) => dispatch(['org/change-role', member['account-id'], role])}
            />
          </div>
        ) : (
          <span data-field="role">{member.role}</span>
        )}
      </td>
      <td>
        {!self && canManage && (
          <ConfirmButton
            variant="secondary"
            class="remove-member"
            disabled={state.busy || lastOwner}
            title={`Remove ${member.email}?`}
            message="They lose access to the organization at once."
            confirmLabel="Remove"
            onConfirm={() => dispatch(['org/remove', member['account-id']])}
          >
            Remove
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
      <Card title="Invite someone" id="invite-card" titleId="invite-title" description="They get an email with a link; it works for one address, once.">
        <Form id="invite" resetKey={state.orgFormResets?.invite ?? 0} onSubmit={(f) => dispatch(['org/invite', f])}>
          <Field form="invite" name="email" label="Email" type="email" required maxLength={254} />
          <SelectField
            id="invite-role"
            name="role"
            form="invite"
            label="Role"
            options={roleOptions(ROLES.filter((r) => r !== 'owner' || org.role === 'owner'))}
          />
          <Submit>Send invitation</Submit>
        </Form>
      </Card>
      <Card title="Pending invitations" id="invitations-card">
        <Table
          id="invitations"
          caption="Pending invitations"
          headers={['Email', 'Role', 'Expires', '']}
          rows={page.invitations}
          empty="None."
          emptyId="no-invitations"
          render={(i) => (
            <tr key={i.id} data-invitation={i.id} data-email={i.email}>
              <td>{i.email}</td>
              <td>{i.role}</td>
              <td>{new Date(i['expires-at']).toLocaleDateString()}</td>
              <td>
                <ConfirmButton
                  variant="secondary"
                  class="revoke-invitation"
                  disabled={state.busy}
                  title={`Revoke the invitation to ${i.email}?`}
                  message="Its link stops working."
                  confirmLabel="Revoke"
                  onConfirm={() => dispatch(['org/revoke', i.id])}
                >
                  Revoke
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
  if (!id || page?.status === 'missing') return <Missing title="Members" />;
  if (!page?.org)
    return (
      <>
        <PageHeader title="Members" />
        <p class="text-sm text-muted" role="status">
          Loading organization…
        </p>
      </>
    );
  const org = page.org;
  const owners = page.members?.filter((m) => m.role === 'owner').length ?? 0;
  return (
    <>
      <PageHeader
        title="Members"
        description={
          <>
            of {org.name} · your role: <strong id="org-role">{org.role}</strong>
          </>
        }
        back={
          <Link to="org" path={orgPath(org.id)} id="back-to-org">
            ← {org.name}
          </Link>
        }
      />
      <Stack>
        <Card title="Members" id="members-card">
          <Table
            id="members"
            caption={`Members of ${org.name}`}
            headers={['Member', 'Role', '']}
            rows={page.members}
            loadingText="Loading members…"
            empty="No members."
            render={(m) => <MemberRow key={m['account-id']} member={m} me={state.account?.id} myRole={org.role} owners={owners} />}
          />
        </Card>
        {rank(org.role) >= rank('admin') && <Invitations org={org} />}
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
      <PageHeader title="Invitation" />
      <Alert id="invitation-status" data-status={status} tone={bad ? 'error' : status === 'unverified' ? 'warning' : 'info'}>
        {status === 'needs-session'
          ? 'You were invited to an organization. Log in, or sign up with the address the invitation was sent to, to accept it.'
          : status === 'accepting'
            ? 'Accepting the invitation…'
            : page?.message}
      </Alert>
      {status === 'needs-session' && (
        <Actions>
          <ButtonLink to="log-in" id="invitation-log-in" variant="secondary">
            Log in
          </ButtonLink>
          <ButtonLink to="sign-up" id="invitation-sign-up">
            Sign up
          </ButtonLink>
        </Actions>
      )}
      {(status === 'unverified' || status === 'mismatch') && (
        <Actions>
          <Button id="invitation-retry" disabled={state.busy} onClick={() => dispatch(['invitation/accept'])}>
            Try again
          </Button>
        </Actions>
      )}
    </Narrow>
  );
}
