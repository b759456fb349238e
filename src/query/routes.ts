/** `POST /api/cqrs/query`: one endpoint, dispatching on `query/kind`. */
import { Type } from 'typebox';
import { ErrorBody } from '../http/errors.js';
import { ref, route, type RouteGroup } from '../http/routes.js';
import type { QueryRegistry } from '../http/queries.js';

export const QueryEnvelope = Type.Object(
  { 'query/kind': Type.String({ minLength: 1, maxLength: 100, description: 'a keyword, e.g. `account/me` (`:account/me` in EDN/Transit)' }) },
  { additionalProperties: true },
);

export function queryRoutes(registry: QueryRegistry): RouteGroup {
  const results = registry.definitions.map((d) => ref(d.result));
  // the kinds' own scopes (a generated kind's `<plural>:read` too): the endpoint lets in a token with any of them
  const scopes = [...new Set(registry.definitions.flatMap((d) => d.scopes ?? []))].sort();
  return {
    prefix: '/api/cqrs',
    tags: ['Query'],
    auth: 'optional',
    bodyLimit: 64 * 1024,
    routes: [
      route({
        method: 'POST',
        path: '/query',
        summary: 'Run a query',
        description:
          `Runs the query named by \`query/kind\`; the other top-level keys are its parameters and the ` +
          `response body is its result. Kinds: ${registry.definitions.map((d) => `\`${d.kind}\` (${d.summary})`).join(', ')}. ` +
          'An unknown kind is 400 `unknown-query-kind` listing the known ones. The kinds of an organization (with `org-id`) ' +
          'answer 404 for a non-member and 403 below their role, and take an API key of that organization as the caller.',
        apiKeys: true,
        // an OAuth token with a scope of some kind reaches the endpoint; each kind checks its own
        ...(scopes.length > 0 ? { scopes } : {}),
        schemas: {
          body: QueryEnvelope,
          // the registry checks a result against its own kind's schema, which is stricter than the union
          response: { 200: Type.Unknown({ description: "the kind's result" }), 401: ref(ErrorBody), 403: ref(ErrorBody), 404: ref(ErrorBody) },
        },
        docs: { body: registry.documentedBody(), response: { 200: Type.Union(results) } },
        async handler({ request, parameters, user, apiKey }) {
          return registry.run(parameters.body as Record<string, unknown>, { user, apiKey, failure: request.authFailure });
        },
      }),
    ],
  };
}
