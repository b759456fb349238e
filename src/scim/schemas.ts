/** Named schemas of the SCIM token routes (docs/sso.md). The SCIM bodies themselves are SCIM's. */
import { Type, type Static } from 'typebox';

const DefaultRole = Type.Enum(['member', 'admin'], { description: 'the role of the members this directory creates (`member` when absent)' });

const tokenFields = {
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  'default-role': DefaultRole,
  'created-at': Type.String({ format: 'date-time' }),
  'last-used-at': Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
};

export const ScimToken = Type.Object(tokenFields, { $id: 'scim-token', additionalProperties: false, description: 'A SCIM token, without its secret' });
export const ScimTokens = Type.Object({ tokens: Type.Array(ScimToken) }, { $id: 'scim-tokens', additionalProperties: false });
export type ScimTokens = Static<typeof ScimTokens>;

export const CreatedScimToken = Type.Object(
  { ...tokenFields, token: Type.String({ description: 'the bearer token for the directory: shown this once, stored hashed' }) },
  { $id: 'created-scim-token', additionalProperties: false },
);
export type CreatedScimToken = Static<typeof CreatedScimToken>;

export const CreateScimToken = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' }), 'default-role': Type.Optional(DefaultRole) },
  { $id: 'create-scim-token', additionalProperties: false },
);
export type CreateScimToken = Static<typeof CreateScimToken>;

export const ScimTokenPath = Type.Object({ id: Type.String({ format: 'uuid' }), tokenId: Type.String({ format: 'uuid' }) }, { additionalProperties: false });

/** Any JSON object: SCIM bodies are checked by the SCIM service, which answers in SCIM's error shape. */
export const ScimBody = Type.Object({}, { additionalProperties: true });
export const ScimListQuery = Type.Object(
  {
    filter: Type.Optional(Type.String({ maxLength: 1000 })),
    startIndex: Type.Optional(Type.String({ maxLength: 12 })),
    count: Type.Optional(Type.String({ maxLength: 12 })),
  },
  { additionalProperties: true },
);
export const ScimUserPath = Type.Object({ userId: Type.String({ maxLength: 100 }) }, { additionalProperties: false });
/**
 * A SCIM document (application/scim+json): a resource, a list or an error. The route writes it as
 * JSON text itself (SCIM is JSON whatever the Accept header), so the pipeline's negotiation and
 * response check do not apply to it (Fastify runs no serialization hook for a string): the
 * handler's type is that text, the schema the document on the wire, for the OpenAPI document.
 */
export const ScimDocument = Type.Unsafe<string>({
  type: 'object',
  properties: { schemas: { type: 'array', items: { type: 'string' } } },
  required: ['schemas'],
  additionalProperties: true,
  description: 'a SCIM resource, list or error (application/scim+json)',
});

export const SCIM_SCHEMAS = [ScimToken, ScimTokens, CreatedScimToken, CreateScimToken];
