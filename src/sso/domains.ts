/**
 * An organization's domains (docs/sso.md, "1. Verify a domain (admins)"): claimed by an admin,
 * verified by a DNS TXT record `_saas-verification.<domain>` holding the random value we gave.
 * A verified domain belongs to one organization: the partial unique index (migration 0018)
 * decides, so two organizations verifying at once cannot both win.
 */
import { phrase, msg } from '../i18n/messages.js';
import { randomBytes } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { appendAudit, type RequestOrigin } from '../audit/log.js';
import type { DB } from '../db/database.js';
import { conflict, notFound, requestCoercion } from '../http/errors.js';
import type { Actor } from '../http/routes.js';
import type { Logger } from '../logging/logger.js';
import { refusePersonal } from '../orgs/module.js';
import type { OrgDomain, OrgDomains } from './schemas.js';

export const TXT_PREFIX = '_saas-verification';
const MAX_DOMAINS = 50;

/** The TXT strings of `name` (each record's chunks joined); [] when there is none. */
export type TxtResolver = (name: string) => Promise<string[]>;

/** node's resolver; with `servers` (DNS_SERVERS) those instead of the system's. */
export function txtResolver(servers: readonly string[]): TxtResolver {
  const resolver = new Resolver({ timeout: 5000, tries: 2 });
  if (servers.length > 0) resolver.setServers([...servers]);
  return async (name) => {
    try {
      return (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''));
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'ENODATA' || code === 'ENOTFOUND' || code === 'ESERVFAIL' || code === 'EREFUSED' || code === 'ETIMEOUT') return [];
      throw err;
    }
  };
}

/** A domain name as typed: lower-cased, without a trailing dot; undefined when it is not a registrable-looking name. */
export function normalizeDomain(raw: string): string | undefined {
  const domain = raw.trim().toLowerCase().replace(/\.$/, '');
  if (domain.length > 253 || !/^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/.test(domain)) return undefined;
  return domain;
}

/** The domain part of an email address, lower-cased. */
export const domainOf = (email: string): string =>
  email
    .slice(email.lastIndexOf('@') + 1)
    .trim()
    .toLowerCase();

interface DomainRow {
  id: string;
  domain: string;
  txt_value: string;
  verified_at: Date | null;
  created_at: Date;
}

const toDomain = (row: DomainRow): OrgDomain => ({
  id: row.id,
  domain: row.domain,
  verified: row.verified_at !== null,
  'verified-at': row.verified_at ? new Date(row.verified_at).toISOString() : null,
  'txt-name': `${TXT_PREFIX}.${row.domain}`,
  'txt-value': row.txt_value,
  'created-at': new Date(row.created_at).toISOString(),
});

const COLUMNS = ['id', 'domain', 'txt_value', 'verified_at', 'created_at'] as const;
const takenElsewhere = (domain: string) =>
  conflict(phrase('{domain} is verified by another organization', { domain }), { type: 'domain-taken', field: 'domain' });
const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === '23505';

export interface DomainCaller {
  organizationId: string;
  actor: Actor;
  origin: RequestOrigin;
}

export class DomainService {
  constructor(
    private readonly db: DB,
    private readonly resolveTxt: TxtResolver,
    private readonly log: Logger,
  ) {}

