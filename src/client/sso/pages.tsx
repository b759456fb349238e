/**
 * The Single sign-on page of an organization (`/orgs/<id>/sso`): domains with the TXT record to
 * create and a verify button (admins); the SAML connection (paste the IdP's metadata; our ACS URL,
 * entity id and metadata URL to give the IdP; default role; enforced; certificate expiry) and
 * SCIM tokens with the base URL (owners). And the log-in page's "Sign in with SSO".
 */
import { useEffect } from 'preact/hooks';
import { useApp } from '../ui/app.js';
import { Button, Submit } from '../ui/button.js';
import { Actions, Card, DataList, Muted, Stack } from '../ui/card.js';
import { ConfirmButton } from '../ui/dialog.js';
import { Alert, Badge } from '../ui/feedback.js';
import { CheckboxGroup, CopyField, Field, Form, SelectField, TextAreaField } from '../ui/field.js';
import { PageHeader } from '../ui/page-header.js';
import { DOMAIN_FORM, SAML_FORM, ssoOrgIdOf, TOKEN_FORM, type OrgDomain } from './events.js';
import { SSO_SIGN_IN_FORM } from './sign-in-events.js';
import { BackToOrg, OrgPageGate } from '../orgs/org-page.js';
import { GRANTED_ROLES, roleOptions } from '../orgs/roles.js';
import { dateOnly } from '../ui/dates.js';

const ROLE_OPTIONS = roleOptions(GRANTED_ROLES);
const origin = () => location.origin;

function DomainItem({ domain }: { domain: OrgDomain }) {
  const { state, dispatch } = useApp();
  return (
    <li data-domain={domain.domain} data-verified={String(domain.verified)} class="space-y-2 rounded-lg border border-line p-3">
      <p class="flex flex-wrap items-center gap-2">
        <strong class="break-all">{domain.domain}</strong>
        {domain.verified ? <Badge tone="success">verified</Badge> : <Badge tone="warning">not verified</Badge>}
      </p>
      {!domain.verified && (
        <>
          <p class="text-sm">Create a TXT record, then verify:</p>
          <CopyField id={`txt-name-${domain.id}`} label={`TXT record name for ${domain.domain}`} value={domain['txt-name']} />
          <CopyField id={`txt-value-${domain.id}`} label={`TXT record value for ${domain.domain}`} value={domain['txt-value']} />
        </>
      )}
      <Actions>
        {!domain.verified && (
          <Button class="verify-domain" disabled={state.busy} onClick={() => dispatch(['sso/verify-domain', domain.id])}>
            Verify
          </Button>
        )}
        <ConfirmButton
          class="delete-domain"
          disabled={state.busy}
          title={`Remove ${domain.domain}?`}
          message="Single sign-on and enforcement stop applying to its addresses."
          confirmLabel="Remove domain"
          onConfirm={() => dispatch(['sso/delete-domain', domain.id])}
        >
          Remove
        </ConfirmButton>
      </Actions>
    </li>
  );
}

function Domains() {
  const { state, dispatch } = useApp();
  const page = state.ssoPage!;
  const domains = page.domains;
  return (
    <Card title="Domains" id="sso-domains" description="Addresses of a verified domain sign in through this organization's identity provider.">
      {!domains ? (
        <p class="text-sm text-muted" role="status">
          Loading domains…
        </p>
      ) : domains.length === 0 ? (
        <Muted id="no-domains">No domains yet.</Muted>
      ) : (
        <ul id="domains" aria-label="Domains" class="space-y-3">
          {domains.map((d) => (
            <DomainItem key={d.id} domain={d} />
          ))}
        </ul>
      )}
      <Form id={DOMAIN_FORM} resetKey={page.resets} onSubmit={(f) => dispatch(['sso/add-domain', f])}>
        <Field form={DOMAIN_FORM} name="domain" label="Domain" required maxLength={253} placeholder="example.com" spellcheck={false} />
        <Submit>Add domain</Submit>
      </Form>
    </Card>
  );
}

