/**
 * The admin pages (platform admins only; docs/admin.md): accounts (search, then an account's page
 * with lock / unlock / impersonate, each with a reason and confirmed in a dialog), organizations,
 * the numbers, the admin audit log; and the banner every page shows during an impersonation.
 * Someone who is not a platform admin is told the page does not exist, as the server says.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { Link, useApp } from '../ui.js';
import { adminAccountIdOf, adminAccountPath, type AdminAccount, type AdminAuditEntry, type AdminOrganization, type Listing } from './events.js';

const date = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleDateString() : '—');
const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');
const yes = (b: boolean) => (b ? 'yes' : 'no');

/** The "Admin" entry of the navigation, for platform admins only. */
export function AdminNavLink() {
  const { state } = useApp();
  if (!state.account?.['platform-admin']) return null;
  return <Link to="admin" id="nav-admin">Admin</Link>;
}

/** On every page while an admin acts as the account: who it is, and the way back. */
export function ImpersonationBanner() {
  const { state, dispatch } = useApp();
  const by = state.account?.['impersonated-by'];
  if (!by || !state.token) return null;
  return (
    <div id="impersonation-banner" class="banner impersonation" role="status">
      <strong>Viewing as {state.account?.email}</strong> (support session of {by.email || 'a platform admin'}). Some actions are not allowed.{' '}
      <button id="impersonation-stop" type="button" class="secondary" disabled={state.busy} onClick={() => dispatch(['admin/stop'])}>Stop</button>
    </div>
  );
}

/** The admin pages' own navigation, and the guard: a page that does not exist for anyone else. */
function AdminFrame({ title, children }: { title: string; children: ComponentChildren }) {
  const { state } = useApp();
  if (!state.account) return <p class="muted">Loading…</p>;
  if (!state.account['platform-admin']) {
    return <><h1 tabIndex={-1}>Page not found</h1><p id="admin-not-found">There is no such page. <Link to="account">Your account</Link></p></>;
  }
  return (
    <>
      <nav aria-label="Admin" class="admin-tabs">
        <Link to="admin" id="admin-tab-accounts">Accounts</Link>
        <Link to="admin-orgs" id="admin-tab-orgs">Organizations</Link>
        <Link to="admin-stats" id="admin-tab-stats">Numbers</Link>
        <Link to="admin-audit" id="admin-tab-audit">Audit log</Link>
      </nav>
      <h1 id="admin-title" tabIndex={-1}>{title}</h1>
      {children}
    </>
  );
}

function SearchForm({ id, label, listKey, q }: { id: string; label: string; listKey: 'adminAccounts' | 'adminOrgs'; q: string }) {
  const { dispatch } = useApp();
  return (
    <form id={id} role="search" class="admin-search" onSubmit={(e) => {
      e.preventDefault();
      dispatch(['admin/list', listKey, new FormData(e.currentTarget).get('q')]);
    }}>
      <label for={`${id}-q`}>{label}</label>
      <input id={`${id}-q`} name="q" type="search" maxLength={254} defaultValue={q} autoComplete="off" />
      <button type="submit">Search</button>
    </form>
  );
}

function More({ id, listing, listKey }: { id: string; listing: Listing<unknown>; listKey: 'adminAccounts' | 'adminOrgs' | 'adminAudit' }) {
  const { dispatch } = useApp();
  if (!listing.nextCursor) return null;
  return (
    <p><button id={id} type="button" class="secondary" disabled={listing.loadingMore} onClick={() => dispatch(['admin/list-more', listKey])}>
      {listing.loadingMore ? 'Loading…' : 'Load more'}
    </button></p>
  );
}

/** Loading, failed, or empty: the sentence for a list without rows to show. */
function ListState({ listing, empty }: { listing: Listing<unknown> | undefined; empty: string }) {
  if (!listing || listing.status === 'loading') return <p class="muted" role="status">Loading…</p>;
  if (listing.status === 'failed') return <p class="error" role="alert">The list could not be loaded.</p>;
  if (listing.items.length === 0) return <p class="muted" data-empty>{empty}</p>;
  return null;
}

