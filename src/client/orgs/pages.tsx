/**
 * Organization pages: the switcher in the navigation, the organizations page (list, create),
 * an organization's page (members and roles, invitations, leave) and the invitation landing
 * page. They read the state and dispatch the events of orgs/events.ts.
 */
import { useEffect } from 'preact/hooks';
import { billingPath } from '../billing/events.js';
import { formFields, Link, Submit, useApp } from '../ui.js';
import { auditPath } from '../audit/events.js';
import { orgIdOf, orgPath, type Member, type Organization, type OrgRole } from './events.js';
import { apiKeysPath } from '../api-keys/events.js';
import { webhooksPath } from '../webhooks/events.js';

const ROLES: OrgRole[] = ['member', 'admin', 'owner'];
const rank = (role: OrgRole) => ROLES.indexOf(role);

/** A link to an organization's page that routes in the app. */
function OrgLink({ org }: { org: Organization }) {
  const { dispatch } = useApp();
  return (
    <a href={orgPath(org.id)} data-org={org.id} onClick={(e) => {
      if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
      e.preventDefault();
      dispatch(['orgs/select', org.id]);
    }}>{org.name}</a>
  );
}

/** The organization switcher: the current organization, kept across visits. */
export function OrgSwitcher() {
  const { state, dispatch } = useApp();
  if (!state.orgs?.length) return null;
  return (
    <label class="switcher">
      <span class="sr-only">Organization</span>
      <select id="org-switcher" value={state.currentOrg} onChange={(e) => dispatch(['orgs/select', e.currentTarget.value])}>
        {state.orgs.map((o) => <option key={o.id} value={o.id}>{o.name}{o.personal ? ' (personal)' : ''}</option>)}
      </select>
    </label>
  );
}

/** The audit log of an organization, for its admins and owners. */
function AuditLogLink({ orgId }: { orgId: string }) {
  const { dispatch } = useApp();
  return (
    <a id="audit-log-link" href={auditPath(orgId)} onClick={(e) => {
      if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
      e.preventDefault();
      dispatch(['router/navigate', { route: 'org-audit', path: auditPath(orgId) }]);
    }}>Audit log</a>
  );
}

export function OrgsPage() {
  const { state, dispatch } = useApp();
  return (
    <>
      <h1>Organizations</h1>
      {!state.orgs ? <p class="muted">Loading organizations…</p> : (
        <ul id="org-list">
          {state.orgs.map((o) => (
            <li key={o.id} data-org-role={o.role}><OrgLink org={o} /> <span class="muted">{o.personal ? 'personal · ' : ''}{o.role}</span></li>
          ))}
        </ul>
      )}
      <h2>Create an organization</h2>
      <form key={state.orgFormResets?.['create-org'] ?? 0} id="create-org" onSubmit={(e) => { e.preventDefault(); dispatch(['orgs/create', formFields(e.currentTarget)]); }}>
        <div class="field">
          <label for="create-org-name">Name</label>
          <input id="create-org-name" name="name" required maxLength={100} />
        </div>
        <Submit>Create organization</Submit>
      </form>
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
      <td>{member.name ?? '—'}<br /><span class="muted">{member.email}</span></td>
      <td>
        {canManage && !lastOwner ? (
          <select class="member-role" aria-label={`Role of ${member.email}`} value={member.role} disabled={state.busy}
            onChange={(e) => dispatch(['org/change-role', member['account-id'], e.currentTarget.value])}>
            {choices.map((r) => <option key={r} value={r}>{r}</option>)}
          </select>
        ) : <span data-field="role">{member.role}</span>}
      </td>
      <td>
        {self ? (
          <button id="leave-org" type="button" class="secondary" disabled={state.busy || lastOwner}
            title={lastOwner ? 'Make another member owner first' : undefined} onClick={() => dispatch(['org/remove', member['account-id']])}>Leave</button>
        ) : canManage && (
          <button type="button" class="secondary remove-member" disabled={state.busy || lastOwner} onClick={() => dispatch(['org/remove', member['account-id']])}>Remove</button>
        )}
      </td>
    </tr>
  );
}