function Connection() {
  const { state, dispatch } = useApp();
  const page = state.ssoPage!;
  const c = page.connection;
  const id = page.orgId;
  const soon = c ? Date.parse(c['certificate-expires-at']) - Date.now() < 30 * 86400_000 : false;
  return (
    <Card
      title="SAML connection"
      id="sso-saml"
      description="Enter these values in the identity provider (Okta, Microsoft Entra ID, Google Workspace), then paste its metadata."
    >
      <DataList
        id="sp-values"
        items={[
          ['ACS URL', <code class="break-all">{c?.['acs-url'] ?? `${origin()}/api/sso/saml/${id}/acs`}</code>],
          ['Entity ID (audience)', <code class="break-all">{c?.['sp-entity-id'] ?? `${origin()}/api/sso/saml/${id}`}</code>],
          ['SP metadata URL', <code class="break-all">{c?.['sp-metadata-url'] ?? `${origin()}/api/sso/saml/${id}/metadata`}</code>],
          ['Name ID', 'the email address'],
        ]}
      />
      {c === undefined ? (
        <p class="text-sm text-muted" role="status">
          Loading…
        </p>
      ) : c === null ? (
        <Muted id="no-connection">No identity provider connected yet.</Muted>
      ) : (
        <>
          <DataList
            id="saml-connection"
            data-status={c.enforced ? 'enforced' : 'optional'}
            items={[
              ['Identity provider', <span class="break-all">{c['idp-entity-id']}</span>],
              ['Sign-on URL', <span class="break-all">{c['idp-sso-url']}</span>],
              [
                'Certificate expires',
                <>
                  {dateOnly(c['certificate-expires-at'])} {soon && <Badge tone="warning">soon</Badge>}
                </>,
              ],
              ['Role of new members', c['default-role']],
              ['Enforced', c.enforced ? 'yes: members of these domains sign in only with SSO (owners keep their methods)' : 'no'],
            ]}
          />
          <Actions>
            <ConfirmButton
              class="delete-connection"
              disabled={state.busy}
              title="Remove the SAML connection?"
              message="Nobody can sign in through the identity provider any more."
              confirmLabel="Remove connection"
              onConfirm={() => dispatch(['sso/delete-connection'])}
            >
              Remove connection
            </ConfirmButton>
          </Actions>
        </>
      )}
      <Form
        id={SAML_FORM}
        resetKey={page.resets}
        onSubmit={(f, data) =>
          dispatch(['sso/save-connection', { metadata: f['metadata-xml'], role: f.role, enforced: data.getAll('enforced').includes('true') }])
        }
      >
        <TextAreaField
          form={SAML_FORM}
          name="metadata-xml"
          label="Identity provider metadata (XML)"
          required
          maxLength={200000}
          rows={5}
          hint="Paste the whole metadata document; it is never fetched from a URL."
        />
        <SelectField form={SAML_FORM} id="saml-role" name="role" label="Role of new members" options={ROLE_OPTIONS} value={c?.['default-role'] ?? 'member'} />
        <CheckboxGroup
          form={SAML_FORM}
          id="saml-enforced"
          name="enforced"
          legend="Enforcement"
          options={[{ value: 'true', label: 'Require SSO for these domains (password, email link and providers refused; owners keep theirs)' }]}
        />
        <Submit>{c ? 'Replace connection' : 'Save connection'}</Submit>
      </Form>
    </Card>
  );
}

