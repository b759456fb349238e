/**
 * The OAuth routes, as data (docs/oauth.md): organizations' apps (admins), the consent page's
 * API, a person's connected apps, and the protected resource's metadata (RFC 9728). None declares
 * `scopes`: an OAuth token never manages apps, consents or grants (403 `insufficient-scope`).
 */
import type { FastifyRequest } from 'fastify';
import { originOf } from '../audit/log.js';
import { ErrorBody, notFound, unauthorized } from '../http/errors.js';
import { ref, route, type Membership, type MembershipResolver, type RouteGroup } from '../http/routes.js';
import { OrgId } from '../orgs/schemas.js';
import { apiResourceOf, mcpResourceOf, OIDC_SCOPES } from '../shared/oauth-scopes.js';
import type { AppRequest, OAuthAppService } from './apps.js';
import type { Grants } from './grants.js';
import type { Interactions } from './interactions.js';
import {
  ClientSecret,
  ConnectedAppPath,
  ConnectedApps,
  CreatedOAuthApp,
  CreateOAuthApp,
  InteractionPath,
  OAuthApp,
  OAuthAppPath,
  OAuthApps,
  OAuthConsent,
  OAuthConsentResult,
  OAuthInteraction,
  ProtectedResource,
  UpdateOAuthApp,
} from './schemas.js';

type Caller = { request: FastifyRequest; user?: { id: string }; membership?: Membership };

/** `orgRole` routes always have both: the route layer checked them */
function admin({ request, user, membership }: Caller): AppRequest {
  if (!user || !membership) throw unauthorized();
  return { membership, accountId: user.id, origin: originOf(request) };
}

export function oauthAppRoutes(apps: OAuthAppService, memberships: MembershipResolver): RouteGroup {
  return {
    prefix: '/api/orgs',
    tags: ['OAuth apps'],
    auth: 'required',
    bodyLimit: 16 * 1024,
    memberships,
    routes: [
      route({
        method: 'POST',
        path: '/:id/oauth-apps',
        summary: 'Register an OAuth app',
        description: 'A confidential app gets `client-secret` in this answer only (only its hash is kept); a public app uses PKCE alone.',
        orgRole: 'admin',
        impersonation: 'forbidden',
        schemas: { params: OrgId, body: ref(CreateOAuthApp), response: { 201: ref(CreatedOAuthApp) } },
        handler: (c) => apps.create(admin(c), c.parameters.body),
      }),
      route({
        method: 'GET',
        path: '/:id/oauth-apps',
        summary: "The organization's OAuth apps",
        orgRole: 'admin',
        schemas: { params: OrgId, response: { 200: ref(OAuthApps) } },
        handler: ({ membership }) => apps.list(membership!.organizationId),
      }),
      route({
        method: 'GET',
        path: '/:id/oauth-apps/:appId',
        summary: 'One OAuth app',
        orgRole: 'admin',
        schemas: { params: OAuthAppPath, response: { 200: ref(OAuthApp), 404: ref(ErrorBody) } },
        handler: ({ membership, parameters }) => apps.get(membership!.organizationId, parameters.path.appId),
      }),
      route({
        method: 'PATCH',
        path: '/:id/oauth-apps/:appId',
        summary: 'Edit an OAuth app',
        description: 'Its name, redirect URIs or scopes; grants already made keep their scopes until they end.',
        orgRole: 'admin',
        impersonation: 'forbidden',
        schemas: { params: OAuthAppPath, body: ref(UpdateOAuthApp), response: { 200: ref(OAuthApp), 404: ref(ErrorBody) } },
        handler: (c) => apps.update(admin(c), c.parameters.path.appId, c.parameters.body),
      }),
      route({
        method: 'POST',
        path: '/:id/oauth-apps/:appId/rotate-secret',
        summary: "Rotate a confidential app's secret",
        description: 'The new secret is in this answer only; the previous one stops at once.',
        orgRole: 'admin',
        impersonation: 'forbidden',
        schemas: { params: OAuthAppPath, response: { 200: ref(ClientSecret), 404: ref(ErrorBody) } },
        handler: (c) => apps.rotateSecret(admin(c), c.parameters.path.appId),
      }),
      route({
        method: 'DELETE',
        path: '/:id/oauth-apps/:appId',
        summary: 'Delete an OAuth app',
        description: 'Every grant of the app ends: its tokens are refused on every instance within a second.',
        orgRole: 'admin',
        impersonation: 'forbidden',
        schemas: { params: OAuthAppPath, response: { 204: null, 404: ref(ErrorBody) } },
        async handler(c) {
          await apps.delete(admin(c), c.parameters.path.appId);
          return undefined;
        },
      }),
    ],
  };
}

