/**
 * A route group tests mount with `startSystem(db, env, { extraRouteGroups: [probeRoutes()] })`:
 * routes that accept any body or query and answer `{ok: true}`, for what the pipeline does
 * around a route (logging, redaction) apart from any feature's rules.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Type } from 'typebox';
import { route, type RouteGroup } from '../../src/http/routes.js';

const Anything = Type.Object({}, { additionalProperties: true });
const Ok = Type.Object({ ok: Type.Boolean() });

/** POST /api/probe/anything (any body and query), GET /api/probe/anything (any query), GET /api/probe/slow (answers after 500 ms) */
export function probeRoutes(): RouteGroup {
  return {
    prefix: '/api/probe',
    routes: [
      route({
        method: 'POST',
        path: '/anything',
        summary: 'Accepts anything',
        schemas: { body: Anything, querystring: Anything, response: { 200: Ok } },
        async handler() {
          return { ok: true };
        },
      }),
      route({
        method: 'GET',
        path: '/anything',
        summary: 'Reads anything',
        schemas: { querystring: Anything, response: { 200: Ok } },
        async handler() {
          return { ok: true };
        },
      }),
      route({
        method: 'GET',
        path: '/slow',
        summary: 'Answers after 500 ms',
        schemas: { response: { 200: Ok } },
        async handler() {
          await sleep(500);
          return { ok: true };
        },
      }),
    ],
  };
}
