/**
 * The domain and SAML routes, as data (docs/sso.md): an organization's admins manage its domains,
 * its owners its SAML connection; the SP metadata is public; `POST /api/auth/sso/start` and the ACS
 * are the browser's sign-in.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { addressKey, take } from '../auth/rate-limit.js';
import { setSessionCookies, type AccountRouteOptions } from '../account/routes.js';
import { TWO_FACTOR_PAGE } from '../account/first-factor.js';
import { SecondFactorRequiredError, type AccountService } from '../account/service.js';
import { appendAudit, originOf } from '../audit/log.js';
import type { DB } from '../db/database.js';
import { ErrorBody, unauthorized } from '../http/errors.js';
import { ref, route, type Actor, type Membership, type MembershipResolver, type RouteGroup } from '../http/routes.js';
import type { Logger } from '../logging/logger.js';
import { OrgId } from '../orgs/module.js';
import type { ConnectionService } from './connections.js';
import type { DomainCaller, DomainService } from './domains.js';
import {
  AcsForm,
  AddDomain,
  DomainPath,
  OrgDomain,
  OrgDomains,
  OrgParam,
  OrgSamlConnection,
  PutSamlConnection,
  SamlConnection,
  SsoStart,
  SsoStartUrl,
} from './schemas.js';
import { claimedRequestId } from './response-bounds.js';
import { SsoRefused } from './assertion.js';
import type { SignOnService } from './signon.js';
import { Type } from 'typebox';

const error = ref(ErrorBody);
const LOG_IN_FAILED = '/log-in?error=sso-failed';

function caller(request: FastifyRequest, membership: Membership | undefined, actor: Actor | undefined): DomainCaller {
  if (!membership || !actor) throw unauthorized();
  return { organizationId: membership.organizationId, actor, origin: originOf(request) };
}

export function ssoAdminRoutes(domains: DomainService, connections: ConnectionService, memberships: MembershipResolver): RouteGroup {
  return {
    prefix: '/api/orgs',
    tags: ['Single sign-on'],
    auth: 'required',
    bodyLimit: 256 * 1024,
    memberships,
    routes: [
      route({
        method: 'POST',
        path: '/:id/domains',
        summary: 'Claim a domain',
        description:
          'Answers the TXT record to create (`_saas-verification.<domain>` holding `txt-value`), then `verify`. 400 for a name ' +
          'that is not a domain; 409 `domain-exists` when this organization has it, `domain-taken` when another organization verified it, ' +
          '`reason: personal` in a personal organization (it has only its owner).',
        orgRole: 'admin',
        schemas: { params: OrgId, body: ref(AddDomain), response: { 201: ref(OrgDomain), 409: error } },
        handler: ({ request, parameters, membership, actor }) => domains.add(caller(request, membership, actor), parameters.body.domain),
      }),
      route({
        method: 'GET',
        path: '/:id/domains',
        summary: "The organization's domains",
        orgRole: 'admin',
        schemas: { params: OrgId, response: { 200: ref(OrgDomains) } },
        handler: ({ membership }) => domains.list(membership!.organizationId),
      }),
      route({
        method: 'POST',
        path: '/:id/domains/:domainId/verify',
        summary: 'Verify a domain by its DNS TXT record',
        description:
          "Looks the TXT record up now (DNS_SERVERS, or the system's resolver). 409 `domain-not-verified` when no record " +
          'holds the value; 409 `domain-taken` when another organization verified the domain first.',
        orgRole: 'admin',
        schemas: { params: DomainPath, response: { 200: ref(OrgDomain), 404: error, 409: error } },
        handler: ({ request, parameters, membership, actor }) => domains.verify(caller(request, membership, actor), parameters.path.domainId),
      }),
      route({
        method: 'DELETE',
        path: '/:id/domains/:domainId',
        summary: 'Remove a domain',
        orgRole: 'admin',
        schemas: { params: DomainPath, response: { 204: null, 404: error } },
        handler: async ({ request, parameters, membership, actor }) => {
          await domains.remove(caller(request, membership, actor), parameters.path.domainId);
          return undefined;
        },
      }),
      route({
        method: 'PUT',
        path: '/:id/sso/saml',
        summary: 'Set the SAML connection',
        description:
          "From the identity provider's metadata, pasted (never fetched): its entity id, HTTP-Redirect sign-on URL and signing " +
          'certificates. 400 with the reason for metadata that cannot be used (not XML, a DOCTYPE, no IDPSSODescriptor, no certificate...); ' +
          '409 `reason: personal` in a personal organization.',
        orgRole: 'owner',
        // the admin's own identity provider would sign in as every account of the domains, after the session ends
        impersonation: 'forbidden',
        schemas: { params: OrgId, body: ref(PutSamlConnection), response: { 200: ref(SamlConnection), 409: error } },
        handler: ({ request, parameters, membership, actor }) => connections.put(caller(request, membership, actor), parameters.body),
      }),
      route({
        method: 'GET',
        path: '/:id/sso/saml',
        summary: 'The SAML connection',
        description: '`{connection: null}` before one is set up (a normal state); 404 only for an organization that does not exist (or is not yours).',
        orgRole: 'owner',
        schemas: { params: OrgId, response: { 200: ref(OrgSamlConnection), 404: error } },
        handler: ({ membership }) => connections.get(membership!.organizationId),
      }),
      route({
        method: 'DELETE',
        path: '/:id/sso/saml',
        summary: 'Remove the SAML connection',
        orgRole: 'owner',
        impersonation: 'forbidden',
        schemas: { params: OrgId, response: { 204: null, 404: error } },
        handler: async ({ request, membership, actor }) => {
          await connections.remove(caller(request, membership, actor));
          return undefined;
        },
      }),
    ],
  };
}

export interface SignOnRouteDeps {
  db: DB;
  /** counts sign-ons started per client address (SSO_START_LIMIT_ADDRESS); null: no limit */
  startLimiter: RateLimiterAbstract | null;
  /** counts ACS posts per client address (SSO_ACS_LIMIT_ADDRESS); null: no limit */
  acsAddressLimiter: RateLimiterAbstract | null;
  /** counts ACS posts per organization and request id they name (SSO_ACS_LIMIT_REQUEST); null: no limit */
  acsRequestLimiter: RateLimiterAbstract | null;
  signOn: SignOnService;
  connections: ConnectionService;
  accounts: AccountService;
  appUrl: string;
  cookies: AccountRouteOptions;
  log: Logger;
}

