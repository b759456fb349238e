/** Named schemas of the domain and SAML routes (docs/sso.md). */
import { Type, type Static } from 'typebox';

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

export const OrgDomain = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    domain: Type.String(),
    verified: Type.Boolean(),
    'verified-at': Nullable(Type.String({ format: 'date-time' })),
    'txt-name': Type.String({ description: 'the TXT record to create: `_saas-verification.<domain>`' }),
    'txt-value': Type.String({ description: 'the value the TXT record must hold' }),
    'created-at': Type.String({ format: 'date-time' }),
  },
  { $id: 'org-domain', additionalProperties: false },
);
export type OrgDomain = Static<typeof OrgDomain>;

export const OrgDomains = Type.Object({ domains: Type.Array(OrgDomain, { description: 'oldest first' }) }, { $id: 'org-domains', additionalProperties: false });
export type OrgDomains = Static<typeof OrgDomains>;

export const AddDomain = Type.Object(
  { domain: Type.String({ minLength: 1, maxLength: 253, description: 'a domain name, e.g. `example.com`' }) },
  { $id: 'add-domain', additionalProperties: false },
);

export const DomainPath = Type.Object({ id: Type.String({ format: 'uuid' }), domainId: Type.String({ format: 'uuid' }) }, { additionalProperties: false });

const DefaultRole = Type.Enum(['member', 'admin'], { description: 'the role a new member signing in this way gets' });

export const PutSamlConnection = Type.Object(
  {
    'metadata-xml': Type.String({ minLength: 1, maxLength: 200_000, description: "the identity provider's SAML metadata, pasted (never fetched)" }),
    'default-role': Type.Optional(DefaultRole),
    enforced: Type.Optional(Type.Boolean({ description: 'accounts in the verified domains must sign in with this connection (owners keep their methods)' })),
  },
  { $id: 'put-saml-connection', additionalProperties: false },
);
export type PutSamlConnection = Static<typeof PutSamlConnection>;

export const SamlConnection = Type.Object(
  {
    'sp-entity-id': Type.String({ description: 'our entity id (the audience), for the identity provider' }),
    'acs-url': Type.String({ description: 'our Assertion Consumer Service URL (HTTP-POST)' }),
    'sp-metadata-url': Type.String(),
    'idp-entity-id': Type.String(),
    'idp-sso-url': Type.String(),
    'certificate-expires-at': Type.String({
      format: 'date-time',
      description: "when the identity provider's signing certificate expires (the latest, when several)",
    }),
    'default-role': DefaultRole,
    enforced: Type.Boolean(),
  },
  { $id: 'saml-connection', additionalProperties: false },
);
export type SamlConnection = Static<typeof SamlConnection>;

/** `GET /api/orgs/:id/sso/saml`: "not configured" is a normal state (null), never a 404 (docs/sso.md). */
export const OrgSamlConnection = Type.Object(
  { connection: Type.Union([SamlConnection, Type.Null()], { description: 'null: no identity provider connected yet' }) },
  { $id: 'org-saml-connection', additionalProperties: false },
);
export type OrgSamlConnection = Static<typeof OrgSamlConnection>;

export const SsoStart = Type.Object(
  { email: Type.String({ minLength: 3, maxLength: 254, description: 'the address to sign in with; its domain picks the organization' }) },
  { $id: 'sso-start', additionalProperties: false },
);

export const SsoStartUrl = Type.Object(
  { url: Type.String({ description: "the identity provider's sign-in URL with a SAMLRequest (HTTP-Redirect binding) and RelayState" }) },
  { $id: 'sso-start-url', additionalProperties: false },
);

export const AcsForm = Type.Object(
  {
    // no maxLength: a response too large is refused by the ACS like any other (a 302 with the reason logged), up to the body limit (413)
    SAMLResponse: Type.String({ minLength: 1, description: "base64 of the identity provider's `samlp:Response` (at most 192 KiB decoded)" }),
    RelayState: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  { $id: 'saml-acs-form', additionalProperties: true },
);
export type AcsForm = Static<typeof AcsForm>;

export const OrgParam = Type.Object({ orgId: Type.String({ format: 'uuid' }) }, { additionalProperties: false });

export const SSO_SCHEMAS = [OrgDomain, OrgDomains, AddDomain, PutSamlConnection, SamlConnection, OrgSamlConnection, SsoStart, SsoStartUrl, AcsForm];