function Invitations() {
  const { state, dispatch } = useApp();
  const page = state.orgPage!;
  const myRole = page.org!.role;
  return (
    <section aria-labelledby="invite-title">
      <h2 id="invite-title">Invite someone</h2>
      <form key={state.orgFormResets?.invite ?? 0} id="invite" onSubmit={(e) => { e.preventDefault(); dispatch(['org/invite', formFields(e.currentTarget)]); }}>
        <div class="field">
          <label for="invite-email">Email</label>
          <input id="invite-email" name="email" type="email" required maxLength={254} />
        </div>
        <div class="field">
          <label for="invite-role">Role</label>
          <select id="invite-role" name="role">
            {ROLES.filter((r) => r !== 'owner' || myRole === 'owner').map((r) => <option key={r} value={r}>{r}</option>)}
          </select>
        </div>
        <Submit>Send invitation</Submit>
      </form>
      <h2>Pending invitations</h2>
      {!page.invitations ? <p class="muted">Loading…</p> : page.invitations.length === 0 ? <p id="no-invitations" class="muted">None.</p> : (
        <table id="invitations">
          <thead><tr><th>Email</th><th>Role</th><th>Expires</th><th /></tr></thead>
          <tbody>
            {page.invitations.map((i) => (
              <tr key={i.id} data-invitation={i.id} data-email={i.email}>
                <td>{i.email}</td><td>{i.role}</td><td>{new Date(i['expires-at']).toLocaleDateString()}</td>
                <td><button type="button" class="secondary revoke-invitation" disabled={state.busy} onClick={() => dispatch(['org/revoke', i.id])}>Revoke</button></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

export function OrgPage() {
  const { state, dispatch } = useApp();
  const id = orgIdOf(location.pathname);
  const page = state.orgPage?.id === id ? state.orgPage : undefined;
  // the page follows the path (switcher, links, back and forward)
  useEffect(() => {
    if (id && state.orgPage?.id !== id) dispatch(['org/open', id]);
  }, [id]);
  if (!id || page?.status === 'missing') {
    return <><h1>Organization</h1><p id="org-missing" class="error" role="alert">This organization does not exist, or you are not a member.</p><p><Link to="orgs">Your organizations</Link></p></>;
  }
  if (!page?.org) return <p class="muted">Loading organization…</p>;
  const org = page.org;
  const owners = page.members?.filter((m) => m.role === 'owner').length ?? 0;
  return (
    <>
      <h1 id="org-name" data-org={org.id} data-role={org.role}>{org.name}</h1>
      <p class="muted">{org.personal ? 'Your personal organization. ' : ''}Your role: <strong id="org-role">{org.role}</strong></p>
      <p id="org-plan">Plan: <strong>{org.subscription?.plan ?? 'none'}</strong>{org.subscription && org.subscription.status !== 'none' ? ` (${org.subscription.status})` : ''}
        {rank(org.role) >= rank('admin') && <> · <a id="org-billing" href={billingPath(org.id)} onClick={(e) => {
          if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
          e.preventDefault();
          dispatch(['router/navigate', { route: 'billing', path: billingPath(org.id) }]);
        }}>Billing</a></>}
      </p>
      {rank(org.role) >= rank('admin') && <p><AuditLogLink orgId={org.id} /></p>}
      <h2>Members</h2>
      {!page.members ? <p class="muted">Loading members…</p> : (
        <table id="members">
          <thead><tr><th>Member</th><th>Role</th><th /></tr></thead>
          <tbody>{page.members.map((m) => <MemberRow key={m['account-id']} member={m} me={state.account?.id} myRole={org.role} owners={owners} />)}</tbody>
        </table>
      )}
      {rank(org.role) >= rank('admin') && (
        <p><a href={apiKeysPath(org.id)} id="org-api-keys-link" onClick={(e) => {
          if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
          e.preventDefault();
          dispatch(['router/navigate', { route: 'org-api-keys', path: apiKeysPath(org.id) }]);
        }}>API keys</a> <span class="muted">for programs acting in this organization</span></p>
      )}
      {rank(org.role) >= rank('admin') && (
        <p><a href={webhooksPath(org.id)} id="org-webhooks-link" onClick={(e) => {
          if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
          e.preventDefault();
          dispatch(['router/navigate', { route: 'org-webhooks', path: webhooksPath(org.id) }]);
        }}>Webhooks</a> <span class="muted">events sent to your systems</span></p>
      )}
      {rank(org.role) >= rank('admin') && <Invitations />}
      {org.role === 'owner' && !org.personal && (
        <p><button id="delete-org" type="button" class="danger" disabled={state.busy}
          onClick={() => { if (confirm(`Delete ${org.name} for every member?`)) dispatch(['org/delete']); }}>Delete organization</button></p>
      )}
    </>
  );
}

export function AcceptInvitationPage() {
  const { state, dispatch } = useApp();
  const page = state.invitationPage;
  const status = page?.status ?? 'accepting';
  return (
    <>
      <h1>Invitation</h1>
      <p id="invitation-status" data-status={status} role={status === 'failed' || status === 'mismatch' ? 'alert' : 'status'}
        class={status === 'failed' || status === 'mismatch' ? 'error' : undefined}>
        {status === 'needs-session' ? 'You were invited to an organization. Log in, or sign up with the address the invitation was sent to, to accept it.'
          : status === 'accepting' ? 'Accepting the invitation…' : page?.message}
      </p>
      {status === 'needs-session' && (
        <p><Link to="log-in" id="invitation-log-in">Log in</Link> · <Link to="sign-up" id="invitation-sign-up">Sign up</Link></p>
      )}
      {(status === 'unverified' || status === 'mismatch') && (
        <p><button id="invitation-retry" type="button" disabled={state.busy} onClick={() => dispatch(['invitation/accept'])}>Try again</button></p>
      )}
    </>
  );
}