function AccountLink({ account }: { account: { id: string; email: string } }) {
  const { dispatch } = useApp();
  return (
    <a href={adminAccountPath(account.id)} data-account={account.id} onClick={(e) => {
      if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
      e.preventDefault();
      dispatch(['router/navigate', { route: 'admin-account', path: adminAccountPath(account.id) }]);
    }}>{account.email}</a>
  );
}

export function AdminAccountsPage() {
  const { state } = useApp();
  const listing = state.adminAccounts;
  return (
    <AdminFrame title="Accounts">
      <SearchForm id="admin-account-search" label="Email or name starts with" listKey="adminAccounts" q={listing?.q ?? ''} />
      <ListState listing={listing} empty={listing?.q ? 'No account matches.' : 'No accounts yet.'} />
      {listing && listing.items.length > 0 && (
        <table id="admin-accounts">
          <thead><tr><th scope="col">Email</th><th scope="col">Name</th><th scope="col">Verified</th><th scope="col">Status</th><th scope="col">Last seen</th></tr></thead>
          <tbody>
            {listing.items.map((a: AdminAccount) => (
              <tr key={a.id} data-email={a.email}>
                <td><AccountLink account={a} /></td>
                <td>{a.name ?? '—'}</td>
                <td>{yes(a['email-verified'])}</td>
                <td data-field="status">{a.locked ? <span class="badge locked">locked</span> : 'active'}{a['two-factor-enabled'] ? ' · 2FA' : ''}</td>
                <td>{date(a['last-seen-at'])}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {listing && <More id="admin-accounts-more" listing={listing} listKey="adminAccounts" />}
    </AdminFrame>
  );
}

/** The dialog that confirms lock, unlock or impersonate: native `<dialog>`, focus inside while open. */
function ConfirmDialog() {
  const { state, dispatch } = useApp();
  const ref = useRef<HTMLDialogElement>(null);
  const pending = state.adminConfirm;
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (pending && !dialog.open) dialog.showModal();
    if (!pending && dialog.open) dialog.close();
  }, [pending]);
  const email = state.adminAccount?.account?.email ?? '';
  const text = pending?.action === 'lock'
    ? `Lock ${email}? Every session ends now and no sign-in works until it is unlocked.`
    : pending?.action === 'unlock'
      ? `Unlock ${email}? Signing in works again.`
      : `Sign in as ${email} for at most one hour? Everything you change is recorded with your name.`;
  return (
    <dialog id="admin-confirm" ref={ref} aria-labelledby="admin-confirm-text" onClose={() => { if (state.adminConfirm) dispatch(['admin/confirm-cancel']); }}>
      <p id="admin-confirm-text">{pending ? text : ''}</p>
      <div class="actions">
        <button id="admin-confirm-yes" type="button" class={pending?.action === 'lock' ? 'danger' : undefined} onClick={() => dispatch(['admin/confirmed'])}>
          {pending?.action === 'lock' ? 'Lock' : pending?.action === 'unlock' ? 'Unlock' : 'Impersonate'}
        </button>
        <button id="admin-confirm-no" type="button" class="secondary" onClick={() => dispatch(['admin/confirm-cancel'])}>Cancel</button>
      </div>
    </dialog>
  );
}

/** A reason and a button: asks for the dialog's confirmation. */
function ReasonForm({ id, action, label, required, danger }: { id: string; action: 'lock' | 'unlock' | 'impersonate'; label: string; required: boolean; danger?: boolean }) {
  const { state, dispatch } = useApp();
  return (
    <form id={id} class="reason-form" onSubmit={(e) => {
      e.preventDefault();
      dispatch(['admin/confirm', action, new FormData(e.currentTarget).get('reason')]);
    }}>
      <div class="field">
        <label for={`${id}-reason`}>Reason{required ? '' : ' (optional)'}</label>
        <input id={`${id}-reason`} name="reason" type="text" required={required} maxLength={500} autoComplete="off" />
      </div>
      <button type="submit" class={danger ? 'danger' : undefined} disabled={state.busy}>{label}</button>
    </form>
  );
}

export function AdminAccountPage() {
  const { state } = useApp();
  const id = adminAccountIdOf(location.pathname);
  const page = state.adminAccount?.id === id ? state.adminAccount : undefined;
  const a = page?.account;
  if (page?.status === 'missing' || !id) {
    return <AdminFrame title="Account"><p id="admin-account-missing" class="error" role="alert">No such account.</p><p><Link to="admin">All accounts</Link></p></AdminFrame>;
  }
  if (!a) return <AdminFrame title="Account"><p class="muted" role="status">{page?.status === 'failed' ? 'The account could not be loaded.' : 'Loading…'}</p></AdminFrame>;
  const self = a.id === state.account?.id;
  return (
    <AdminFrame title={a.email}>
      <dl id="admin-account">
        <dt>Name</dt><dd>{a.name ?? '—'}</dd>
        <dt>Verified</dt><dd>{yes(a['email-verified'])}</dd>
        <dt>Status</dt><dd data-field="status">{a.locked ? `locked ${when(a['locked-at'])}: ${a['locked-reason'] ?? ''}` : 'active'}</dd>
        <dt>Platform admin</dt><dd>{yes(a['platform-admin'])}</dd>
        <dt>Two-factor</dt><dd>{a['two-factor-enabled'] ? 'on' : 'off'}</dd>
        <dt>Created</dt><dd>{date(a['created-at'])}</dd>
        <dt>Last seen</dt><dd>{when(a['last-seen-at'])}</dd>
        <dt>Live sessions</dt><dd data-field="session-count">{a['session-count']}</dd>
        <dt>Subscription</dt><dd>{a.subscription.status}{a.subscription.plan ? ` (${a.subscription.plan})` : ''}</dd>
      </dl>
      <h2>Organizations</h2>
      <table id="admin-account-orgs">
        <thead><tr><th scope="col">Name</th><th scope="col">Role</th><th scope="col">Subscription</th></tr></thead>
        <tbody>
          {a.organizations.map((o) => (
            <tr key={o.id}><td>{o.name}{o.personal ? ' (personal)' : ''}</td><td>{o.role}</td><td>{o.subscription.status}{o.subscription.plan ? ` (${o.subscription.plan})` : ''}</td></tr>
          ))}
        </tbody>
      </table>
      <h2>Sign-in providers</h2>
      {a.identities.length === 0 ? <p class="muted">None linked.</p> : (
        <ul>{a.identities.map((i) => <li key={`${i.provider}-${i['created-at']}`}>{i.provider}{i.email ? ` (${i.email})` : ''}, linked {date(i['created-at'])}</li>)}</ul>
      )}
      {!self && !a['platform-admin'] && (
        <>
          <h2>Actions</h2>
          {a.locked
            ? <ReasonForm id="admin-unlock" action="unlock" label="Unlock" required={false} />
            : <>
              <ReasonForm id="admin-impersonate" action="impersonate" label="Impersonate" required />
              <ReasonForm id="admin-lock" action="lock" label="Lock account" required danger />
            </>}
        </>
      )}
      <ConfirmDialog />
    </AdminFrame>
  );
}

export function AdminOrgsPage() {
  const { state } = useApp();
  const listing = state.adminOrgs;
  return (
    <AdminFrame title="Organizations">
      <SearchForm id="admin-org-search" label="Name or slug starts with" listKey="adminOrgs" q={listing?.q ?? ''} />
      <ListState listing={listing} empty={listing?.q ? 'No organization matches.' : 'No organizations yet.'} />
      {listing && listing.items.length > 0 && (
        <table id="admin-orgs">
          <thead><tr><th scope="col">Name</th><th scope="col">Slug</th><th scope="col">Members</th><th scope="col">Subscription</th><th scope="col">Created</th></tr></thead>
          <tbody>
            {listing.items.map((o: AdminOrganization) => (
              <tr key={o.id} data-org={o.id}>
                <td>{o.name}{o.personal ? ' (personal)' : ''}</td>
                <td><code>{o.slug}</code></td>
                <td data-field="member-count">{o['member-count']}</td>
                <td>{o.subscription.status}{o.subscription.plan ? ` (${o.subscription.plan})` : ''}</td>
                <td>{date(o['created-at'])}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {listing && <More id="admin-orgs-more" listing={listing} listKey="adminOrgs" />}
    </AdminFrame>
  );
}

export function AdminStatsPage() {
  const { state } = useApp();
  const page = state.adminStats;
  const s = page?.stats;
  return (
    <AdminFrame title="Numbers">
      {!s ? <p class={page?.status === 'failed' ? 'error' : 'muted'} role="status">{page?.status === 'failed' ? 'The numbers could not be loaded.' : 'Loading…'}</p> : (
        <>
          <dl id="admin-stats">
            <dt>Accounts</dt><dd data-field="accounts">{s.accounts}</dd>
            <dt>Verified accounts</dt><dd data-field="verified-accounts">{s['verified-accounts']}</dd>
            <dt>Organizations</dt><dd data-field="organizations">{s.organizations}</dd>
            <dt>Sign-ups, last 7 days</dt><dd data-field="sign-ups-7d">{s['sign-ups-7d']}</dd>
            <dt>Sign-ups, last 30 days</dt><dd data-field="sign-ups-30d">{s['sign-ups-30d']}</dd>
          </dl>
          <h2>Subscriptions by plan</h2>
          {Object.keys(s.subscriptions).length === 0 ? <p class="muted">No live subscriptions.</p> : (
            <table id="admin-subscriptions">
              <thead><tr><th scope="col">Plan</th><th scope="col">Live subscriptions</th></tr></thead>
              <tbody>{Object.entries(s.subscriptions).map(([plan, n]) => <tr key={plan}><td>{plan}</td><td>{n}</td></tr>)}</tbody>
            </table>
          )}
        </>
      )}
    </AdminFrame>
  );
}

const who = (p: { email?: string; 'account-id': string | null } | undefined) => p?.email ?? (p?.['account-id'] ? `Account ${p['account-id'].slice(0, 8)}` : '—');
const detailsOf = (e: AdminAuditEntry) => Object.entries(e.details).map(([k, v]) => `${k}: ${v === null ? '—' : String(v)}`).join(' · ');

export function AdminAuditPage() {
  const { state } = useApp();
  const listing = state.adminAudit;
  return (
    <AdminFrame title="Admin audit log">
      <p class="muted">Every admin action, and every change made while impersonating, newest first.</p>
      <ListState listing={listing} empty="Nothing recorded yet." />
      {listing && listing.items.length > 0 && (
        <table id="admin-audit">
          <thead><tr><th scope="col">When</th><th scope="col">Action</th><th scope="col">By</th><th scope="col">As</th><th scope="col">On</th></tr></thead>
          <tbody>
            {listing.items.map((e: AdminAuditEntry) => (
              <tr key={e.id} data-action={e.action}>
                <td>{when(e['created-at'])}</td>
                <td data-field="action"><code>{e.action}</code>{Object.keys(e.details).length > 0 && <><br /><span class="muted">{detailsOf(e)}</span></>}</td>
                <td data-field="actor">{who(e.actor)}</td>
                <td data-field="impersonated">{e.impersonated ? who(e.impersonated) : '—'}</td>
                <td data-field="target">{e.target ? (e.target.email ?? `${e.target.type} ${e.target.id.slice(0, 8)}`) : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {listing && <More id="admin-audit-more" listing={listing} listKey="adminAudit" />}
    </AdminFrame>
  );
}
