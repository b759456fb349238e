/**
 * The OpenAPI 3.0 document, generated from the route data, at `/openapi/openapi.json`, and
 * Swagger UI at `/openapi`, served from the app's own files (no CDN).
 */
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { toOpenApi30 } from './openapi-30.js';

export interface OpenApiOptions {
  /** the API scopes and what each lets an app do (the built-in ones and those modules declare) */
  scopes: Readonly<Record<string, string>>;
  version: string;
  description?: string;
}

export async function registerOpenApi(app: FastifyInstance, options: OpenApiOptions): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'SaaS API',
        version: options.version,
        description:
          options.description ??
          'Bodies are negotiated between JSON (`application/json`), EDN (`application/edn`) and Transit-over-JSON ' +
            '(`application/transit+json`) from `Content-Type` and `Accept`. In EDN and Transit every map key is a keyword. ' +
            'Errors share one shape: `{type, message, ...}`.',
      },
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'An access token from log-in or refresh' },
          apiKeyAuth: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'sk_<prefix>_<secret>',
            description: 'An API key of the organization the route names, acting with its role; only on the routes that list it',
          },
          oauth: {
            type: 'oauth2',
            description: 'An OAuth access token of an app a person connected (docs/oauth.md); only on the routes that list one of its scopes',
            flows: {
              authorizationCode: {
                authorizationUrl: '/oauth/auth',
                tokenUrl: '/oauth/token',
                refreshUrl: '/oauth/token',
                scopes: { ...options.scopes },
              },
            },
          },
        },
      },
    },
    // a route may document a richer body than it validates (the query endpoint: one schema per kind)
    transform: ({ schema, url, route }) => {
      const docs = (route.config as { docs?: { body?: unknown } } | undefined)?.docs;
      return { schema: docs?.body && schema ? { ...schema, body: docs.body } : schema, url } as never;
    },
    // the route schemas are JSON Schema 2020; the document is OpenAPI 3.0's dialect (openapi-30.ts)
    transformObject: (document) => ('openapiObject' in document ? toOpenApi30(document.openapiObject) : document.swaggerObject),
    // named schemas (added with addSchema and an $id) become components.schemas/<$id>
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
}

export async function registerOpenApiRoutes(app: FastifyInstance): Promise<void> {
  app.get('/openapi/openapi.json', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('application/json; charset=utf-8').send(JSON.stringify(app.swagger())),
  );
  await app.register(fastifySwaggerUi, {
    routePrefix: '/openapi',
    staticCSP: true,
    uiConfig: { deepLinking: true },
  });
}
