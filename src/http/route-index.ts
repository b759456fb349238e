/**
 * Which methods the app's routes answer at a path: the `Allow` of a 405 for a request no route
 * matched (pipeline.ts). Built as routes are registered (routes.ts).
 */
import type { FastifyInstance } from 'fastify';
import { MAX_PARAM_LENGTH } from './route-docs.js';

/**
 * Each app's route paths as patterns, by method: what a 405's `Allow` lists. Bucketed by the
 * path's first two segments (`/api/account`), so that a request no route matched tests the
 * dozen patterns of its area, not every route's (a scan of all of them made an unknown API
 * path cost 1.6 times a health check); a route whose first two segments hold a parameter is
 * in the bucket every lookup also scans.
 */
interface RouteIndex {
  byArea: Map<string, Array<{ method: string; pattern: RegExp }>>;
  anyArea: Array<{ method: string; pattern: RegExp }>;
}
const routeIndexes = new WeakMap<FastifyInstance, RouteIndex>();

/**
 * A path's first two segments (`/api/account` of `/api/account/me`), the bucket it is looked up
 * in; a trailing slash is not a segment (`/api/` is in `/api`'s bucket, as the router matches it).
 */
function areaOf(given: string): string {
  const path = given.length > 1 && given.endsWith('/') ? given.slice(0, -1) : given;
  const second = path.indexOf('/', 1);
  if (second < 0) return path;
  const third = path.indexOf('/', second + 1);
  return third < 0 ? path : path.slice(0, third);
}

export function indexRoute(app: FastifyInstance, method: string, url: string): void {
  let index = routeIndexes.get(app);
  if (!index) routeIndexes.set(app, (index = { byArea: new Map(), anyArea: [] }));
  const source = url
    .split('/')
    .map((segment) => (segment.startsWith(':') ? `[^/]{1,${MAX_PARAM_LENGTH}}` : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  const entry = { method, pattern: new RegExp(`^${source}/?$`) };
  const area = areaOf(url);
  if (area.includes(':')) {
    index.anyArea.push(entry);
    return;
  }
  const bucket = index.byArea.get(area);
  if (bucket) bucket.push(entry);
  else index.byArea.set(area, [entry]);
}

/**
 * The methods the app's group routes answer at a decoded `path` (HEAD with GET), sorted; empty
 * when none does. Asked only for requests no route matched.
 */
export function allowedMethods(app: FastifyInstance, path: string): string[] {
  const index = routeIndexes.get(app);
  if (!index) return [];
  const methods = new Set<string>();
  for (const list of [index.byArea.get(areaOf(path)), index.anyArea]) {
    for (const { method, pattern } of list ?? []) {
      if (!pattern.test(path)) continue;
      methods.add(method);
      if (method === 'GET') methods.add('HEAD');
    }
  }
  return [...methods].sort();
}