  async list(organizationId: string): Promise<OrgDomains> {
    const rows = await this.db
      .selectFrom('org_domain')
      .select(COLUMNS)
      .where('organization_id', '=', organizationId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return { domains: rows.map(toDomain) };
  }

  /** 400 for a name that is not a domain, 409 when this organization has it already or another verified it. */
  async add(caller: DomainCaller, raw: string): Promise<OrgDomain> {
    const domain = normalizeDomain(raw);
    if (!domain) throw requestCoercion('body', [{ path: '/domain', message: 'must be a domain name such as example.com' }]);
    try {
      return await this.db.transaction().execute(async (trx) => {
        // a verified domain would make its accounts members (SAML, SCIM): a personal organization has only its owner
        await refusePersonal(trx, caller.organizationId, msg('A personal organization has only its owner: claim domains for a shared organization'));
        const taken = await trx
          .selectFrom('org_domain')
          .select('organization_id')
          .where('domain', '=', domain)
          .where('verified_at', 'is not', null)
          .executeTakeFirst();
        if (taken && taken.organization_id !== caller.organizationId) throw takenElsewhere(domain);
        const count = await trx
          .selectFrom('org_domain')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('organization_id', '=', caller.organizationId)
          .executeTakeFirstOrThrow();
        if (Number(count.n) >= MAX_DOMAINS)
          throw conflict(phrase('An organization has at most {max} domains', { max: MAX_DOMAINS }), { type: 'too-many-domains' });
        const row = await trx
          .insertInto('org_domain')
          .values({
            organization_id: caller.organizationId,
            domain,
            txt_value: `saas-domain-verification=${randomBytes(24).toString('base64url')}`,
          })
          .returning(COLUMNS)
          .executeTakeFirstOrThrow();
        await appendAudit(trx, {
          action: 'sso.domain-added',
          organizationId: caller.organizationId,
          actor: caller.actor,
          target: { type: 'domain', id: row.id },
          details: { domain },
          origin: caller.origin,
        });
        return toDomain(row);
      });
    } catch (err) {
      if (isUniqueViolation(err))
        throw conflict(phrase('{domain} is already a domain of this organization', { domain }), { type: 'domain-exists', field: 'domain' });
      throw err;
    }
  }

  async remove(caller: DomainCaller, id: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const row = await trx
        .deleteFrom('org_domain')
        .where('organization_id', '=', caller.organizationId)
        .where('id', '=', id)
        .returning(['id', 'domain'])
        .executeTakeFirst();
      if (!row) throw notFound('No such domain in this organization');
      await appendAudit(trx, {
        action: 'sso.domain-removed',
        organizationId: caller.organizationId,
        actor: caller.actor,
        target: { type: 'domain', id: row.id },
        details: { domain: row.domain },
        origin: caller.origin,
      });
    });
  }

  /**
   * Looks up the TXT record now: verified when one holds the value (200), else 409
   * `domain-not-verified`; 409 `domain-taken` when another organization verified the domain first.
   */
  async verify(caller: DomainCaller, id: string): Promise<OrgDomain> {
    const row = await this.db
      .selectFrom('org_domain')
      .select(COLUMNS)
      .where('organization_id', '=', caller.organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw notFound('No such domain in this organization');
    if (row.verified_at) return toDomain(row);
    // one claimed before the rule is never verified
    await refusePersonal(this.db, caller.organizationId, msg('A personal organization has only its owner: claim domains for a shared organization'));
    const name = `${TXT_PREFIX}.${row.domain}`;
    const found = await this.resolveTxt(name);
    if (!found.some((value) => value.trim() === row.txt_value)) {
      this.log.info('sso/domain-not-verified', 'No TXT record with the verification value', {
        domain: row.domain,
        'organization-id': caller.organizationId,
        records: found.length,
      });
      throw conflict(phrase('No TXT record {name} holds the verification value yet (DNS changes can take a while to show)', { name }), {
        type: 'domain-not-verified',
        'txt-name': name,
        'txt-value': row.txt_value,
      });
    }
    try {
      const verified = await this.db.transaction().execute(async (trx) => {
        const updated = await trx
          .updateTable('org_domain')
          .set({ verified_at: new Date() })
          .where('id', '=', id)
          .where('organization_id', '=', caller.organizationId)
          .returning(COLUMNS)
          .executeTakeFirst();
        if (!updated) throw notFound('No such domain in this organization');
        await appendAudit(trx, {
          action: 'sso.domain-verified',
          organizationId: caller.organizationId,
          actor: caller.actor,
          target: { type: 'domain', id },
          details: { domain: row.domain },
          origin: caller.origin,
        });
        return updated;
      });
      this.log.info('sso/domain-verified', 'Domain verified', { domain: row.domain, 'organization-id': caller.organizationId });
      return toDomain(verified);
    } catch (err) {
      if (isUniqueViolation(err)) throw takenElsewhere(row.domain);
      throw err;
    }
  }

  /** The organization that verified the email's domain, if any. */
  async ownerOfEmail(email: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('org_domain')
      .select('organization_id')
      .where('domain', '=', domainOf(email))
      .where('verified_at', 'is not', null)
      .executeTakeFirst();
    return row?.organization_id;
  }

  /** Whether `email`'s domain is one the organization verified. */
  async isVerifiedFor(organizationId: string, email: string): Promise<boolean> {
    return (await this.ownerOfEmail(email)) === organizationId;
  }
}
