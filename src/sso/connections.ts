/**
 * An organization's SAML connection (docs/sso.md, "2. Connect the identity provider (owners)"): set
 * from the identity provider's pasted metadata by an owner, read, deleted; our side's values
 * (entity id, ACS URL, metadata URL) for the owner to enter at the identity provider.
 */
import { msg } from '../i18n/messages.js';
import { appendAudit } from '../audit/log.js';
import type { DB } from '../db/database.js';
import type { SamlConnectionTable } from '../db/schema.js';
import { notFound, requestCoercion } from '../http/errors.js';
import type { Selectable } from 'kysely';
import type { Logger } from '../logging/logger.js';
import { refusePersonal } from '../orgs/module.js';
import type { DomainCaller } from './domains.js';
import { InvalidMetadata, parseIdpMetadata } from './metadata.js';
import { nodeSaml } from './saml-library.js';
import type { OrgSamlConnection, PutSamlConnection, SamlConnection } from './schemas.js';

export type ConnectionRow = Selectable<SamlConnectionTable>;

export const EMAIL_NAME_ID = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';

/** Our side of an organization's connection: the values the identity provider is given. */
export class ServiceProviderUrls {
  constructor(private readonly appUrl: string) {}
  entityId = (orgId: string) => `${this.appUrl}/api/sso/saml/${orgId}`;
  acsUrl = (orgId: string) => `${this.appUrl}/api/sso/saml/${orgId}/acs`;
  metadataUrl = (orgId: string) => `${this.appUrl}/api/sso/saml/${orgId}/metadata`;
}

export class ConnectionService {
  constructor(
    private readonly db: DB,
    private readonly urls: ServiceProviderUrls,
    private readonly log: Logger,
  ) {}

  private shape(row: ConnectionRow): SamlConnection {
    const orgId = row.organization_id;
    return {
      'sp-entity-id': this.urls.entityId(orgId),
      'acs-url': this.urls.acsUrl(orgId),
      'sp-metadata-url': this.urls.metadataUrl(orgId),
      'idp-entity-id': row.idp_entity_id,
      'idp-sso-url': row.idp_sso_url,
      'certificate-expires-at': new Date(row.certificate_expires_at).toISOString(),
      'default-role': row.default_role,
      enforced: row.enforced,
    };
  }

  async row(organizationId: string): Promise<ConnectionRow | undefined> {
    return this.db.selectFrom('saml_connection').selectAll().where('organization_id', '=', organizationId).executeTakeFirst();
  }

  /** The connection, or `connection: null` before one is set up (a normal state, not a 404). */
  async get(organizationId: string): Promise<OrgSamlConnection> {
    const row = await this.row(organizationId);
    return { connection: row ? this.shape(row) : null };
  }

  /** Sets (or replaces) the connection; 400 with the reason for metadata we cannot use. */
  async put(caller: DomainCaller, input: PutSamlConnection): Promise<SamlConnection> {
    let metadata: Awaited<ReturnType<typeof parseIdpMetadata>>;
    try {
      metadata = await parseIdpMetadata(input['metadata-xml']);
    } catch (err) {
      if (err instanceof InvalidMetadata)
        throw requestCoercion('body', [{ path: '/metadata-xml', message: err.message }], 'Unusable identity provider metadata');
      throw err;
    }
    const orgId = caller.organizationId;
    const row = await this.db.transaction().execute(async (trx) => {
      await refusePersonal(trx, orgId, msg('A personal organization has only its owner: connect single sign-on to a shared organization'));
      const before = await trx
        .selectFrom('saml_connection')
        .select(['idp_certificates', 'default_role', 'enforced', 'expiry_warned_at'])
        .where('organization_id', '=', orgId)
        .forUpdate()
        .executeTakeFirst();
      const sameCertificates = before !== undefined && before.idp_certificates.join() === metadata.certificates.join();
      const values = {
        metadata_xml: input['metadata-xml'],
        idp_entity_id: metadata.entityId,
        idp_sso_url: metadata.ssoUrl,
        idp_certificates: metadata.certificates,
        certificate_expires_at: metadata.certificateExpiresAt,
        default_role: input['default-role'] ?? before?.default_role ?? 'member',
        enforced: input.enforced ?? before?.enforced ?? false,
        // a new certificate is warned about afresh
        expiry_warned_at: sameCertificates ? before.expiry_warned_at : null,
        updated_at: new Date(),
      };
      const saved = await trx
        .insertInto('saml_connection')
        .values({ organization_id: orgId, ...values })
        .onConflict((oc) => oc.column('organization_id').doUpdateSet(values))
        .returningAll()
        .executeTakeFirstOrThrow();
      await appendAudit(trx, {
        action: 'sso.saml-configured',
        organizationId: orgId,
        actor: caller.actor,
        target: { type: 'saml-connection', id: orgId },
        details: { 'idp-entity-id': metadata.entityId, 'default-role': values.default_role, enforced: values.enforced },
        origin: caller.origin,
      });
      return saved;
    });
    this.log.info('sso/saml-configured', 'SAML connection set', { 'organization-id': orgId, 'idp-entity-id': metadata.entityId, enforced: row.enforced });
    return this.shape(row);
  }

  async remove(caller: DomainCaller): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const gone = await trx.deleteFrom('saml_connection').where('organization_id', '=', caller.organizationId).returning('idp_entity_id').executeTakeFirst();
      if (!gone) throw notFound('This organization has no SAML connection', { type: 'sso-not-configured' });
      await appendAudit(trx, {
        action: 'sso.saml-removed',
        organizationId: caller.organizationId,
        actor: caller.actor,
        target: { type: 'saml-connection', id: caller.organizationId },
        details: { 'idp-entity-id': gone.idp_entity_id },
        origin: caller.origin,
      });
    });
  }

  /** Our SP metadata for an existing organization (before any connection: the IdP needs it first); 404 otherwise. */
  async spMetadata(organizationId: string): Promise<string> {
    const org = await this.db.selectFrom('organization').select('personal').where('id', '=', organizationId).executeTakeFirst();
    if (!org || org.personal) throw notFound('No such organization');
    const { generateServiceProviderMetadata } = await nodeSaml();
    return generateServiceProviderMetadata({
      issuer: this.urls.entityId(organizationId),
      callbackUrl: this.urls.acsUrl(organizationId),
      identifierFormat: EMAIL_NAME_ID,
      wantAssertionsSigned: true,
    });
  }
}
