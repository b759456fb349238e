/**
 * Sample items (docs/sample-items.md): an organization's own records, listed, made, changed and
 * deleted through its routes and the query kind `sample-items/list`, each change audited and
 * sent to the organization's webhook endpoints as `sample-item.created|updated|deleted`; OAuth
 * apps reach them with the scopes `sample-items:read` and `sample-items:write`. Its `file` and
 * `image` fields, if it has any, are storage purposes `sample-items.<field>` (docs/files.md).
 */
import { MESSAGES_KEY } from '../i18n/messages.js';
import { orgsModule } from '../orgs/module.js';
import { resourceFilePurposes } from '../resources/files.js';
import { defineModule } from '../runtime/module.js';
import { OAUTH_SCOPES_KEY, type DeclaredScope } from '../shared/oauth-scopes.js';
import { storageModule } from '../storage/module.js';
import { STORAGE_PURPOSES_KEY } from '../storage/purposes.js';
import { WEBHOOK_EVENT_TYPES_KEY, type DeclaredWebhookEventType } from '../webhooks/module.js';
import { SAMPLE_ITEM_FIELDS } from './fields.js';
import { SAMPLE_ITEMS_MESSAGES } from './messages/index.js';
import { sampleItemQueries } from './queries.js';
import { SAMPLE_ITEM_WRITE_ROLE, sampleItemRoutes } from './routes.js';
import { SAMPLE_ITEM_SCHEMAS } from './schemas.js';
import { SampleItemService } from './service.js';

/** what OAuth apps may be granted, in the consent screen's words */
const SCOPES: DeclaredScope[] = [
  { scope: 'sample-items:read', words: "See your organizations' sample items" },
  { scope: 'sample-items:write', words: "Create, change and delete your organizations' sample items" },
];

const WEBHOOK_EVENTS: DeclaredWebhookEventType[] = ['created', 'updated', 'deleted'].map((verb) => ({ type: `sample-item.${verb}`, subject: 'sample-item' }));

export const sampleItemsModule = defineModule({
  name: 'sample-items',
  declares: {
    [MESSAGES_KEY]: [SAMPLE_ITEMS_MESSAGES],
    [WEBHOOK_EVENT_TYPES_KEY]: WEBHOOK_EVENTS,
    [OAUTH_SCOPES_KEY]: SCOPES,
    // a file field's uploads: the organization's, by the write role
    [STORAGE_PURPOSES_KEY]: resourceFilePurposes('sample-items', SAMPLE_ITEM_FIELDS, SAMPLE_ITEM_WRITE_ROLE),
  },
  start(ctx) {
    const sampleItems = new SampleItemService({ db: ctx.db, log: ctx.logs.logger('saas.sample-items'), links: ctx.use(storageModule).links });
    return {
      services: { sampleItems },
      schemas: SAMPLE_ITEM_SCHEMAS,
      routeGroups: [sampleItemRoutes(sampleItems, ctx.use(orgsModule).memberships)],
      queries: sampleItemQueries(sampleItems),
    };
  },
});
