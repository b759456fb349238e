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
import { BackToOrg, OrgPageGate } from '../orgs/org-page.js';
import { GRANTED_ROLES, roleOptions } from '../orgs/roles.js';
import { dateOnly } from '../ui/dates.js';
import { t } from '../i18n/words.js';

const ROLE_OPTIONS = roleOptions(GRANTED_ROLES);
const origin = () => location.origin;

function DomainItem({ domain }: { domain: OrgDomain }) {
  const { state, dispatch } = useApp();
  return (
    <li data-domain={domain.domain} data-verified={String(domain.verified)} class="space-y-2 rounded-lg border border-line p-3">
      <p class="flex flex-wrap items-center gap-2">
        <strong class="break-all">{domain.domain}</strong>
        {domain.verified ? <Badge tone="success">{t('verified')}</Badge> : <Badge tone="warning">{t('not verified')}</Badge>}
      </p>
      {!domain.verified && (
        <>
          <p class="text-sm">{t('Create a TXT record, then verify:')}</p>
          <CopyField id={`txt-name-${domain.id}`} label={t('TXT record name for {domain}', { domain: domain.domain })} value={domain['txt-name']} />
          <CopyField id={`txt-value-${domain.id}`} label={t('TXT record value for {domain}', { domain: domain.domain })} value={domain['txt-value']} />
        </>
      )}
      <Actions>
        {!domain.verified && (
          <Button class="verify-domain" disabled={state.busy} onClick={() => dispatch(['sso/verify-domain', domain.id])}>
            {t('Verify')}
          </Button>
        )}
        <ConfirmButton
          class="delete-domain"
          disabled={state.busy}
          title={t('Remove {domain}?', { domain: domain.domain })}
          message={t('Single sign-on and enforcement stop applying to its addresses.')}
          confirmLabel={t('Remove domain')}
          onConfirm={() => dispatch(['sso/delete-domain', domain.id])}
        >
          {t('Remove')}
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
    <Card title={t('Domains')} id="sso-domains" description={t("Addresses of a verified domain sign in through this organization's identity provider.")}>
      {!domains ? (
        <p class="text-sm text-muted" role="status">
          {t('Loading domains…')}
        </p>
      ) : domains.length === 0 ? (
        <Muted id="no-domains">{t('No domains yet.')}</Muted>
      ) : (
        <ul id="domains" aria-label={t('Domains')} class="space-y-3">
          {domains.map((d) => (
            <DomainItem key={d.id} domain={d} />
          ))}
        </ul>
      )}
      <Form id={DOMAIN_FORM} resetKey={page.resets} onSubmit={(f) => dispatch(['sso/add-domain', f])}>
        <Field form={DOMAIN_FORM} name="domain" label={t('Domain')} required maxLength={253} placeholder="example.com" spellcheck={false} />
        <Submit>{t('Add domain')}</Submit>
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
      title={t('SAML connection')}
      id="sso-saml"
      description={t('Enter these values in the identity provider (Okta, Microsoft Entra ID, Google Workspace), then paste its metadata.')}
    >
      <DataList
        id="sp-values"
        items={[
          ['ACS URL', <code class="break-all">{c?.['acs-url'] ?? `${origin()}/api/sso/saml/${id}/acs`}</code>],
          [t('Entity ID (audience)'), <code class="break-all">{c?.['sp-entity-id'] ?? `${origin()}/api/sso/saml/${id}`}</code>],
          [t('SP metadata URL'), <code class="break-all">{c?.['sp-metadata-url'] ?? `${origin()}/api/sso/saml/${id}/metadata`}</code>],
          [t('Name ID'), t('the email address')],
        ]}
      />
      {c === undefined ? (
        <p class="text-sm text-muted" role="status">
          {t('Loading…')}
        </p>
      ) : c === null ? (
        <Muted id="no-connection">{t('No identity provider connected yet.')}</Muted>
      ) : (
        <>
          <DataList
            id="saml-connection"
            data-status={c.enforced ? 'enforced' : 'optional'}
            items={[
              [t('Identity provider'), <span class="break-all">{c['idp-entity-id']}</span>],
              [t('Sign-on URL'), <span class="break-all">{c['idp-sso-url']}</span>],
              [
                t('Certificate expires'),
                <>
                  {dateOnly(c['certificate-expires-at'])} {soon && <Badge tone="warning">{t('soon')}</Badge>}
                </>,
              ],
              [t('Role of new members'), c['default-role']],
              [t('Enforced'), c.enforced ? t('yes: members of these domains sign in only with SSO (owners keep their methods)') : 'no'],
            ]}
          />
          <Actions>
            <ConfirmButton
              class="delete-connection"
              disabled={state.busy}
              title={t('Remove the SAML connection?')}
              message={t('Nobody can sign in through the identity provider any more.')}
              confirmLabel={t('Remove connection')}
              onConfirm={() => dispatch(['sso/delete-connection'])}
            >
              {t('Remove connection')}
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
          label={t('Identity provider metadata (XML)')}
          required
          maxLength={200000}
          rows={5}
          hint={t('Paste the whole metadata document; it is never fetched from a URL.')}
        />
        <SelectField
          form={SAML_FORM}
          id="saml-role"
          name="role"
          label={t('Role of new members')}
          options={ROLE_OPTIONS}
          value={c?.['default-role'] ?? 'member'}
        />
        <CheckboxGroup
          form={SAML_FORM}
          id="saml-enforced"
          name="enforced"
          legend={t('Enforcement')}
          options={[{ value: 'true', label: t('Require SSO for these domains (password, email link and providers refused; owners keep theirs)') }]}
        />
        <Submit>{c ? t('Replace connection') : t('Save connection')}</Submit>
      </Form>
    </Card>
  );
}

function ScimTokens() {
  const { state, dispatch } = useApp();
  const page = state.ssoPage!;
  const tokens = page.tokens;
  return (
    <Card title={t('Directory sync (SCIM)')} id="sso-scim" description={t('A directory creates, deactivates and removes members with a token.')}>
      <DataList items={[[t('SCIM base URL'), <code class="break-all" id="scim-base-url">{`${origin()}/scim/v2`}</code>]]} />
      {page.newToken && (
        <Alert id="new-scim-token" tone="success">
          <p>{t('Token {name}: copy it now, it is not shown again.', { name: page.newToken.name })}</p>
          <CopyField id="scim-token-value" label={t('SCIM token {name}', { name: page.newToken.name })} value={page.newToken.token} />
        </Alert>
      )}
      {!tokens ? (
        <p class="text-sm text-muted" role="status">
          {t('Loading tokens…')}
        </p>
      ) : tokens.length === 0 ? (
        <Muted id="no-scim-tokens">{t('No tokens yet.')}</Muted>
      ) : (
        <ul id="scim-tokens" aria-label={t('SCIM tokens')} class="space-y-2">
          {tokens.map((token) => (
            <li key={token.id} data-token={token.id} class="flex flex-wrap items-center justify-between gap-2">
              <span>
                <strong>{token.name}</strong>{' '}
                <span class="text-sm text-muted">
                  ({token['default-role']};{' '}
                  {token['last-used-at'] ? t('last used {lastUsedAt}', { lastUsedAt: dateOnly(token['last-used-at']) }) : t('never used')})
                </span>
              </span>
              <ConfirmButton
                class="revoke-scim-token"
                disabled={state.busy}
                title={t('Revoke {name}?', { name: token.name })}
                message={t('The directory can no longer sync with it.')}
                confirmLabel={t('Revoke token')}
                onConfirm={() => dispatch(['sso/revoke-token', token.id])}
              >
                {t('Revoke')}
              </ConfirmButton>
            </li>
          ))}
        </ul>
      )}
      <Form id={TOKEN_FORM} resetKey={page.resets} onSubmit={(f) => dispatch(['sso/create-token', f])}>
        <Field form={TOKEN_FORM} name="name" label={t('Token name')} required maxLength={100} placeholder={t('Okta')} />
        <SelectField form={TOKEN_FORM} id="scim-role" name="role" label={t('Role of provisioned members')} options={ROLE_OPTIONS} value="member" />
        <Submit>{t('Create token')}</Submit>
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
  if (!id || page?.status === 'missing') return <OrgPageGate title={t('Single sign-on')} missing />;
  if (!page?.org) return <OrgPageGate title={t('Single sign-on')} />;
  const org = page.org;
  const back = <BackToOrg org={org} />;
  if (org.role === 'member') {
    return (
      <>
        <PageHeader title={t('Single sign-on')} back={back} />
        <Alert id="sso-forbidden" tone="error">
          {t('Only admins and owners manage single sign-on of {name}.', { name: org.name })}
        </Alert>
      </>
    );
  }
  return (
    <>
      <PageHeader
        title={t('Single sign-on of {name}', { name: org.name })}
        id="sso-title"
        back={back}
        description={t('Verified domains, the SAML identity provider and directory sync (SCIM).')}
      />
      <Stack>
        <Domains />
        {org.role === 'owner' ? (
          <>
            <Connection />
            <ScimTokens />
          </>
        ) : (
          <Muted id="sso-owner-only">{t('Owners manage the SAML connection and SCIM tokens.')}</Muted>
        )}
      </Stack>
    </>
  );
}
