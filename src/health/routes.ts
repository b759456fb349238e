/**
 * Health: `GET /api/health` (the service and its database, for people and simple monitors),
 * and the orchestrator's probes `GET /api/health/live` and `GET /api/health/ready`.
 */
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

export const HealthLive = Type.Object({ status: Type.Literal('ok') }, { $id: 'health-live', additionalProperties: false });
export type HealthLive = Static<typeof HealthLive>;

export const HealthReady = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('draining'), Type.Literal('degraded')]),
    db: Type.Union([Type.Literal('ok'), Type.Literal('down')]),
    migrations: Type.Union([Type.Literal('applied'), Type.Literal('pending'), Type.Literal('unknown')]),
    storage: Type.Optional(
      Type.Union([Type.Literal('ok'), Type.Literal('down')], {
        description:
          'the file store (docs/files.md); told, never a reason to leave the load balancer: every instance shares the one store, and the rest of the product works without it',
      }),
    ),
  },
  { $id: 'health-ready', additionalProperties: false },
);
export type HealthReady = Static<typeof HealthReady>;

export interface HealthDeps {
  version: string;
  startedAt: number;
  /** true when the database answers within `timeoutMs` */
  pingDatabase(timeoutMs: number): Promise<boolean>;
  /** names of the migrations the code knows and the database has not applied */
  pendingMigrations(): Promise<string[]>;
  /** true from the moment the process was told to stop */
  draining(): boolean;
  /** the file store's check, once the storage module added it: true when it answers within `timeoutMs` */
  pingStorage?(timeoutMs: number): Promise<boolean>;
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
    inFlight ??= ping(timeoutMs)
      .then((answer) => {
        last = { at: now(), up: answer };
        return answer;
      })
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  };
  return Object.assign(ask, { known });
}

export function healthRoutes(deps: HealthDeps): RouteGroup {
  const pingDatabase = cachedPing(deps.pingDatabase);
  // the same cache as the ping: a flood of readiness probes costs one query per half second
  const migrationsApplied = cachedPing((timeoutMs) =>
    withTimeout(
      deps.pendingMigrations().then(
        (pending) => pending.length === 0,
        () => false,
      ),
      timeoutMs,
    ),
  );
  const pingStorage = cachedPing((timeoutMs) => deps.pingStorage?.(timeoutMs) ?? Promise.resolve(true));
  const ready = (reply: { code(status: number): unknown }, dbUp: boolean, applied: boolean, storageUp: boolean | undefined): HealthReady => {
    const status = deps.draining() ? 'draining' : dbUp && applied ? 'ok' : 'degraded';
    if (status !== 'ok') reply.code(503);
    return {
      status,
      db: dbUp ? 'ok' : 'down',
      migrations: !dbUp ? 'unknown' : applied ? 'applied' : 'pending',
      ...(deps.pingStorage && storageUp !== undefined ? { storage: storageUp ? 'ok' : 'down' } : {}),
    };
  };
  return {
    prefix: '/api',
    tags: ['Health'],
    auth: 'optional',
    routes: [
      route({
        method: 'GET',
        path: '/health',
        summary: 'Service health',
        description:
          '200 when the service and its database answer; 503 `degraded` when the database does not answer within 1 s. ' +
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
      route({
        method: 'GET',
        path: '/health/live',
        summary: 'Liveness probe',
        description:
          '200 while the process answers, also while it drains. A failing liveness probe restarts the process: ' +
          'it says nothing about the database, whose outage a restart does not fix.',
        schemas: { response: { 200: HealthLive } },
        handler: () => ({ status: 'ok' as const }),
      }),
      route({
        method: 'GET',
        path: '/health/ready',
        summary: 'Readiness probe',
        description:
          '200 when the database answers within 1 s, every migration is applied and the process is not stopping; ' +
          '503 `draining` from the moment it receives SIGTERM (so the load balancer stops sending before the listener closes), ' +
          '503 `degraded` otherwise. Answers are cached for 500 ms.',
        schemas: { response: { 200: HealthReady, 503: HealthReady } },
        handler({ reply }) {
          if (deps.draining()) return ready(reply, pingDatabase.known() ?? true, migrationsApplied.known() ?? true, pingStorage.known());
          const dbUp = pingDatabase.known();
          const applied = migrationsApplied.known();
          const storageUp = pingStorage.known();
          if (dbUp !== undefined && applied !== undefined && (storageUp !== undefined || !deps.pingStorage)) return ready(reply, dbUp, applied, storageUp);
          return Promise.all([pingDatabase(DB_PING_TIMEOUT_MS), migrationsApplied(DB_PING_TIMEOUT_MS), pingStorage(DB_PING_TIMEOUT_MS)]).then(
            ([up, done, stored]) => ready(reply, up, up && done, stored),
          );
        },
      }),
    ],
  };
}

function withTimeout(answer: Promise<boolean>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  return Promise.race([answer, timeout]).finally(() => clearTimeout(timer));
}