function redirect(reply: FastifyReply, location: string): undefined {
  reply.code(302).header('location', location).header('cache-control', 'no-store');
  return undefined;
}

export function ssoSignOnRoutes(deps: SignOnRouteDeps): RouteGroup[] {
  const { signOn, connections, accounts, appUrl, log, db } = deps;

  /** A refusal: logged with its reason (never the assertion), audited in the organization's log, and the browser sent to the log-in page. */
  const refuse = async (request: FastifyRequest, reply: FastifyReply, organizationId: string, err: unknown, code = 'sso-failed') => {
    const reason = err instanceof SsoRefused ? err.reason : err instanceof SecondFactorRequiredError ? 'second-factor-required' : 'error';
    const facts = { 'organization-id': organizationId, reason, detail: (err as Error)?.message?.slice(0, 300) ?? String(err) };
    if (reason === 'error') log.error('sso/saml-failed', 'SAML sign-on failed', { ...facts, class: (err as Error)?.constructor?.name });
    else log.info('sso/saml-refused', `SAML sign-on refused: ${reason}`, facts);
    try {
      const org = await db.selectFrom('organization').select('id').where('id', '=', organizationId).executeTakeFirst();
      if (org) {
        await appendAudit(db, {
          action: 'sso.sign-in-refused',
          organizationId,
          actor: {},
          details: { reason, method: 'saml' },
          origin: originOf(request),
        });
      }
    } catch (auditErr) {
      log.error('sso/audit-failed', `Could not record a refused SAML sign-on: ${(auditErr as Error).message}`);
    }
    return redirect(reply, `${appUrl}${code === 'sso-failed' ? LOG_IN_FAILED : `/log-in?error=${code}`}`);
  };

  return [
    {
      prefix: '/api/auth/sso',
      tags: ['Single sign-on'],
      auth: 'none',
      bodyLimit: 4 * 1024,
      routes: [
        route({
          method: 'POST',
          path: '/start',
          summary: 'Start signing in with SSO',
          description:
            "The email's domain picks the organization (a verified domain with a SAML connection): answers the identity " +
            "provider's URL with a SAMLRequest (HTTP-Redirect) and RelayState, for the browser to navigate to. 404 `sso-not-configured` otherwise.",
          schemas: { body: ref(SsoStart), response: { 200: ref(SsoStartUrl), 404: error, 429: error } },
          async handler({ parameters, request }) {
            // each start stores a request: bounded per client address (429 with Retry-After)
            if (deps.startLimiter) await take(deps.startLimiter, addressKey(request.ip));
            const { url, organizationId } = await signOn.start(parameters.body.email);
            log.info('sso/saml-started', 'SAML sign-on started', { 'organization-id': organizationId });
            return { url };
          },
        }),
      ],
    },
    {
      prefix: '/api/sso/saml',
      tags: ['Single sign-on'],
      auth: 'none',
      // a signed response with a few certificates fits well within this; more is refused before decoding
      bodyLimit: 320 * 1024,
      routes: [
        route({
          method: 'GET',
          path: '/:orgId/metadata',
          summary: 'Our SAML service provider metadata',
          description: 'Public XML for the identity provider: our entity id and ACS URL (HTTP-POST). 404 for an unknown organization.',
          schemas: { params: OrgParam, response: { 200: Type.String({ description: 'SAML metadata (application/samlmetadata+xml)' }), 404: error } },
          async handler({ parameters, reply }) {
            const xml = await connections.spMetadata(parameters.path.orgId);
            reply.type('application/samlmetadata+xml; charset=utf-8');
            return xml;
          },
        }),
        route({
          method: 'POST',
          path: '/:orgId/acs',
          summary: 'The SAML Assertion Consumer Service',
          description:
            "The identity provider's HTTP-POST of `SAMLResponse` (form). Exempt from CSRF: the IdP's page posts it cross-site; " +
            'the signed, single-use response is its protection. Every check (signature, issuer, audience, destination and recipient, ' +
            "time window, InResponseTo, assertion id, the email's domain) passing: the account is signed in (created or linked), made a " +
            'member, the refresh cookie set, 302 to `APP_URL/account`. A new member past the seat cap of the plan: 302 to `/log-in?error=seat-limit`. Any other failure: 302 to `/log-in?error=sso-failed`, the reason logged ' +
            'and audited (docs/sso.md); a response over 192 KiB, 5,000 elements or 64 levels is refused before it is parsed. Posts are ' +
            'limited per client address (SSO_ACS_LIMIT_ADDRESS) and per request id named (SSO_ACS_LIMIT_REQUEST): 429 beyond. An account with two-factor on: no session yet, 302 to `APP_URL/log-in/two-factor#mfa-token=…` ' +
            '(the second step; a fragment never reaches a server or a log). The first proof of an address whose account had a password ' +
            'removes it and signs in all the same (302 to `APP_URL/account`, no token in any URL): the account sets a new one with this sign-in.',
          csrf: false,
          schemas: { params: OrgParam, body: ref(AcsForm), response: { 302: null, 429: error } },
          async handler({ parameters, request, reply }) {
            const organizationId = parameters.path.orgId;
            // bounded before any decoding: per client address, then per request id named (a refused post leaves it live)
            if (deps.acsAddressLimiter) await take(deps.acsAddressLimiter, addressKey(request.ip));
            const requestId = deps.acsRequestLimiter && claimedRequestId(Buffer.from(parameters.body.SAMLResponse, 'base64').toString('utf8'));
            if (deps.acsRequestLimiter && requestId) await take(deps.acsRequestLimiter, `${organizationId}:${requestId}`);
            let identity: Awaited<ReturnType<SignOnService['accept']>>;
            try {
              identity = await signOn.accept(organizationId, parameters.body.SAMLResponse, originOf(request));
            } catch (err) {
              // a full plan is said as such (the log-in page explains it); every other refusal stays sso-failed
              return refuse(request, reply, organizationId, err, err instanceof SsoRefused && err.reason === 'seat-limit' ? 'seat-limit' : undefined);
            }
            try {
              const session = await accounts.startSession(
                identity.accountId,
                originOf(request),
                {
                  details: { method: 'saml', 'organization-id': organizationId },
                  origin: originOf(request),
                },
                null,
              );
              if ('mfaRequired' in session) {
                log.info('sso/saml-second-step', 'SAML sign-in of an account with two-factor: on to the second step', {
                  'organization-id': organizationId,
                  'account-id': identity.accountId,
                });
                return redirect(reply, `${appUrl}${TWO_FACTOR_PAGE}#mfa-token=${encodeURIComponent(session.mfaRequired['mfa-token'])}`);
              }
              setSessionCookies(reply, session, deps.cookies);
            } catch (err) {
              if (err instanceof SecondFactorRequiredError) return refuse(request, reply, organizationId, err, 'second-factor-required');
              if ((err as { status?: number }).status === 403) return refuse(request, reply, organizationId, err, 'account-locked');
              return refuse(request, reply, organizationId, err);
            }
            log.info('sso/saml-signed-in', 'Signed in with SAML', {
              'organization-id': organizationId,
              'account-id': identity.accountId,
              created: identity.created,
              joined: identity.joined,
            });
            return redirect(reply, `${appUrl}/account`);
          },
        }),
      ],
    },
  ];
}
