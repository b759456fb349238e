/**
 * Health: `/api/health` and the liveness and readiness probes (docs/deployment.md).
 */
import type { Kysely } from 'kysely';
import { pendingMigrations } from '../db/migrate.js';
import { defineModule } from '../runtime/module.js';
import { HealthLive, HealthReady, healthRoutes, HealthStatus } from './routes.js';

export const healthModule = defineModule({
  name: 'health',
  start(ctx) {
    const { database } = ctx;
    let storage: ((timeoutMs: number) => Promise<boolean>) | undefined;
    return {
      services: {
        /** the file store's check (the storage module adds it): told in the readiness probe's `storage` */
        checkStorage(ping: (timeoutMs: number) => Promise<boolean>) {
          storage = ping;
        },
      },
      schemas: [HealthStatus, HealthLive, HealthReady],
      routeGroups: [
        healthRoutes({
          version: ctx.config.version,
          startedAt: ctx.startedAt,
          pingDatabase: (ms) => database.ping(ms),
          pendingMigrations: () => pendingMigrations(database.db as unknown as Kysely<unknown>),
          draining: ctx.draining,
          get pingStorage() {
            return storage;
          },
        }),
      ],
    };
  },
});