export function interactionRoutes(interactions: Interactions): RouteGroup {
  return {
    prefix: '/api/oauth',
    tags: ['OAuth'],
    auth: 'required',
    bodyLimit: 4 * 1024,
    routes: [
      route({
        method: 'GET',
        path: '/interactions/:uid',
        summary: 'A pending sign-in request of an app (the consent page)',
        description:
          'What the app asks; `consent-required` is false when an earlier Allow covers it. 404 when unknown, finished or expired, or ' +
          'asked from another browser than the one the request started in (its signed interaction cookie).',
        schemas: { params: InteractionPath, response: { 200: ref(OAuthInteraction), 404: ref(ErrorBody) } },
        handler: ({ request, user, parameters }) => interactions.details(user!, parameters.path.uid, request.cookies),
      }),
      route({
        method: 'POST',
        path: '/interactions/:uid/consent',
        summary: 'Allow or deny an app',
        description:
          'Allow signs the request in as the caller and grants the asked scopes; Deny answers the app `access_denied`. Send the browser to `redirect-to`.',
        impersonation: 'forbidden',
        // a grant is a lasting credential: one that adds offline_access or a write scope, or that the app asked a fresh sign-in for
        reauth: {
          when: (request) =>
            interactions.needsReauthentication(request.user!, (request.params as { uid: string }).uid, request.cookies, (request.body as OAuthConsent).allow),
          whenText: 'When an Allow adds `offline_access` or a write scope, or the app asked a fresh sign-in (`prompt=login`, `max_age`)',
        },
        schemas: { params: InteractionPath, body: ref(OAuthConsent), response: { 200: ref(OAuthConsentResult), 404: ref(ErrorBody) } },
        handler: ({ request, user, parameters }) =>
          interactions.consent(
            user!,
            parameters.path.uid,
            request.cookies,
            parameters.body.allow,
            // the password itself checked in this request, never a body field alone
            request.reauthenticated === 'password',
            originOf(request),
          ),
      }),
    ],
  };
}

export function connectedAppRoutes(grants: Grants): RouteGroup {
  return {
    prefix: '/api/account',
    tags: ['OAuth'],
    auth: 'required',
    routes: [
      route({
        method: 'GET',
        path: '/connected-apps',
        summary: 'The apps the account granted access to',
        description: 'One entry per live grant.',
        schemas: { response: { 200: ref(ConnectedApps) } },
        handler: ({ user }) => grants.list(user!.id),
      }),
      route({
        method: 'DELETE',
        path: '/connected-apps/:id',
        summary: 'Revoke a connected app',
        description: 'The grant ends: its access tokens are refused on every instance within a second, its refresh tokens die, its consent is forgotten.',
        impersonation: 'forbidden',
        schemas: { params: ConnectedAppPath, response: { 204: null, 404: ref(ErrorBody) } },
        async handler({ request, user, parameters }) {
          if (!(await grants.revokeByAccount(user!.id, parameters.path.id, originOf(request))))
            throw notFound('No such connected app', { id: parameters.path.id });
          return undefined;
        },
      }),
    ],
  };
}

/**
 * RFC 9728: what each protected resource is and where its tokens come from (a 401's
 * `resource_metadata` names it): the API (also at the bare well-known path) and the MCP server.
 */
/**
 * `mcpScopes`: what the MCP server's document lists, the OpenID scopes and the tools' (known once
 * every route is): an MCP client asks what it lists (MCP's scope selection), and a registered or
 * metadata-document client may ask no more, so listing every API scope would fail its first sign-in.
 */
export function protectedResourceRoutes(appUrl: string, apiScopes: readonly string[], productName: string, mcpScopes: () => readonly string[]): RouteGroup {
  const document = (resource: string, name: string): ProtectedResource => ({
    resource,
    authorization_servers: [`${appUrl}/oauth`],
    scopes_supported: [...OIDC_SCOPES, ...apiScopes].filter((s) => resource === apiResourceOf(appUrl) || mcpScopes().includes(s)),
    bearer_methods_supported: ['header'],
    resource_name: name,
  });
  const metadata = (path: string, resource: string, name: string) =>
    route({
      method: 'GET',
      path,
      summary: `Protected resource metadata of ${resource === apiResourceOf(appUrl) ? 'the API' : 'the MCP server'} (RFC 9728)`,
      schemas: { response: { 200: ref(ProtectedResource) } },
      handler({ reply }) {
        reply.header('cache-control', 'public, max-age=300');
        return document(resource, name);
      },
    });
  const api = apiResourceOf(appUrl);
  const mcp = mcpResourceOf(appUrl);
  return {
    prefix: '/.well-known',
    tags: ['OAuth'],
    auth: 'none',
    routes: [
      metadata('/oauth-protected-resource/api', api, `${productName} API`),
      metadata('/oauth-protected-resource', api, `${productName} API`),
      metadata('/oauth-protected-resource/mcp', mcp, `${productName} MCP server`),
    ],
  };
}
