/** The query kind `sample-items/list` (docs/sample-items.md): the list's page, for members and API keys. */
import { Type } from 'typebox';
import { unauthorized } from '../http/errors.js';
import { queryKind } from '../http/queries.js';
import { SampleItems } from './schemas.js';
import type { SampleItemService } from './service.js';

export function sampleItemQueries(sampleItems: SampleItemService) {
  return [
    queryKind({
      kind: 'sample-items/list',
      summary: "A page of the organization's sample items, newest first (as GET /api/orgs/:id/sample-items)",
      auth: 'required',
      orgRole: 'member',
      apiKeys: true,
      scopes: ['sample-items:read'],
      params: Type.Object(
        {
          'org-id': Type.String({ format: 'uuid' }),
          limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
          cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        },
        { additionalProperties: false },
      ),
      result: SampleItems,
      async run({ params, membership }) {
        if (!membership) throw unauthorized();
        return sampleItems.list(membership.organizationId, params);
      },
    }),
  ];
}
