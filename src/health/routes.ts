/** `GET /api/health`: liveness and readiness in one, with the database's state. */
import { Type, type Static } from 'typebox';
import { route, type RouteGroup } from '../http/routes.js';

export const HealthStatus = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
    db: Type.Union([Type.Literal('ok'), Type.Literal('down')]),
    version: Type.String(),
    'uptime-s': Type.Number({ minimum: 0 }),
  },
  { $id: 'health', additionalProperties: false },
);
export type HealthStatus = Static<typeof HealthStatus>;

export interface HealthDeps {
  version: string;
  startedAt: number;
  /** true when the database answers within `timeoutMs` */
  pingDatabase(timeoutMs: number): Promise<boolean>;
}

/** How long the database gets to answer before the service reports itself degraded. */
export const DB_PING_TIMEOUT_MS = 1000;

export function healthRoutes(deps: HealthDeps): RouteGroup {
  return {
    prefix: '/api',
    tags: ['Health'],
    auth: 'optional',
    routes: [
      route({
        method: 'GET',
        path: '/health',
        summary: 'Service health',
        description: '200 when the service and its database answer; 503 `degraded` when the database does not answer within 1 s.',
        schemas: { response: { 200: HealthStatus, 503: HealthStatus } },
        async handler({ reply }) {
          const dbUp = await deps.pingDatabase(DB_PING_TIMEOUT_MS);
          if (!dbUp) reply.code(503);
          return {
            status: dbUp ? 'ok' : 'degraded',
            db: dbUp ? 'ok' : 'down',
            version: deps.version,
            'uptime-s': Math.round((Date.now() - deps.startedAt) / 1000),
          } as const;
        },
      }),
    ],
  };
}
