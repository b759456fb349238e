/**
 * The query endpoint (`POST /api/cqrs/query`): dispatches on `query/kind` to the kinds every
 * module before it contributed. Listed after them in system.ts.
 */
import { ErrorBody } from '../http/errors.js';
import { QueryRegistry } from '../http/queries.js';
import { embeddedFirst } from '../http/schema-order.js';
import { orgsModule } from '../orgs/module.js';
import { defineModule } from '../runtime/module.js';
import { queryRoutes } from './routes.js';

export const queryModule = defineModule({
  name: 'query',
  start(ctx) {
    const { queries, schemas } = ctx.contributed;
    const registry = new QueryRegistry([...queries], embeddedFirst([ErrorBody, ...schemas]), { memberships: ctx.use(orgsModule).memberships });
    return { services: { registry }, routeGroups: [queryRoutes(registry)] };
  },
});