function ScimTokens() {
  const { state, dispatch } = useApp();
  const page = state.ssoPage!;
  const tokens = page.tokens;
  return (
    <Card title="Directory sync (SCIM)" id="sso-scim" description="A directory creates, deactivates and removes members with a token.">
      <DataList items={[['SCIM base URL', <code class="break-all" id="scim-base-url">{`${origin()}/scim/v2`}</code>]]} />
      {page.newToken && (
        <Alert id="new-scim-token" tone="success">
          <p>Token {page.newToken.name}: copy it now, it is not shown again.</p>
          <CopyField id="scim-token-value" label={`SCIM token ${page.newToken.name}`} value={page.newToken.token} />
        </Alert>
      )}
      {!tokens ? (
        <p class="text-sm text-muted" role="status">
          Loading tokens…
        </p>
      ) : tokens.length === 0 ? (
        <Muted id="no-scim-tokens">No tokens yet.</Muted>
      ) : (
        <ul id="scim-tokens" aria-label="SCIM tokens" class="space-y-2">
          {tokens.map((t) => (
            <li key={t.id} data-token={t.id} class="flex flex-wrap items-center justify-between gap-2">
              <span>
                <strong>{t.name}</strong>{' '}
                <span class="text-sm text-muted">
                  ({t['default-role']}; {t['last-used-at'] ? `last used ${dateOnly(t['last-used-at'])}` : 'never used'})
                </span>
              </span>
              <ConfirmButton
                class="revoke-scim-token"
                disabled={state.busy}
                title={`Revoke ${t.name}?`}
                message="The directory can no longer sync with it."
                confirmLabel="Revoke token"
                onConfirm={() => dispatch(['sso/revoke-token', t.id])}
              >
                Revoke
              </ConfirmButton>
            </li>
          ))}
        </ul>
      )}
      <Form id={TOKEN_FORM} resetKey={page.resets} onSubmit={(f) => dispatch(['sso/create-token', f])}>
        <Field form={TOKEN_FORM} name="name" label="Token name" required maxLength={100} placeholder="Okta" />
        <SelectField form={TOKEN_FORM} id="scim-role" name="role" label="Role of provisioned members" options={ROLE_OPTIONS} value="member" />
        <Submit>Create token</Submit>
      </Form>
    </Card>
  );
}

export function SsoPage() {
  const { state, dispatch } = useApp();
  const id = ssoOrgIdOf(location.pathname);
  const page = state.ssoPage?.orgId === id ? state.ssoPage : undefined;
  useEffect(() => {
    if (id) dispatch(['sso/open', id]);
  }, [id]);
  if (!id || page?.status === 'missing') return <OrgPageGate title="Single sign-on" missing />;
  if (!page?.org) return <OrgPageGate title="Single sign-on" />;
  const org = page.org;
  const back = <BackToOrg org={org} />;
  if (org.role === 'member') {
    return (
      <>
        <PageHeader title="Single sign-on" back={back} />
        <Alert id="sso-forbidden" tone="error">
          Only admins and owners manage single sign-on of {org.name}.
        </Alert>
      </>
    );
  }
  return (
    <>
      <PageHeader
        title={`Single sign-on of ${org.name}`}
        id="sso-title"
        back={back}
        description="Verified domains, the SAML identity provider and directory sync (SCIM)."
      />
      <Stack>
        <Domains />
        {org.role === 'owner' ? (
          <>
            <Connection />
            <ScimTokens />
          </>
        ) : (
          <Muted id="sso-owner-only">Owners manage the SAML connection and SCIM tokens.</Muted>
        )}
      </Stack>
    </>
  );
}

/** The log-in page's "Sign in with SSO": the email picks the organization's identity provider. */
export function SsoSignIn() {
  const { dispatch } = useApp();
  return (
    <details id="sso-sign-in-details" class="text-sm">
      <summary class="cursor-pointer">Sign in with SSO</summary>
      <div class="mt-3">
        <Form id={SSO_SIGN_IN_FORM} onSubmit={(f) => dispatch(['sso/start', f])}>
          <Field form={SSO_SIGN_IN_FORM} name="email" label="Work email" type="email" required autoComplete="username" />
          <Submit>Continue with SSO</Submit>
        </Form>
      </div>
    </details>
  );
}
