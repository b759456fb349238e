/**
 * The API keys page of an organization (`/orgs/<id>/api-keys`, admins): the live keys with
 * their last use, a form to make one (its secret shown once, with a copy button), and revoke
 * with a confirmation. It reads the state and dispatches the events of api-keys/events.ts.
 */
import { useEffect } from 'preact/hooks';
import { formFields, Submit, useApp } from '../ui/app.js';
import { orgPath } from '../orgs/events.js';
import { apiKeysOrgIdOf, type ApiKey, type CreatedApiKey } from './events.js';

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : 'never');

/** The new key, once: a warning, the key, a copy button. */
function CreatedKey({ created }: { created: CreatedApiKey }) {
  const { dispatch } = useApp();
  return (
    <section id="created-api-key" class="banner" role="alert" aria-labelledby="created-api-key-title">
      <h2 id="created-api-key-title">Copy the key {created.name} now</h2>
      <p>It will not be shown again: only a hash of it is kept. Store it where your program reads its secrets; if it is lost, revoke it and make another.</p>
      <div class="key-copy">
        <input id="new-api-key" readOnly value={created.key} aria-label="The new API key" spellcheck={false}
          onFocus={(e) => e.currentTarget.select()} />
        <button id="copy-api-key" type="button" onClick={() => dispatch(['api-keys/copy'])}>Copy</button>
      </div>
      <p><button id="close-api-key" type="button" class="secondary" onClick={() => dispatch(['api-keys/close-created'])}>I have stored it</button></p>
    </section>
  );
}

function KeyRow({ apiKey }: { apiKey: ApiKey }) {
  const { state, dispatch } = useApp();
  return (
    <tr data-api-key={apiKey.id} data-prefix={apiKey.prefix}>
      <td>{apiKey.name}<br /><code class="muted">sk_{apiKey.prefix}_…</code></td>
      <td>{apiKey.role}</td>
      <td>{new Date(apiKey['created-at']).toLocaleDateString()}</td>
      <td data-field="last-used-at">{when(apiKey['last-used-at'])}</td>
      <td>
        <button type="button" class="secondary revoke-api-key" disabled={state.busy} onClick={() => {
          if (confirm(`Revoke the key ${apiKey.name}? Programs using it are refused from this moment.`)) dispatch(['api-keys/revoke', apiKey.id]);
        }}>Revoke</button>
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
  if (!id || page?.status === 'missing') {
    return <><h1>API keys</h1><p id="org-missing" class="error" role="alert">This organization does not exist, or you are not a member.</p></>;
  }
  if (!page?.org) return <p class="muted">Loading…</p>;
  const org = page.org;
  const back = (
    <p><a href={orgPath(org.id)} id="back-to-org" onClick={(e) => {
      if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
      e.preventDefault();
      dispatch(['router/navigate', { route: 'org', path: orgPath(org.id) }]);
    }}>← {org.name}</a></p>
  );
  if (org.role === 'member') {
    return <>{back}<h1>API keys</h1><p id="api-keys-forbidden" class="error" role="alert">Only admins and owners manage the API keys of {org.name}.</p></>;
  }
  return (
    <>
      {back}
      <h1 id="api-keys-title">API keys of {org.name}</h1>
      <p class="muted">A key lets a program act in this organization with the key's role: send it as <code>Authorization: Bearer sk_…</code>.</p>
      {page.created && <CreatedKey created={page.created} />}
      {!page.keys ? <p class="muted">Loading keys…</p> : page.keys.length === 0 ? <p id="no-api-keys" class="muted">No keys yet.</p> : (
        <table id="api-keys">
          <thead><tr><th>Key</th><th>Role</th><th>Created</th><th>Last used</th><th /></tr></thead>
          <tbody>{page.keys.map((k) => <KeyRow key={k.id} apiKey={k} />)}</tbody>
        </table>
      )}
      <h2>Create a key</h2>
      <form key={page.formResets} id="create-api-key" onSubmit={(e) => { e.preventDefault(); dispatch(['api-keys/create', formFields(e.currentTarget)]); }}>
        <div class="field">
          <label for="api-key-name">Name</label>
          <input id="api-key-name" name="name" required maxLength={100} placeholder="what it is for, e.g. CI deploys" />
        </div>
        <div class="field">
          <label for="api-key-role">Role</label>
          <select id="api-key-role" name="role">
            <option value="member">member</option>
            <option value="admin">admin</option>
          </select>
        </div>
        <Submit>Create key</Submit>
      </form>
    </>
  );
}
