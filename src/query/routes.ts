/** `POST /api/cqrs/query`: one endpoint, dispatching on `query/kind`. */
import { Type } from 'typebox';
import { ErrorBody } from '../http/errors.js';
import { ref, route, type RouteGroup } from '../http/routes.js';
import type { QueryRegistry } from './registry.js';

export const QueryEnvelope = Type.Object(
  { 'query/kind': Type.String({ minLength: 1, maxLength: 100, description: 'a keyword, e.g. `account/me` (`:account/me` in EDN/Transit)' }) },
  { additionalProperties: true },
);

export function queryRoutes(registry: QueryRegistry): RouteGroup {
  const results = registry.definitions.map((d) => ref(d.result));
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
        description: `Runs the query named by \`query/kind\`; the other top-level keys are its parameters and the ` +
          `response body is its result. Kinds: ${registry.definitions.map((d) => `\`${d.kind}\` (${d.summary})`).join(', ')}. ` +
          'An unknown kind is 400 `unknown-query-kind` listing the known ones.',
        schemas: {
          body: QueryEnvelope,
          response: { 200: Type.Union(results), 401: ref(ErrorBody) },
        },
        docs: { body: registry.documentedBody() },
        async handler({ parameters, user }) {
          return registry.run(parameters.body as Record<string, unknown>, user) as never;
        },
      }),
    ],
  };
}
