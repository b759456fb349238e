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
/** How long one ping's answer serves later health checks: probes must not load the database. */
export const DB_PING_MAX_AGE_MS = 500;

/**
 * Shares one in-flight ping among concurrent checks and reuses its answer for `maxAgeMs`, so a
 * flood of probes costs the database one query per half second while a dead database still
 * shows within the second. `known()` is the answer while it is fresh: a check that finds one
 * answers at once, without a promise.
 */
export function cachedPing(ping: (timeoutMs: number) => Promise<boolean>, maxAgeMs = DB_PING_MAX_AGE_MS, now = () => Date.now()) {
  let last: { at: number; up: boolean } | undefined;
  let inFlight: Promise<boolean> | undefined;
  const known = (): boolean | undefined => (last && now() - last.at < maxAgeMs ? last.up : undefined);
  const ask = (timeoutMs: number): Promise<boolean> => {
    const up = known();
    if (up !== undefined) return Promise.resolve(up);
    inFlight ??= ping(timeoutMs).then((answer) => {
      last = { at: now(), up: answer };
      return answer;
    }).finally(() => { inFlight = undefined; });
    return inFlight;
  };
  return Object.assign(ask, { known });
}

export function healthRoutes(deps: HealthDeps): RouteGroup {
  const pingDatabase = cachedPing(deps.pingDatabase);
  return {
    prefix: '/api',
    tags: ['Health'],
    auth: 'optional',
    routes: [
      route({
        method: 'GET',
        path: '/health',
        summary: 'Service health',
        description: '200 when the service and its database answer; 503 `degraded` when the database does not answer within 1 s. ' +
          'The database is asked at most every 500 ms; concurrent checks share one ask.',
        schemas: { response: { 200: HealthStatus, 503: HealthStatus } },
        handler({ reply }) {
          const status = (dbUp: boolean): HealthStatus => {
            if (!dbUp) reply.code(503);
            return {
              status: dbUp ? 'ok' : 'degraded',
              db: dbUp ? 'ok' : 'down',
              version: deps.version,
              'uptime-s': Math.round((Date.now() - deps.startedAt) / 1000),
            };
          };
          const known = pingDatabase.known();
          return known === undefined ? pingDatabase(DB_PING_TIMEOUT_MS).then(status) : status(known);
        },
      }),
    ],
  };
}
